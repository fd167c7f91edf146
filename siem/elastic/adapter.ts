import { remoteCapabilities } from '../remote/capabilities';
import { compileRemote } from '../remote/compile';
import { fixtureOutcomes } from '../fixture-outcomes';
import type { SigmaRule } from '../../sigma';
import { matchLogsource, type TargetMapping } from '../../sigma/pipelines';
import { mappingOf } from '../remote/mapping';
import {
  type AdapterCapabilities,
  type AlertStats,
  type CompiledRule,
  type CompileResult,
  type CursorEvent,
  type DeployedRule,
  type DeployRequest,
  type DeployResult,
  type FieldPresenceRequest,
  type FieldPresenceResult,
  type FixtureCase,
  type FixtureOutcome,
  type LiveEvaluationResult,
  type MatchedEvent,
  type RuleLogsource,
  type RunStats,
  type TargetObject,
  type TimeWindow,
  type UndeployResult,
  type WindowChunk,
  type WindowCountResult,
  type WindowSearchResult,
} from '../adapter';
import { describeDeployment, NAME_PREFIX, objectName, ownedOrUnmarked, queryHash, readMarker, refuseForeignObject } from '../remote/deployed-marker';
import { credentialValues } from '../remote/credentials';
import { SiemHttpClient } from '../remote/http-client';
import type { RemoteAdapter, RemoteTargetBinding } from '../remote/remote-kind';
import { fillDays, liveSlice, sliceWindow } from '../remote/windows';
import { apiKeyHeader, elasticSecrets, type ElasticConnection } from './connection';
import { EsClient, timeFilter, type EsqlResult } from './es-client';
import { appended, esqlField, referencedFields, sourceOf, splitEsql, withMetadata, withSource } from './esql-text';
import { ecsFieldMapping, FIXTURE_FIELD, fixtureIndexName, fixtureMappings, toEcsDocument } from './fixtures';
import { KibanaClient, type KibanaRule } from './kibana-client';
import { DETFLOW_TAG, ruleBody } from './rule-body';
import { elasticVendorMessage } from './vendor-message';

const DAY_MS = 86_400_000;
const METADATA_COLUMNS = new Set(['_id', '_index', '_version']);
/** `_find` filter of the rules detflow wrote (each carries the tag). */
const DETFLOW_FILTER = `alert.attributes.tags:"${DETFLOW_TAG}"`;

/**
 * The `elastic` target kind: Elastic Security. Rules are ES|QL detection rules in one Kibana space
 * (detection engine API); replay, shadow runs and fixtures run the same ES|QL through
 * Elasticsearch's `_query`; alert statistics come from the space's alerts index and run statistics
 * from the alerting framework's record of the rule. docs/siem/elastic.md has the details.
 */
export class ElasticAdapter implements RemoteAdapter {
  readonly kind = 'elastic' as const;
  private readonly http: SiemHttpClient;
  private readonly kibana: KibanaClient;
  private readonly es: EsClient;
  private readonly connection: ElasticConnection;

  /** The data model the target's events follow (ECS), with the target's field overrides. */
  readonly mapping: TargetMapping;

  constructor(private readonly binding: RemoteTargetBinding<ElasticConnection>) {
    const c = binding.connection;
    this.connection = c;
    this.mapping = mappingOf('elastic', c);
    this.http = new SiemHttpClient({
      kind: 'elastic',
      target: binding.targetName,
      caBundle: c.ca_bundle,
      timeoutMs: c.timeout_ms,
      maxConcurrency: c.max_concurrency,
      secrets: [...credentialValues(c), ...elasticSecrets(c)],
      vendorMessage: (body) => elasticVendorMessage(body),
    });
    const auth = apiKeyHeader(c.api_key);
    this.kibana = new KibanaClient(this.http, KibanaClient.base(c.kibana_url, c.space), auth);
    this.es = new EsClient(this.http, c.elasticsearch_url, auth);
  }

  close(): void {
    this.http.close();
  }

  capabilities(): AdapterCapabilities {
    return remoteCapabilities('esql');
  }

