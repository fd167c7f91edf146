/**
 * A fake Elastic Security deployment for tests: a Kibana (detection engine rules API, alerting rule
 * read) and an Elasticsearch (ES|QL `_query`, index create/delete, `_bulk`, `_search`) on loopback,
 * sharing one state. It implements the slice of the APIs detflow's `elastic` adapter uses, as
 * Elastic documents them, and refuses any request that departs from it with the vendor's error
 * shape and a message naming what departed.
 *
 * References (behaviour and shapes, written from the documentation; nothing copied):
 * - Kibana detection engine API, version 2023-10-31: POST/PUT/PATCH/GET/DELETE
 *   /api/detection_engine/rules, GET /api/detection_engine/rules/_find (page, per_page, filter on
 *   alert.attributes.*, sort_field, sort_order; answer page/perPage/total/data) — elastic/kibana
 *   x-pack/solutions/security/plugins/security_solution/common/api/detection_engine/rule_management/
 *   crud/*_route.schema.yaml and find_rules/find_rules_route.schema.yaml; request bodies in
 *   ./kibana-schemas.ts. Spaces: /s/{space_id}/api/… . `kbn-xsrf` required on every non-GET request;
 *   `elastic-api-version` must be 2023-10-31 when given. Errors `{ statusCode, error, message }`
 *   (HTTP layer) and `{ message, status_code }` (detection engine: 404 not found, 409 exists).
 * - Kibana alerting API: GET /api/alerting/rule/{id} (`monitoring.run.history`, `last_run`) —
 *   https://www.elastic.co/docs/api/doc/kibana/operation/operation-get-alerting-rule-id
 * - Elasticsearch: POST /_query (ES|QL; body query, filter, columnar, locale, params, profile;
 *   answer columns/values) — https://www.elastic.co/docs/api/doc/elasticsearch/operation/operation-esql-query ;
 *   PUT /{index} (create index), DELETE /{index}, POST /{index}/_bulk (NDJSON terminated by a
 *   newline, refresh), POST /{index}/_search; every answer carries `X-Elastic-Product:
 *   Elasticsearch`; content types application/json, application/x-ndjson and the compatibility
 *   types application/vnd.elasticsearch+json|x-ndjson; compatible-with=8|9; other types 406.
 *   Errors `{ error: { root_cause, type, reason }, status }`. Auth `Authorization: ApiKey
 *   <base64 id:api_key>`, 401 with `WWW-Authenticate`.
 * - Alerts of a space: index `.alerts-security.alerts-<space>`, field `kibana.alert.rule.rule_id`.
 *
 * Faults: `fault()` plays back a status (429/503 with Retry-After, 500, 401 …) or a delay on
 * matching requests; `expireCredentials()` answers 401 to everything.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { ELASTIC_ECS } from '../../../sigma/pipelines';
import type { Fault, FakeObject, FakeSiem, ProcessEvent, RecordedRequest } from '../fake-siem';
import { aggregate, compileQuery, EsRequestError, indexDocument, readMappings, type StoredIndex } from './documents';
import { EsqlError, parseEsql, resolveIndices, runEsql, type FieldType } from './esql';
import { describeIssues, FindRulesQuery, RuleCreateProps, RuleLookupQuery, RulePatchProps, RuleUpdateProps } from './kibana-schemas';

export const SYSMON_INDEX = 'logs-windows.sysmon_operational-default';
const API_VERSION = '2023-10-31';

export interface FakeElasticOptions {
  /** Serve https with this key and certificate (PEM); `ca` is what `connection()` gives as `ca_bundle`. */
  readonly tls?: { readonly key: string; readonly cert: string; readonly ca?: string };
  /** The Kibana space `connection()` names (default `default`). */
  readonly space?: string;
}

export interface FakeRun {
  readonly time: Date;
  readonly durationMs: number;
  readonly success: boolean;
  readonly message?: string;
}

export interface FakeElastic extends FakeSiem {
  readonly kibanaUrl: string;
  readonly elasticsearchUrl: string;
  /** `Authorization` header value the fake accepts. */
  readonly authorization: string;
  /** Records runs of a rule (by name) in the alerting framework's monitoring and its execution summary. */
  recordRuns(name: string, runs: readonly FakeRun[]): void;
  /** The stored rule (as Kibana would answer it), by name. */
  rule(name: string): Record<string, unknown> | undefined;
  /** Documents into any index (created with dynamic mapping when missing). */
  addDocuments(index: string, docs: readonly Record<string, unknown>[]): void;
  indexNames(): string[];
  /** Every ES|QL request body answered with 200, in order. */
  esqlRequests(): Array<{ query: string; filter?: unknown }>;
}