  /**
   * The rule's ES|QL (`compileForTarget`, ELASTIC_ECS pipeline), reading the `index` setting's
   * patterns when one is set, with the METADATA directive the ES|QL rule type needs.
   */
  compile(rule: SigmaRule): CompileResult {
    return compileRemote(rule, 'elastic', this.mapping.pipeline, (query) => withMetadata(this.connection.index ? withSource(query, this.connection.index) : query));
  }

  /**
   * The rule's query over the fixtures alone: a fresh index, the events in ECS (renamed with the
   * pipeline of the rule's logsource, numbered), the query reading that index instead, and the
   * index deleted whatever happens.
   */
  async runFixtures(rule: CompiledRule, fixtures: readonly FixtureCase[]): Promise<FixtureOutcome[]> {
    if (fixtures.length === 0) return [];
    const fields = ecsFieldMapping(rule.logsource, this.mapping.pipeline);
    const docs = fixtures.map((f, i) => toEcsDocument(f.event, fields, i + 1));
    const index = fixtureIndexName();
    let matching: Set<number>;
    await this.es.createIndex(index, fixtureMappings(referencedFields(rule.query), docs));
    try {
      await this.es.bulkIndex(index, docs);
      const result = await this.es.esql(appended(withSource(rule.query, index), `KEEP ${FIXTURE_FIELD}`, `LIMIT ${fixtures.length}`));
      matching = new Set((result?.rows ?? []).map((r) => Number(r[FIXTURE_FIELD])));
    } finally {
      await this.es.deleteIndex(index);
    }
    return fixtureOutcomes(rule, fixtures, (i) => matching.has(i + 1));
  }

  /**
   * Matched events per day: the rule's query, then `STATS … BY DATE_TRUNC(1 day, @timestamp)`;
   * scanned: the same over the rule's index without its WHERE. Both bounded by a `filter` range on
   * `@timestamp` over [from, to).
   */
  async count(_tenantId: string, _targetId: string, rule: CompiledRule, window: TimeWindow): Promise<WindowCountResult> {
    const started = Date.now();
    const counts = await this.perDay(rule.query, window);
    const matched = [...counts.values()].reduce((n, c) => n + c.matched, 0);
    const scanned = [...counts.values()].reduce((n, c) => n + c.scanned, 0);
    return { matched, scanned, bytesScanned: 0, durationMs: Date.now() - started, perDay: fillDays(window, counts) };
  }

  async search(tenantId: string, targetId: string, rule: CompiledRule, window: TimeWindow, options: { limit?: number } = {}): Promise<WindowSearchResult> {
    const started = Date.now();
    const limit = options.limit ?? 100;
    const counts = await this.count(tenantId, targetId, rule, window);
    const events = counts.matched === 0 || limit === 0 ? [] : await this.events(rule.query, window, limit);
    return { ...counts, events, truncated: counts.matched > events.length, durationMs: Date.now() - started };
  }

  planChunks(_tenantId: string, _targetId: string, window: TimeWindow, _targetEvents: number): Promise<WindowChunk[]> {
    return Promise.resolve(sliceWindow(window, 1));
  }

  /** Event time, epoch milliseconds: now less the ingest lag (events still being indexed are left to the next slice). */
  latestCursor(_tenantId: string, _targetId: string): Promise<number> {
    return Promise.resolve(this.binding.now().getTime() - this.connection.ingest_lag_seconds * 1000);
  }

  async evaluateSince(tenantId: string, targetId: string, rule: CompiledRule, cursor: number, options: { limit?: number } = {}): Promise<LiveEvaluationResult> {
    const started = Date.now();
    const slice = liveSlice(cursor, this.binding.now(), this.connection.ingest_lag_seconds * 1000);
    if (!slice) return { cursor, matched: 0, events: [], truncated: false, scanned: 0, bytesScanned: 0, durationMs: Date.now() - started };
    const found = await this.search(tenantId, targetId, rule, slice, { limit: options.limit ?? 1000 });
    const events: CursorEvent[] = found.events.map((e) => ({ ...e, seq: e.time.getTime() }));
    return {
      cursor: slice.to.getTime(),
      matched: found.matched,
      events,
      truncated: found.truncated,
      scanned: found.scanned,
      bytesScanned: 0,
      durationMs: Date.now() - started,
    };
  }

  /**
   * Create-or-update the detection rule `detflow-<rule id>`: read it first; when it carries this
   * deployment's marker and query and is enabled, nothing changes. Otherwise it is replaced (PUT) or
   * created (POST; a 409 means another writer created it meanwhile: it is read again, and replaced
   * unless it is already as wanted).
   */
  async deploy(request: DeployRequest): Promise<DeployResult> {
    const { rule } = request;
    const name = objectName(rule.ruleId);
    const hash = queryHash(rule.query);
    const marker = { deploymentId: request.deploymentId, tenantId: request.tenantId, targetId: request.targetId, version: rule.version, queryHash: hash };
    const body = ruleBody(rule, describeDeployment(rule.title, marker), this.connection);
    const existing = await this.kibana.getRule(name);
    const previous = readMarker(existing?.description);
    refuseForeignObject('elastic', name, previous, request);
    const deployment = (at: KibanaRule | null): DeployedRule => ({
      deploymentId: request.deploymentId,
      tenantId: request.tenantId,
      targetId: request.targetId,
      ruleId: rule.ruleId,
      version: rule.version,
      query: rule.query,
      ...(rule.logsource ? { logsource: rule.logsource } : {}),
      state: 'active',
      deployedAt: dateOr(at?.updated_at, this.binding.now()),
    });
    const ours = (r: KibanaRule, m: typeof previous) => m?.deploymentId === request.deploymentId && m.queryHash === hash && r.query === rule.query;
    if (existing && ours(existing, previous)) {
      if (existing.enabled) return { changed: false, deployment: deployment(existing), superseded: null };
      return { changed: true, deployment: deployment(await this.kibana.setEnabled(name, true)), superseded: null };
    }
    const superseded = previous && previous.deploymentId !== request.deploymentId ? previous.deploymentId : null;
    if (existing) return { changed: true, deployment: deployment(await this.kibana.updateRule(body)), superseded };
    const created = await this.kibana.createRule(body);
    if (created) return { changed: true, deployment: deployment(created), superseded };
    // 409: created meanwhile (another attempt of this deployment, or its own earlier request the
    // SIEM held). Read again, as above: another target's rule is refused, and a rule already as
    // wanted — a dead attempt's create landing after its retry wrote it — is left alone.
    const now = await this.kibana.getRule(name);
    const marked = readMarker(now?.description);
    refuseForeignObject('elastic', name, marked, request);
    if (now && now.enabled && ours(now, marked)) return { changed: false, deployment: deployment(now), superseded: null };
    return { changed: true, deployment: deployment(await this.kibana.updateRule(body)), superseded };
  }

  /** Deletes the rule carrying this deployment's marker (rollback deletes on Elastic; disabling would leave it to be found as drift). */
  async undeploy(tenantId: string, deploymentId: string): Promise<UndeployResult> {
    const rules = await this.kibana.findRules(DETFLOW_FILTER);
    const found = rules.find((r) => {
      const m = readMarker(r.description);
      return m?.deploymentId === deploymentId && m.tenantId === tenantId;
    });
    if (!found) return { changed: false };
    return { changed: await this.kibana.deleteRule(found.rule_id) };
  }

  async listDeployed(tenantId: string, targetId?: string): Promise<DeployedRule[]> {
    const rules = await this.kibana.findRules(DETFLOW_FILTER);
    const out: DeployedRule[] = [];
    for (const r of rules) {
      const m = readMarker(r.description);
      if (!m || m.tenantId !== tenantId || (targetId !== undefined && m.targetId !== targetId)) continue;
      out.push({
        deploymentId: m.deploymentId,
        tenantId: m.tenantId,
        targetId: m.targetId,
        ruleId: r.rule_id.slice(NAME_PREFIX.length),
        version: m.version,
        query: r.query ?? '',
        state: 'active',
        deployedAt: dateOr(r.updated_at, this.binding.now()),
      });
    }
    return out;
  }