type StoredRule = Record<string, unknown> & { id: string; rule_id: string; runs: FakeRun[] };

/** ECS types of the fields the sysmon data stream's index template maps (the integration's ECS mapping). */
function ecsMapping(): Map<string, FieldType> {
  const m = new Map<string, FieldType>([
    ['@timestamp', 'date'],
    ['event.category', 'keyword'],
    ['event.type', 'keyword'],
    ['event.kind', 'keyword'],
    ['process.name', 'keyword'],
    ['data_stream.dataset', 'keyword'],
  ]);
  const special: Record<string, FieldType> = {
    'source.ip': 'ip',
    'destination.ip': 'ip',
    'source.port': 'long',
    'destination.port': 'long',
    'process.pid': 'long',
    'process.parent.pid': 'long',
    'dll.code_signature.signed': 'boolean',
  };
  for (const f of Object.values(ELASTIC_ECS.fields)) m.set(f, special[f] ?? 'keyword');
  return m;
}

export async function startFakeElastic(options: FakeElasticOptions = {}): Promise<FakeElastic> {
  const space = options.space ?? 'default';
  const keyId = randomBytes(8).toString('hex');
  const keySecret = randomBytes(16).toString('hex');
  const encoded = Buffer.from(`${keyId}:${keySecret}`).toString('base64');
  const authorization = `ApiKey ${encoded}`;
  const spaces = new Set(['default', space]);
  const rules = new Map<string, Map<string, StoredRule>>([...spaces].map((s) => [s, new Map()]));
  const indices = new Map<string, StoredIndex>();
  const recorded: Array<RecordedRequest & { write: boolean }> = [];
  const esqlLog: Array<{ query: string; filter?: unknown }> = [];
  const faults: Array<Fault & { left: number }> = [];
  let expired = false;

  const createIndex = (name: string, mapping = new Map<string, FieldType>(), stringsAsKeyword = false): StoredIndex => {
    const idx: StoredIndex = { name, mapping, stringsAsKeyword, docs: [] };
    indices.set(name, idx);
    return idx;
  };
  createIndex(SYSMON_INDEX, ecsMapping(), true);
  for (const s of spaces)
    createIndex(
      `.alerts-security.alerts-${s}`,
      new Map<string, FieldType>([
        ['@timestamp', 'date'],
        ['kibana.alert.rule.rule_id', 'keyword'],
        ['kibana.alert.rule.uuid', 'keyword'],
        ['kibana.alert.rule.name', 'keyword'],
        ['kibana.space_ids', 'keyword'],
      ]),
      true,
    );

  const addDocs = (idx: StoredIndex, docs: readonly Record<string, unknown>[], visibleAt = 0) => {
    for (const source of docs) idx.docs.push({ id: randomBytes(10).toString('base64url'), version: 1, fields: indexDocument(idx, source), visibleAt, source });
  };
  const findRule = (name: string): StoredRule | undefined => {
    for (const m of rules.values()) if (m.has(name)) return m.get(name);
    return undefined;
  };

  // --- HTTP plumbing ---------------------------------------------------------------------------

  type Answer = { status: number; body: unknown; headers?: Record<string, string> };
  type Handler = (req: http.IncomingMessage, url: URL, body: Buffer) => Promise<Answer> | Answer;

  const serve = (side: 'kibana' | 'es', handler: Handler) => async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const at = new Date();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    let answer: Answer;
    const fault = faults.find((f) => f.left > 0 && (!f.match || f.match.test(`${method} ${url.pathname}`)));
    if (fault) fault.left--;
    if (fault?.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
    if (fault?.status) answer = faultAnswer(side, fault.status, fault.retryAfterSeconds);
    else if (expired || req.headers.authorization !== authorization) answer = unauthorized(side);
    else {
      try {
        answer = await handler(req, url, body);
      } catch (err) {
        if (err instanceof EsRequestError) answer = esError(err.status, err.type, err.message);
        else if (err instanceof EsqlError) answer = esError(400, err.type, err.message);
        else answer = side === 'es' ? esError(500, 'exception', String(err)) : kibanaError(500, String(err));
      }
    }
    const write = side === 'kibana' && ['POST', 'PUT', 'PATCH'].includes(method) && url.pathname.endsWith('/api/detection_engine/rules') && answer.status < 300;
    recorded.push({ method, path: url.pathname, status: answer.status, at, write });
    const headers: Record<string, string> = { 'content-type': 'application/json', ...answer.headers };
    if (side === 'es') {
      headers['x-elastic-product'] = 'Elasticsearch';
      if (/compatible-with=/.test(String(req.headers.accept ?? ''))) headers['content-type'] = 'application/vnd.elasticsearch+json;compatible-with=9';
    }
    if (res.destroyed) return;
    res.writeHead(answer.status, headers);
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  };

  const kibanaError = (status: number, message: string, headers?: Record<string, string>): Answer => ({
    status,
    body: { statusCode: status, error: http.STATUS_CODES[status] ?? 'Error', message },
    ...(headers ? { headers } : {}),
  });
  const detectionError = (status: number, message: string): Answer => ({ status, body: { message, status_code: status } });
  const esError = (status: number, type: string, reason: string, headers?: Record<string, string>): Answer => ({
    status,
    body: { error: { root_cause: [{ type, reason }], type, reason }, status },
    ...(headers ? { headers } : {}),
  });
  const unauthorized = (side: 'kibana' | 'es'): Answer => {
    const reason = 'unable to authenticate with provided credentials and anonymous access is not allowed for this request';
    return side === 'es'
      ? esError(401, 'security_exception', reason, { 'www-authenticate': 'ApiKey, Basic realm="security", charset="UTF-8"' })
      : kibanaError(401, `[security_exception]: ${reason}`);
  };
  const faultAnswer = (side: 'kibana' | 'es', status: number, retryAfter?: number): Answer => {
    if (status === 401) return unauthorized(side);
    const headers = retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : undefined;
    if (side === 'kibana') return kibanaError(status, status === 429 ? 'Too Many Requests' : status >= 500 ? 'An internal server error occurred.' : 'Fault', headers);
    const type = status === 429 ? 'es_rejected_execution_exception' : status === 503 ? 'cluster_block_exception' : 'internal_server_error';
    return esError(status, type, `fault played back with status ${status}`, headers);
  };

  const readJson = (body: Buffer, side: 'kibana' | 'es'): unknown => {
    try {
      return JSON.parse(body.toString('utf8'));
    } catch {
      if (side === 'kibana') throw Object.assign(new Error('Invalid request payload JSON format'), { kibana: 400 });
      throw new EsRequestError(400, 'x_content_parse_exception', 'request body is not valid JSON');
    }
  };

  // --- Kibana ----------------------------------------------------------------------------------

  const ruleResponse = (r: StoredRule): Record<string, unknown> => {
    const { runs, ...rest } = r;
    const last = runs[runs.length - 1];
    return last
      ? {
          ...rest,
          execution_summary: {
            last_execution: {
              date: last.time.toISOString(),
              status: last.success ? 'succeeded' : 'failed',
              status_order: last.success ? 0 : 30,
              message: last.message ?? (last.success ? 'Rule execution completed successfully' : 'Rule execution failed'),
              metrics: { total_search_duration_ms: last.durationMs },
            },
          },
        }
      : rest;
  };

  const defaults = (body: Record<string, unknown>) => ({
    enabled: true,
    tags: [],
    interval: '5m',
    from: 'now-6m',
    to: 'now',
    max_signals: 100,
    version: 1,
    threat: [],
    author: [],
    false_positives: [],
    references: [],
    risk_score_mapping: [],
    severity_mapping: [],
    exceptions_list: [],
    actions: [],
    related_integrations: [],
    required_fields: [],
    setup: '',
    output_index: '',
    ...(body.type === 'query' ? { language: 'kuery', query: '' } : {}),
    ...body,
  });

  const validEsql = (body: Record<string, unknown>): Answer | null => {
    if (body.type !== 'esql' || typeof body.query !== 'string') return null;
    try {
      parseEsql(body.query);
      return null;
    } catch (err) {
      return kibanaError(400, `[request body]: query: invalid ES|QL: ${(err as Error).message}`);
    }
  };

  const kibana: Handler = (req, url, body) => {
    const method = req.method ?? 'GET';
    let path = url.pathname;
    let sp = 'default';
    const s = /^\/s\/([^/]+)(\/.*)$/.exec(path);
    if (s) {
      sp = decodeURIComponent(s[1]!);
      path = s[2]!;
    }
    const store = rules.get(sp);
    if (!store) return kibanaError(404, 'Not Found');
    const version = req.headers['elastic-api-version'];
    if (version !== undefined && version !== API_VERSION) return kibanaError(400, `Invalid version. Received "${String(version)}", expected "${API_VERSION}"`);
    if (method !== 'GET' && req.headers['kbn-xsrf'] === undefined) return kibanaError(400, 'Request must contain a kbn-xsrf header.');
    let json: Record<string, unknown> = {};
    if (['POST', 'PUT', 'PATCH'].includes(method)) {
      const type = String(req.headers['content-type'] ?? '');
      if (!/^application\/json(;|$)/i.test(type)) return kibanaError(415, `Unsupported Media Type: expected application/json, got [${type}]`);
      try {
        json = readJson(body, 'kibana') as Record<string, unknown>;
      } catch {
        return kibanaError(400, 'Invalid request payload JSON format');
      }
    } else if (body.length > 0) return kibanaError(400, `[request body]: a ${method} request takes no body`);
    const query = Object.fromEntries(url.searchParams.entries());
    const now = new Date().toISOString();

    if (path === '/api/detection_engine/rules/_find' && method === 'GET') {
      const all = url.searchParams.getAll('fields');
      const q = FindRulesQuery.safeParse({ ...query, ...(all.length > 1 ? { fields: all } : {}) });
      if (!q.success) return kibanaError(400, describeIssues('request query', q.error));
      let list = [...store.values()];
      if (q.data.filter !== undefined) {
        const predicate = kqlFilter(q.data.filter);
        if (typeof predicate === 'string') return kibanaError(400, predicate);
        list = list.filter(predicate);
      }
      const field = q.data.sort_field;
      if (field) {
        const key = { createdAt: 'created_at', updatedAt: 'updated_at', riskScore: 'risk_score' }[field as string] ?? field;
        list.sort((a, b) => (String(a[key]) < String(b[key]) ? -1 : String(a[key]) > String(b[key]) ? 1 : 0) * (q.data.sort_order === 'desc' ? -1 : 1));
      }
      const page = q.data.page ?? 1;
      const perPage = q.data.per_page ?? 20;
      if (page * perPage > 10_000) return kibanaError(400, 'page * per_page must be at most 10000');
      return { status: 200, body: { page, perPage, total: list.length, data: list.slice((page - 1) * perPage, page * perPage).map(ruleResponse) } };
    }

    const alerting = /^\/api\/alerting\/rule\/([^/]+)$/.exec(path);
    if (alerting && method === 'GET') {
      const id = decodeURIComponent(alerting[1]!);
      const r = [...store.values()].find((x) => x.id === id);
      if (!r) return kibanaError(404, `Saved object [alert/${id}] not found`);
      const history = r.runs
        .slice(-20)
        .map((run) => ({ success: run.success, timestamp: run.time.getTime(), duration: run.durationMs, outcome: run.success ? 'succeeded' : 'failed' }));
      const last = r.runs[r.runs.length - 1];
      return {
        status: 200,
        body: {
          id: r.id,
          name: r.name,
          enabled: r.enabled,
          consumer: 'siem',
          rule_type_id: r.type === 'esql' ? 'siem.esqlRule' : 'siem.queryRule',
          schedule: { interval: r.interval },
          tags: r.tags,
          created_at: r.created_at,
          updated_at: r.updated_at,
          execution_status: { status: last ? (last.success ? 'ok' : 'error') : 'pending', last_execution_date: last?.time.toISOString() ?? r.created_at },
          ...(last ? { last_run: { outcome: last.success ? 'succeeded' : 'failed', outcome_msg: last.message ? [last.message] : null, alerts_count: {} } } : {}),
          monitoring: {
            run: {
              history,
              calculated_metrics: { success_ratio: history.length ? history.filter((h) => h.success).length / history.length : 0 },
              last_run: { timestamp: last?.time.toISOString() ?? r.created_at, metrics: { duration: last?.durationMs ?? 0 } },
            },
          },
        },
      };
    }

    if (path !== '/api/detection_engine/rules') return kibanaError(404, 'Not Found');
    const lookup = (): StoredRule | Answer => {
      const q = RuleLookupQuery.safeParse(query);
      if (!q.success) return kibanaError(400, describeIssues('request query', q.error));
      if (q.data.id === undefined && q.data.rule_id === undefined) return detectionError(400, 'either "id" or "rule_id" must be set');
      const r = q.data.rule_id !== undefined ? store.get(q.data.rule_id) : [...store.values()].find((x) => x.id === q.data.id);
      return r ?? detectionError(404, q.data.rule_id !== undefined ? `rule_id: "${q.data.rule_id}" not found` : `id: "${q.data.id}" not found`);
    };
    const byBody = (b: { id?: string | undefined; rule_id?: string | undefined }): StoredRule | Answer => {
      if (b.id === undefined && b.rule_id === undefined) return detectionError(400, 'either "id" or "rule_id" must be set');
      const r = b.rule_id !== undefined ? store.get(b.rule_id) : [...store.values()].find((x) => x.id === b.id);
      return r ?? detectionError(404, b.rule_id !== undefined ? `rule_id: "${b.rule_id}" not found` : `id: "${b.id}" not found`);
    };
    const isAnswer = (x: StoredRule | Answer): x is Answer => 'status' in x && !('rule_id' in x);

    switch (method) {
      case 'GET': {
        const r = lookup();
        return isAnswer(r) ? r : { status: 200, body: ruleResponse(r) };
      }
      case 'DELETE': {
        const r = lookup();
        if (isAnswer(r)) return r;
        store.delete(r.rule_id);
        return { status: 200, body: ruleResponse(r) };
      }
      case 'POST': {
        const p = RuleCreateProps.safeParse(json);
        if (!p.success) return kibanaError(400, describeIssues('request body', p.error));
        const bad = validEsql(p.data);
        if (bad) return bad;
        const ruleId = p.data.rule_id ?? randomUUID();
        if (store.has(ruleId)) return detectionError(409, `rule_id: "${ruleId}" already exists`);
        const r: StoredRule = {
          ...defaults(p.data),
          rule_id: ruleId,
          id: randomUUID(),
          immutable: false,
          rule_source: { type: 'internal' },
          created_at: now,
          updated_at: now,
          created_by: 'detflow-fake',
          updated_by: 'detflow-fake',
          revision: 0,
          runs: [],
        };
        store.set(ruleId, r);
        return { status: 200, body: ruleResponse(r) };
      }
      case 'PUT': {
        const p = RuleUpdateProps.safeParse(json);
        if (!p.success) return kibanaError(400, describeIssues('request body', p.error));
        const bad = validEsql(p.data);
        if (bad) return bad;
        const r = byBody(p.data);
        if (isAnswer(r)) return r;
        const next: StoredRule = {
          ...defaults(p.data),
          rule_id: r.rule_id,
          id: r.id,
          immutable: false,
          rule_source: { type: 'internal' },
          created_at: r.created_at,
          created_by: r.created_by,
          updated_at: now,
          updated_by: 'detflow-fake',
          revision: Number(r.revision) + 1,
          runs: r.runs,
        };
        store.set(r.rule_id, next);
        return { status: 200, body: ruleResponse(next) };
      }
      case 'PATCH': {
        const p = RulePatchProps.safeParse(json);
        if (!p.success) return kibanaError(400, describeIssues('request body', p.error));
        const r = byBody(p.data);
        if (isAnswer(r)) return r;
        if (p.data.type !== undefined && p.data.type !== r.type) return detectionError(400, `Cannot change rule type from ${String(r.type)} to ${p.data.type} with PATCH`);
        const { id: _id, rule_id: _ruleId, ...changes } = p.data;
        const next: StoredRule = { ...r, ...changes, updated_at: now, revision: Number(r.revision) + (Object.keys(changes).some((k) => k !== 'enabled') ? 1 : 0) };
        const bad = validEsql(next);
        if (bad) return bad;
        store.set(r.rule_id, next);
        return { status: 200, body: ruleResponse(next) };
      }
      default:
        return kibanaError(404, 'Not Found');
    }
  };

  // --- Elasticsearch ---------------------------------------------------------------------------

  const JSON_TYPE = /^application\/(json|vnd\.elasticsearch\+json\s*;\s*compatible-with=(\d+))\s*(;\s*charset=utf-8)?$/i;
  const NDJSON_TYPE = /^application\/(x-ndjson|json|vnd\.elasticsearch\+(?:x-ndjson|json)\s*;\s*compatible-with=(\d+))\s*(;\s*charset=utf-8)?$/i;
  const checkType = (req: http.IncomingMessage, ndjson: boolean) => {
    const type = String(req.headers['content-type'] ?? '');
    const m = (ndjson ? NDJSON_TYPE : JSON_TYPE).exec(type);
    if (!m) throw new EsRequestError(406, 'media_type_header_exception', `Content-Type header [${type}] is not supported`);
    if (m[2] !== undefined && !['8', '9'].includes(m[2]))
      throw new EsRequestError(400, 'media_type_header_exception', `Content-Type version must be either version 8 or 9, but found ${m[2]}`);
  };
  const checkParams = (url: URL, allowed: readonly string[]) => {
    for (const k of url.searchParams.keys())
      if (!allowed.includes(k)) throw new EsRequestError(400, 'illegal_argument_exception', `request [${url.pathname}] contains unrecognized parameter: [${k}]`);
  };
  const strictKeys = (what: string, body: Record<string, unknown>, allowed: readonly string[]) => {
    for (const k of Object.keys(body)) if (!allowed.includes(k)) throw new EsRequestError(400, 'x_content_parse_exception', `[1:2] [${what}] unknown field [${k}]`);
  };
  const validIndexName = (name: string) => {
    if (name !== name.toLowerCase()) throw new EsRequestError(400, 'invalid_index_name_exception', `Invalid index name [${name}], must be lowercase`);
    if (/[\\/*?"<>| ,#:]/.test(name) || /^[-_+]/.test(name) || name === '.' || name === '..')
      throw new EsRequestError(
        400,
        'invalid_index_name_exception',
        `Invalid index name [${name}], must not contain the characters [\\, /, *, ?, ", <, >, |,  , ,, #, :] or start with -, _, +`,
      );
  };

  const es: Handler = (req, url, body) => {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (path === '/_query') {
      if (method !== 'POST') throw new EsRequestError(405, 'illegal_argument_exception', `Incorrect HTTP method for uri [${path}] and method [${method}], allowed: [POST]`);
      checkParams(url, ['format', 'drop_null_columns', 'error_trace']);
      if (url.searchParams.has('format') && url.searchParams.get('format') !== 'json')
        throw new EsRequestError(400, 'illegal_argument_exception', 'this fake answers format json only');
      checkType(req, false);
      const b = readJson(body, 'es') as Record<string, unknown>;
      strictKeys('esql/query', b, ['query', 'filter', 'columnar', 'locale', 'params', 'profile', 'include_ccs_metadata']);
      if (typeof b.query !== 'string') throw new EsRequestError(400, 'x_content_parse_exception', '[esql/query] required field [query] is missing');
      if (b.columnar === true) throw new EsRequestError(400, 'illegal_argument_exception', 'this fake answers row-oriented values only (columnar false)');
      const parsed = parseEsql(b.query);
      const names = resolveIndices(parsed.sources, [...indices.keys()]);
      const read = names.map((n) => indices.get(n)!);
      const mapping = new Map<string, FieldType>();
      for (const idx of read) for (const [f, t] of idx.mapping) mapping.set(f, t);
      const filter = b.filter === undefined ? () => true : compileQuery(b.filter, mapping);
      const now = Date.now();
      const answer = runEsql(
        parsed,
        read.map((idx) => ({ name: idx.name, mapping: idx.mapping, docs: idx.docs.filter((d) => d.visibleAt <= now) })),
        filter,
      );
      esqlLog.push({ query: b.query, ...(b.filter !== undefined ? { filter: b.filter } : {}) });
      return { status: 200, body: { took: 1, is_partial: false, ...answer } };
    }
    const bulk = /^\/([^/_][^/]*)\/_bulk$/.exec(path);
    if (bulk) {
      if (method !== 'POST' && method !== 'PUT')
        throw new EsRequestError(405, 'illegal_argument_exception', `Incorrect HTTP method for uri [${path}] and method [${method}], allowed: [POST, PUT]`);
      checkParams(url, ['refresh', 'timeout', 'wait_for_active_shards', 'pipeline', 'routing', 'require_alias']);
      const refresh = url.searchParams.get('refresh');
      if (refresh !== null && !['', 'true', 'false', 'wait_for'].includes(refresh))
        throw new EsRequestError(400, 'illegal_argument_exception', `Unknown value for refresh: [${refresh}].`);
      checkType(req, true);
      const text = body.toString('utf8');
      if (!text.endsWith('\n')) throw new EsRequestError(400, 'illegal_argument_exception', 'The bulk request must be terminated by a newline [\\n]');
      const name = decodeURIComponent(bulk[1]!);
      validIndexName(name);
      const idx = indices.get(name) ?? createIndex(name);
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      const items: unknown[] = [];
      let errors = false;
      const visibleAt = refresh === '' || refresh === 'true' || refresh === 'wait_for' ? 0 : Date.now() + 1000;
      for (let i = 0; i < lines.length; i += 2) {
        let action: Record<string, Record<string, unknown>>;
        let source: Record<string, unknown>;
        try {
          action = JSON.parse(lines[i]!) as typeof action;
          source = JSON.parse(lines[i + 1] ?? '') as typeof source;
        } catch {
          throw new EsRequestError(400, 'x_content_parse_exception', `Malformed action/metadata line [${i + 1}]`);
        }
        const [op, meta] = Object.entries(action)[0] ?? [];
        if (op !== 'index' && op !== 'create')
          throw new EsRequestError(
            400,
            'illegal_argument_exception',
            `Malformed action/metadata line [${i + 1}], this fake implements index and create only, got [${String(op)}]`,
          );
        if (meta?._index !== undefined && meta._index !== name)
          throw new EsRequestError(400, 'illegal_argument_exception', 'this fake indexes into the index of the path only');
        try {
          const fields = indexDocument(idx, source);
          const id = typeof meta?._id === 'string' ? meta._id : randomBytes(10).toString('base64url');
          idx.docs.push({ id, version: 1, fields, visibleAt, source });
          items.push({ [op]: { _index: name, _id: id, _version: 1, result: 'created', status: 201, _seq_no: idx.docs.length - 1, _primary_term: 1 } });
        } catch (err) {
          if (!(err instanceof EsRequestError)) throw err;
          errors = true;
          items.push({ [op]: { _index: name, status: err.status, error: { type: err.type, reason: err.message } } });
        }
      }
      return { status: 200, body: { took: 1, errors, items } };
    }
    const search = /^\/([^/_][^/]*)\/_search$/.exec(path);
    if (search) {
      if (method !== 'POST' && method !== 'GET')
        throw new EsRequestError(405, 'illegal_argument_exception', `Incorrect HTTP method for uri [${path}] and method [${method}], allowed: [POST, GET]`);
      checkParams(url, ['ignore_unavailable', 'allow_no_indices']);
      const b = body.length > 0 ? (checkType(req, false), readJson(body, 'es') as Record<string, unknown>) : {};
      strictKeys('search', b, ['size', 'from', 'track_total_hits', 'query', 'aggs', 'aggregations', 'sort', '_source']);
      const pattern = decodeURIComponent(search[1]!);
      let read: StoredIndex[];
      try {
        read = resolveIndices(pattern.split(','), [...indices.keys()]).map((n) => indices.get(n)!);
      } catch {
        if (pattern.includes('*')) read = [];
        else throw new EsRequestError(404, 'index_not_found_exception', `no such index [${pattern}]`);
      }
      const mapping = new Map<string, FieldType>();
      for (const idx of read) for (const [f, t] of idx.mapping) mapping.set(f, t);
      const predicate = b.query === undefined ? () => true : compileQuery(b.query, mapping);
      const now = Date.now();
      const hits = read.flatMap((idx) => idx.docs.filter((d) => d.visibleAt <= now && predicate(d.fields)).map((d) => ({ idx, d })));
      const size = b.size === undefined ? 10 : Number(b.size);
      const aggs = b.aggs ?? b.aggregations;
      return {
        status: 200,
        body: {
          took: 1,
          timed_out: false,
          _shards: { total: read.length, successful: read.length, skipped: 0, failed: 0 },
          hits: {
            total: { value: hits.length, relation: 'eq' },
            max_score: null,
            hits: hits.slice(0, size).map(({ idx, d }) => ({ _index: idx.name, _id: d.id, _score: null, _source: d.source })),
          },
          ...(aggs !== undefined
            ? {
                aggregations: aggregate(
                  aggs,
                  hits.map(({ d }) => d.fields),
                  mapping,
                ),
              }
            : {}),
        },
      };
    }
    const index = /^\/([^/_][^/]*)$/.exec(path);
    if (index) {
      const name = decodeURIComponent(index[1]!);
      if (method === 'PUT') {
        checkParams(url, ['timeout', 'master_timeout', 'wait_for_active_shards']);
        validIndexName(name);
        if (indices.has(name)) throw new EsRequestError(400, 'resource_already_exists_exception', `index [${name}/${randomBytes(11).toString('base64url')}] already exists`);
        const b = body.length > 0 ? (checkType(req, false), readJson(body, 'es') as Record<string, unknown>) : {};
        strictKeys('create_index', b, ['mappings', 'settings', 'aliases']);
        const { mapping, stringsAsKeyword } = readMappings(b.mappings);
        createIndex(name, mapping, stringsAsKeyword);
        return { status: 200, body: { acknowledged: true, shards_acknowledged: true, index: name } };
      }
      if (method === 'DELETE') {
        checkParams(url, ['timeout', 'master_timeout', 'ignore_unavailable']);
        if (/[*,]/.test(name) || name === '_all') throw new EsRequestError(400, 'illegal_argument_exception', 'Wildcard expressions or all indices are not allowed');
        if (!indices.has(name)) throw new EsRequestError(404, 'index_not_found_exception', `no such index [${name}]`);
        indices.delete(name);
        return { status: 200, body: { acknowledged: true } };
      }
    }
    throw new EsRequestError(400, 'illegal_argument_exception', `no handler found for uri [${path}] and method [${method}]`);
  };

  // --- servers ---------------------------------------------------------------------------------

  const start = async (handler: ReturnType<typeof serve>) => {
    const server = options.tls
      ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, (q, s) => void handler(q, s))
      : http.createServer((q, s) => void handler(q, s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { server, url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}` };
  };
  const kibanaServer = await start(serve('kibana', kibana));
  const esServer = await start(serve('es', es));

  return {
    kind: 'elastic',
    kibanaUrl: kibanaServer.url,
    elasticsearchUrl: esServer.url,
    authorization,
    connection() {
      return {
        kibana_url: kibanaServer.url,
        elasticsearch_url: esServer.url,
        api_key: encoded,
        ...(space !== 'default' ? { space } : {}),
        ...(options.tls?.ca ? { ca_bundle: options.tls.ca } : {}),
      };
    },
    addProcessEvents(events: readonly ProcessEvent[]) {
      addDocs(
        indices.get(SYSMON_INDEX)!,
        events.map((e) => ({
          '@timestamp': e.time.toISOString(),
          event: { category: ['process'], type: ['start'], kind: 'event', code: '1' },
          data_stream: { dataset: 'windows.sysmon_operational' },
          process: {
            executable: e.image,
            name: e.image.split('\\').pop(),
            command_line: e.commandLine,
            ...(e.parentImage ? { parent: { executable: e.parentImage } } : {}),
          },
          ...(e.user ? { user: { name: e.user } } : {}),
          ...(e.host ? { host: { name: e.host } } : {}),
        })),
      );
    },
    addDocuments(name, docs) {
      addDocs(indices.get(name) ?? createIndex(name), docs);
    },
    objects(): FakeObject[] {
      return [...rules.values()].flatMap((m) =>
        [...m.values()].map((r) => ({ name: r.rule_id, query: String(r.query ?? ''), enabled: r.enabled === true, description: String(r.description) })),
      );
    },
    rule(name) {
      const r = findRule(name);
      return r ? ruleResponse(r) : undefined;
    },
    editQuery(name, query) {
      const r = findRule(name);
      if (!r) throw new Error(`no rule ${name}`);
      Object.assign(r, { query, updated_at: new Date().toISOString(), revision: Number(r.revision) + 1 });
    },
    setEnabled(name, enabled) {
      const r = findRule(name);
      if (!r) throw new Error(`no rule ${name}`);
      Object.assign(r, { enabled, updated_at: new Date().toISOString() });
    },
    remove(name) {
      for (const m of rules.values()) m.delete(name);
    },
    recordAlerts(name, times) {
      const r = findRule(name);
      for (const [s, m] of rules) {
        if (r && !m.has(name)) continue;
        addDocs(
          indices.get(`.alerts-security.alerts-${s}`)!,
          times.map((t) => ({
            '@timestamp': t.toISOString(),
            kibana: { alert: { rule: { rule_id: name, uuid: r?.id ?? randomUUID(), name: r?.name ?? name } }, space_ids: [s] },
          })),
        );
        if (!r) break;
      }
    },
    recordRuns(name, runs) {
      const r = findRule(name);
      if (!r) throw new Error(`no rule ${name}`);
      r.runs.push(...runs);
      r.runs.sort((a, b) => a.time.getTime() - b.time.getTime());
    },
    expireCredentials() {
      expired = true;
    },
    restoreCredentials() {
      expired = false;
    },
    fault(f) {
      faults.push({ ...f, left: f.times });
    },
    requests: () => recorded.map(({ write: _w, ...r }) => r),
    writes: () => recorded.filter((r) => r.write).map(({ write: _w, ...r }) => r),
    indexNames: () => [...indices.keys()],
    esqlRequests: () => [...esqlLog],
    async close() {
      for (const { server } of [kibanaServer, esServer]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}

/** The `_find` filters this fake understands: `alert.attributes.<tags|name|enabled>:<value>`, joined by AND; else Kibana's 400 text. */
function kqlFilter(filter: string): ((r: Record<string, unknown>) => boolean) | string {
  const clauses = filter.split(/\s+AND\s+/i);
  const tests: Array<(r: Record<string, unknown>) => boolean> = [];
  for (const c of clauses) {
    const m = /^alert\.attributes\.(tags|name|enabled):\s*(?:"((?:[^"\\]|\\.)*)"|([^\s"()]+))$/.exec(c.trim());
    if (!m) return `Invalid filter: this fake understands alert.attributes.<tags|name|enabled>:<value> clauses joined by AND, not [${c}]`;
    const field = m[1]!;
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!;
    tests.push((r) => {
      const v = r[field];
      if (field === 'enabled') return String(v) === value;
      return Array.isArray(v) ? v.includes(value) : v === value;
    });
  }
  return (r) => tests.every((t) => t(r));
}