  /**
   * Every rule of the space whose `rule_id` follows the naming scheme, tagged or not (someone may
   * have removed the tag): the whole space is listed, page by page, and filtered here, because the
   * documented `_find` filter fields do not include `rule_id`.
   */
  async inventory(tenantId: string, targetId: string): Promise<TargetObject[]> {
    const rules = await this.kibana.findRules();
    return rules
      .filter((r) => r.rule_id.startsWith(NAME_PREFIX) && ownedOrUnmarked(readMarker(r.description), tenantId, targetId))
      .map((r) => {
        const m = readMarker(r.description);
        const query = r.query ?? '';
        return {
          name: r.rule_id,
          ruleId: r.rule_id.slice(NAME_PREFIX.length),
          deploymentId: m?.deploymentId ?? null,
          version: m?.version ?? null,
          query,
          queryUnchanged: m !== null && m.queryHash === queryHash(query),
          enabled: r.enabled,
        };
      });
  }

  /** Alerts of the rule in the space's alerts index (`.alerts-security.alerts-<space>`), per day, over [from, to). */
  async alertStats(_tenantId: string, ruleId: string, window: TimeWindow): Promise<AlertStats> {
    const answer = await this.es.search(`.alerts-security.alerts-${this.connection.space}`, {
      size: 0,
      track_total_hits: true,
      query: {
        bool: {
          filter: [
            { term: { 'kibana.alert.rule.rule_id': objectName(ruleId) } },
            { range: { '@timestamp': { gte: window.from.toISOString(), lt: window.to.toISOString(), format: 'strict_date_optional_time' } } },
          ],
        },
      },
      aggs: {
        per_day: { date_histogram: { field: '@timestamp', calendar_interval: '1d', time_zone: 'UTC', min_doc_count: 1 } },
        first: { min: { field: '@timestamp' } },
        last: { max: { field: '@timestamp' } },
      },
    });
    const perDayCounts = new Map<string, { scanned: number; matched: number }>();
    for (const b of answer?.aggregations?.per_day?.buckets ?? []) perDayCounts.set(new Date(b.key).toISOString().slice(0, 10), { scanned: 0, matched: b.doc_count });
    const first = answer?.aggregations?.first?.value;
    const last = answer?.aggregations?.last?.value;
    return {
      ruleId,
      alerts: answer?.hits.total.value ?? 0,
      perDay: fillDays(window, perDayCounts).map((d) => ({ day: d.day, alerts: d.matched })),
      firstAlertAt: typeof first === 'number' ? new Date(first) : null,
      lastAlertAt: typeof last === 'number' ? new Date(last) : null,
    };
  }

  /**
   * Runs of the rule in the window, from the alerting framework's record of it (`GET
   * /api/alerting/rule/{id}`, `monitoring.run.history`: success, time and duration of each recent
   * run). Kibana keeps only the most recent runs there, so a long window counts those. The last
   * error is the detection engine's `execution_summary` message of a failed last run. Events
   * scanned: Kibana reports none per run (0).
   */
  async runStats(_tenantId: string, ruleId: string, window: TimeWindow): Promise<RunStats> {
    const rule = await this.kibana.getRule(objectName(ruleId));
    if (!rule) return { ruleId, runs: 0, failedRuns: 0, eventsScanned: 0, meanDurationMs: 0, maxDurationMs: 0, lastRunAt: null, lastError: null };
    const alerting = await this.kibana.alertingRule(rule.id);
    const from = window.from.getTime();
    const to = window.to.getTime();
    const runs = (alerting?.monitoring?.run?.history ?? []).filter((h) => h.timestamp >= from && h.timestamp < to);
    const durations = runs.map((r) => r.duration ?? 0);
    const lastRun = runs.reduce<number | null>((t, r) => (t === null || r.timestamp > t ? r.timestamp : t), null);
    const last = rule.execution_summary?.last_execution;
    const lastFailed = last?.status === 'failed' || alerting?.last_run?.outcome === 'failed';
    const lastError = lastFailed ? (last?.message ?? alerting?.last_run?.outcome_msg?.join('; ') ?? 'the last run failed') : null;
    return {
      ruleId,
      runs: runs.length,
      failedRuns: runs.filter((r) => !r.success).length,
      eventsScanned: 0,
      meanDurationMs: durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : 0,
      maxDurationMs: durations.length ? Math.max(...durations) : 0,
      lastRunAt: lastRun === null ? null : new Date(lastRun),
      lastError,
    };
  }

  /**
   * Field presence on the logsource's index: its columns first (`FROM idx | LIMIT 0`, so that a
   * field the index does not map counts 0 instead of failing the query), then one STATS with
   * `COUNT(field)` per mapped field since `since`, and the newest `@timestamp` at any time.
   */
  async fieldPresence(request: FieldPresenceRequest): Promise<FieldPresenceResult> {
    const index = this.indexOf(request.logsource);
    const columns = await this.es.esql(`FROM ${index} | LIMIT 0`);
    const zero = Object.fromEntries(request.fields.map((f) => [f, 0]));
    if (!columns) return { events: 0, fields: zero, newestEventTime: null };
    const known = new Set(columns.columns.map((c) => c.name));
    const counted = request.fields.filter((f) => known.has(f));
    const stats = ['events = COUNT(*)', ...counted.map((f, i) => `f${i} = COUNT(${esqlField(f)})`)].join(', ');
    const result = await this.es.esql(`FROM ${index} | STATS ${stats}`, timeFilter(request.since));
    const row = result?.rows[0] ?? {};
    const fields = { ...zero };
    counted.forEach((f, i) => (fields[f] = Number(row[`f${i}`] ?? 0)));
    const newest = known.has('@timestamp') ? await this.es.esql(`FROM ${index} | STATS newest = MAX(@timestamp)`) : null;
    const newestValue = newest?.rows[0]?.newest;
    return { events: Number(row.events ?? 0), fields, newestEventTime: typeof newestValue === 'string' ? new Date(newestValue) : null };
  }

  // --- helpers ---------------------------------------------------------------------------------

  private indexOf(logsource: RuleLogsource): string {
    if (this.connection.index) return this.connection.index;
    const mapping = matchLogsource({ ...logsource, custom: {}, pos: { line: 0, column: 0 } }, this.mapping.pipeline);
    return mapping?.target ?? this.mapping.pipeline.defaultTarget ?? 'logs-*';
  }

  private async perDay(query: string, window: TimeWindow): Promise<Map<string, { scanned: number; matched: number }>> {
    const filter = timeFilter(window.from, window.to);
    const byDay = 'STATS c = COUNT(*) BY day = DATE_TRUNC(1 day, @timestamp)';
    const source = sourceOf(query);
    const [matched, scanned] = await Promise.all([this.es.esql(appended(query, byDay), filter), this.es.esql(`FROM ${source} | ${byDay}`, filter)]);
    const counts = new Map<string, { scanned: number; matched: number }>();
    const add = (result: EsqlResult | null, key: 'scanned' | 'matched') => {
      for (const row of result?.rows ?? []) {
        if (typeof row.day !== 'string') continue;
        const day = new Date(Math.floor(Date.parse(row.day) / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
        const c = counts.get(day) ?? { scanned: 0, matched: 0 };
        c[key] += Number(row.c ?? 0);
        counts.set(day, c);
      }
    };
    add(matched, 'matched');
    add(scanned, 'scanned');
    return counts;
  }

  private async events(query: string, window: TimeWindow, limit: number): Promise<MatchedEvent[]> {
    const metadata = splitEsql(query)?.metadata ? query : withMetadata(query);
    const result = await this.es.esql(appended(metadata, 'SORT @timestamp ASC', `LIMIT ${limit}`), timeFilter(window.from, window.to));
    return (result?.rows ?? []).map((row) => {
      const event = Object.fromEntries(Object.entries(row).filter(([k, v]) => !METADATA_COLUMNS.has(k) && v !== null));
      const time = typeof row['@timestamp'] === 'string' ? new Date(row['@timestamp']) : new Date(0);
      return { eventId: String(row._id ?? `${String(row._index)}:${time.getTime()}`), time, event };
    });
  }
}

function dateOr(value: string | undefined, fallback: Date): Date {
  const t = value ? Date.parse(value) : NaN;
  return Number.isNaN(t) ? fallback : new Date(t);
}
