/**
 * A fake Azure for the Sentinel adapter: three loopback servers that play the Microsoft identity
 * platform, Azure Resource Manager (SecurityInsights alert rules) and the Log Analytics query API,
 * as Azure documents them, and that refuse any request departing from that (400 naming what
 * departed). References:
 *
 * - Identity platform, client credentials grant, `POST /{tenant}/oauth2/v2.0/token`, form-encoded,
 *   answers `{ token_type, expires_in, ext_expires_in, access_token }` or `{ error, error_description
 *   (AADSTS…), error_codes, timestamp, trace_id, correlation_id }`
 *   (learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow,
 *   .../reference-error-codes: AADSTS7000215 invalid secret, AADSTS7000222 expired secret,
 *   AADSTS700016 unknown app, AADSTS90002 unknown tenant, AADSTS70011 invalid scope).
 * - ARM: SecurityInsights AlertRules.json (Azure/azure-rest-api-specs, specification/securityinsights/
 *   resource-manager/Microsoft.SecurityInsights/stable/2025-09-01/AlertRules.json; schemas in
 *   ./schemas.ts): list with `nextLink` (x-ms-pageable), get, create-or-update (201 created / 200
 *   updated, `etag`), delete (200 / 204); `api-version` required and known
 *   (common-types ApiVersionParameter; ARM's MissingApiVersionParameter / InvalidApiVersionParameter);
 *   errors `{ error: { code, message } }` (common CloudError); bearer token of the ARM audience
 *   (401 AuthenticationFailed / InvalidAuthenticationToken / ExpiredAuthenticationToken /
 *   InvalidAuthenticationTokenAudience); 429 with Retry-After when throttled
 *   (learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling).
 *   A rule's query is checked on save, as Sentinel does (a query that does not run is a 400).
 *   A stale etag is answered 409 Conflict (the spec leaves the code unstated; Sentinel answers 409).
 * - Log Analytics query API: `POST /v1/workspaces/{workspaceId}/query` with `{ query, timespan }`,
 *   answered `{ tables: [{ name: 'PrimaryResult', columns: [{ name, type }], rows }] }`; errors
 *   `{ error: { message, code: 'BadArgumentError', correlationId, innererror: { code, message } } }`
 *   (learn.microsoft.com/azure/azure-monitor/logs/api/request-format, .../response-format,
 *   .../errors). The KQL it runs is ./kql.ts.
 * - Tables: DeviceProcessEvents (Defender XDR advanced hunting schema, plus TimeGenerated as
 *   Sentinel stores it), SecurityAlert (learn.microsoft.com/azure/sentinel/security-alert-schema:
 *   a scheduled rule's alerts carry the rule id in AlertType), SentinelHealth
 *   (learn.microsoft.com/azure/sentinel/health-table-reference).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { SENTINEL } from '../../../sigma';
import type { Fault, FakeObject, FakeSiem, ProcessEvent, RecordedRequest } from '../fake-siem';
import { KqlError, runKql, wireValue, type Column, type ColumnType, type KqlTable, type KqlValue } from './kql';
import { alertRulePut, API_VERSIONS, isoDurationMs, issues, logAnalyticsQuery, scheduledRuleProperties, tokenRequest } from './schemas';

export interface FakeSentinelOptions {
  /** Serve https with this certificate (PEM) instead of http. */
  readonly tls?: { readonly key: string; readonly cert: string };
  /** Lifetime of the access tokens it issues (expires_in). */
  readonly tokenLifetimeSeconds?: number;
  /** Alert rules per page of the list (nextLink beyond). */
  readonly pageSize?: number;
}

export interface RecordedRun {
  readonly time: Date;
  readonly status: 'Success' | 'Failure';
  readonly reason?: string;
}

export type FakeSentinel = FakeSiem & {
  /** Token requests answered with a token, by scope, in order. */
  tokenRequests(): string[];
  /** Every token issued so far stops working (as if it had expired early). */
  revokeTokens(): void;
  /** Records analytics rule runs in SentinelHealth. */
  recordRuns(name: string, runs: readonly RecordedRun[]): void;
  /** The stored rule as ARM returns it, or undefined. */
  rule(name: string): { name: string; etag: string; properties: Record<string, unknown> } | undefined;
  /** Sends a raw request to one of its servers (tests of what it refuses). */
  send(
    server: 'login' | 'arm' | 'la',
    req: { method: string; path: string; headers?: Record<string, string>; body?: string },
  ): Promise<{ status: number; body: unknown; headers: http.IncomingHttpHeaders }>;
  /** A valid bearer token for the resource (tests that call the fake directly). */
  issueToken(resource: 'arm' | 'la'): string;
};

type Role = 'login' | 'arm' | 'la';

interface StoredRule {
  name: string;
  etag: string;
  properties: Record<string, unknown>;
}

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const PROCESS_COLUMNS: Column[] = [
  { name: 'TimeGenerated', type: 'datetime' },
  { name: 'Timestamp', type: 'datetime' },
  { name: 'DeviceId', type: 'string' },
  { name: 'DeviceName', type: 'string' },
  { name: 'ActionType', type: 'string' },
  { name: 'FileName', type: 'string' },
  { name: 'FolderPath', type: 'string' },
  { name: 'SHA256', type: 'string' },
  { name: 'MD5', type: 'string' },
  { name: 'ProcessId', type: 'long' },
  { name: 'ProcessCommandLine', type: 'string' },
  { name: 'ProcessIntegrityLevel', type: 'string' },
  { name: 'ProcessVersionInfoCompanyName', type: 'string' },
  { name: 'ProcessVersionInfoProductName', type: 'string' },
  { name: 'ProcessVersionInfoOriginalFileName', type: 'string' },
  { name: 'ProcessVersionInfoFileDescription', type: 'string' },
  { name: 'AccountDomain', type: 'string' },
  { name: 'AccountName', type: 'string' },
  { name: 'InitiatingProcessFileName', type: 'string' },
  { name: 'InitiatingProcessFolderPath', type: 'string' },
  { name: 'InitiatingProcessCommandLine', type: 'string' },
  { name: 'InitiatingProcessId', type: 'long' },
  { name: 'InitiatingProcessAccountName', type: 'string' },
  { name: 'InitiatingProcessParentFileName', type: 'string' },
  { name: 'ReportId', type: 'long' },
];

const ALERT_COLUMNS: Column[] = [
  { name: 'TimeGenerated', type: 'datetime' },
  { name: 'AlertName', type: 'string' },
  { name: 'AlertSeverity', type: 'string' },
  { name: 'AlertType', type: 'string' },
  { name: 'Description', type: 'string' },
  { name: 'ProviderName', type: 'string' },
  { name: 'ProductName', type: 'string' },
  { name: 'SystemAlertId', type: 'string' },
  { name: 'StartTime', type: 'datetime' },
  { name: 'EndTime', type: 'datetime' },
  { name: 'ExtendedProperties', type: 'string' },
  { name: 'Tactics', type: 'string' },
  { name: 'Techniques', type: 'string' },
];

const HEALTH_COLUMNS: Column[] = [
  { name: 'TimeGenerated', type: 'datetime' },
  { name: 'OperationName', type: 'string' },
  { name: 'SentinelResourceId', type: 'string' },
  { name: 'SentinelResourceName', type: 'string' },
  { name: 'SentinelResourceType', type: 'string' },
  { name: 'SentinelResourceKind', type: 'string' },
  { name: 'Status', type: 'string' },
  { name: 'Description', type: 'string' },
  { name: 'Reason', type: 'string' },
  { name: 'WorkspaceId', type: 'string' },
  { name: 'RecordId', type: 'string' },
  { name: 'ExtendedProperties', type: 'dynamic' },
];

/** Defender XDR tables the SENTINEL pipeline maps to, empty unless seeded, with the columns it names. */
function defenderTables(): Map<string, Column[]> {
  const tables = new Map<string, Column[]>([['DeviceProcessEvents', PROCESS_COLUMNS]]);
  for (const m of SENTINEL.logsources) {
    if (!m.target.startsWith('Device') || tables.has(m.target)) continue;
    const names = new Set(['TimeGenerated', 'Timestamp', 'DeviceId', 'DeviceName', 'ActionType', 'ReportId', ...Object.values(m.fields ?? {})]);
    tables.set(
      m.target,
      [...names].map((name) => ({
        name,
        type: (['TimeGenerated', 'Timestamp'].includes(name) ? 'datetime' : /Id$|Port$/.test(name) && name !== 'DeviceId' ? 'long' : 'string') as ColumnType,
      })),
    );
  }
  return tables;
}

export async function startFakeSentinel(options: FakeSentinelOptions = {}): Promise<FakeSentinel> {
  const ids = {
    tenant: randomUUID(),
    client: randomUUID(),
    secret: `fake-secret-${randomBytes(12).toString('base64url')}`,
    subscription: randomUUID(),
    resourceGroup: 'rg-detflow',
    workspace: 'law-detflow',
    workspaceId: randomUUID(),
  };
  const lifetime = options.tokenLifetimeSeconds ?? 3599;
  const pageSize = options.pageSize ?? 50;
  const rules = new Map<string, StoredRule>();
  const schemas = defenderTables();
  const rows = new Map<string, Record<string, KqlValue>[]>([...schemas.keys(), 'SecurityAlert', 'SentinelHealth'].map((t) => [t, []]));
  schemas.set('SecurityAlert', ALERT_COLUMNS);
  schemas.set('SentinelHealth', HEALTH_COLUMNS);
  const tokens = new Map<string, { aud: string; exp: number }>();
  const tokenLog: string[] = [];
  const faults: Array<Fault & { remaining: number }> = [];
  const log: RecordedRequest[] = [];
  const writeLog: RecordedRequest[] = [];
  let credentialsExpired = false;
  let reportId = 0;
  const base: Record<Role, string> = { login: '', arm: '', la: '' };

  // ------------------------------------------------------------------ identity platform
  const aadError = (status: number, error: string, code: number, description: string): Answer => ({
    status,
    body: {
      error,
      error_description: `AADSTS${code}: ${description}\r\nTrace ID: ${randomUUID()}\r\nCorrelation ID: ${randomUUID()}\r\nTimestamp: ${new Date().toISOString()}`,
      error_codes: [code],
      timestamp: new Date().toISOString(),
      trace_id: randomUUID(),
      correlation_id: randomUUID(),
    },
  });

  function login(method: string, url: URL, headers: http.IncomingHttpHeaders, body: string): Answer {
    const m = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
    if (!m)
      return {
        status: 400,
        body: { error: 'invalid_request', error_description: `the fake identity platform serves POST /{tenant}/oauth2/v2.0/token only, not ${method} ${url.pathname}` },
      };
    if (method !== 'POST') return aadError(400, 'invalid_request', 900561, 'The endpoint only accepts POST requests.');
    if (url.search) return aadError(400, 'invalid_request', 900144, 'Client credentials belong in the form body, not the query string.');
    if (!(headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return aadError(400, 'invalid_request', 900144, `The request body must be application/x-www-form-urlencoded, not ${headers['content-type'] ?? 'absent'}.`);
    }
    if (decodeURIComponent(m[1]!) !== ids.tenant) return aadError(400, 'invalid_request', 90002, `Tenant '${decodeURIComponent(m[1]!)}' not found.`);
    const form = Object.fromEntries(new URLSearchParams(body));
    const parsed = tokenRequest.safeParse(form);
    if (!parsed.success) return aadError(400, 'invalid_request', 900144, `The request body is not a client credentials request: ${issues(parsed.error)}`);
    if (parsed.data.client_id !== ids.client)
      return aadError(400, 'unauthorized_client', 700016, `Application with identifier '${parsed.data.client_id}' was not found in the directory.`);
    if (credentialsExpired) return aadError(401, 'invalid_client', 7000222, `The provided client secret keys for app '${ids.client}' are expired.`);
    if (parsed.data.client_secret !== ids.secret)
      return aadError(
        401,
        'invalid_client',
        7000215,
        'Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.',
      );
    const resource = parsed.data.scope.slice(0, -'/.default'.length);
    if (resource !== base.arm && resource !== base.la) {
      return aadError(400, 'invalid_scope', 70011, `The provided value for the input parameter 'scope' is not valid. The scope ${parsed.data.scope} is not valid.`);
    }
    const token = randomBytes(24).toString('base64url');
    tokens.set(token, { aud: resource, exp: Date.now() + lifetime * 1000 });
    tokenLog.push(parsed.data.scope);
    return { status: 200, body: { token_type: 'Bearer', expires_in: lifetime, ext_expires_in: lifetime, access_token: token } };
  }

  function bearer(headers: http.IncomingHttpHeaders, audience: string, error: (status: number, code: string, message: string) => Answer): Answer | null {
    const auth = headers.authorization;
    if (!auth) return error(401, 'AuthenticationFailed', "Authentication failed. The 'Authorization' header is missing.");
    const m = /^Bearer (\S+)$/.exec(auth);
    if (!m) return error(401, 'AuthenticationFailed', "Authentication failed. The 'Authorization' header is not a Bearer token.");
    const token = tokens.get(m[1]!);
    if (!token) return error(401, 'InvalidAuthenticationToken', 'The access token is invalid.');
    if (token.exp <= Date.now()) return error(401, 'ExpiredAuthenticationToken', 'The access token expiry UTC time is earlier than current UTC time.');
    if (token.aud !== audience)
      return error(
        401,
        'InvalidAuthenticationTokenAudience',
        `The access token has been obtained for the wrong audience or resource '${token.aud}'. It should exactly match '${audience}'.`,
      );
    return null;
  }

  // ------------------------------------------------------------------ ARM
  const armError = (status: number, code: string, message: string, headers?: Record<string, string>): Answer => ({
    status,
    body: { error: { code, message } },
    ...(headers ? { headers } : {}),
  });
  const rulesPath = () =>
    `/subscriptions/${ids.subscription}/resourceGroups/${ids.resourceGroup}/providers/Microsoft.OperationalInsights/workspaces/${ids.workspace}/providers/Microsoft.SecurityInsights/alertRules`;
  const resource = (r: StoredRule) => ({
    id: `${rulesPath()}/${r.name}`,
    name: r.name,
    etag: r.etag,
    type: 'Microsoft.SecurityInsights/alertRules',
    kind: 'Scheduled',
    properties: r.properties,
  });
  const newEtag = () => `"${randomUUID()}"`;

  function arm(method: string, url: URL, headers: http.IncomingHttpHeaders, body: string): Answer {
    const auth = bearer(headers, base.arm, armError);
    if (auth) return auth;
    const m =
      /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.OperationalInsights\/workspaces\/([^/]+)\/providers\/Microsoft\.SecurityInsights\/alertRules(?:\/([^/]+))?$/i.exec(
        url.pathname,
      );
    if (!m) return armError(400, 'InvalidRequestPath', `The fake ARM serves Microsoft.SecurityInsights/alertRules of one workspace only, not ${method} ${url.pathname}`);
    const apiVersion = url.searchParams.get('api-version');
    if (apiVersion === null) return armError(400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
    if (!(API_VERSIONS as readonly string[]).includes(apiVersion)) {
      return armError(400, 'InvalidApiVersionParameter', `The api-version '${apiVersion}' is invalid. The supported versions are '${API_VERSIONS.join(',')}'.`);
    }
    const [sub, rg, ws, ruleId] = [m[1]!, m[2]!, m[3]!, m[4]].map((s) => (s === undefined ? undefined : decodeURIComponent(s)));
    if (sub!.toLowerCase() !== ids.subscription) return armError(404, 'SubscriptionNotFound', `The subscription '${sub}' could not be found.`);
    if (rg!.toLowerCase() !== ids.resourceGroup.toLowerCase()) return armError(404, 'ResourceGroupNotFound', `Resource group '${rg}' could not be found.`);
    if (ws!.toLowerCase() !== ids.workspace.toLowerCase())
      return armError(404, 'ResourceNotFound', `The Resource 'Microsoft.OperationalInsights/workspaces/${ws}' under resource group '${rg}' was not found.`);

    if (ruleId === undefined) {
      if (method !== 'GET') return armError(405, 'MethodNotAllowed', `The alertRules collection takes GET only, not ${method}.`);
      const all = [...rules.values()].sort((a, b) => a.name.localeCompare(b.name));
      const skipToken = url.searchParams.get('$skipToken');
      const offset = skipToken === null ? 0 : Number(skipToken);
      if (!Number.isInteger(offset) || offset < 0) return armError(400, 'InvalidSkipToken', `The $skipToken '${skipToken}' is not one this service issued.`);
      const page = all.slice(offset, offset + pageSize).map(resource);
      const more = offset + pageSize < all.length;
      return {
        status: 200,
        body: { value: page, ...(more ? { nextLink: `${base.arm}${rulesPath()}?api-version=${apiVersion}&$skipToken=${offset + pageSize}` } : {}) },
      };
    }
    const key = ruleId.toLowerCase();
    const existing = rules.get(key);
    switch (method) {
      case 'GET':
        return existing ? { status: 200, body: resource(existing) } : armError(404, 'NotFound', `Alert rule '${ruleId}' was not found.`);
      case 'DELETE':
        if (!existing) return { status: 204 };
        rules.delete(key);
        return { status: 200 };
      case 'PUT': {
        if (!(headers['content-type'] ?? '').startsWith('application/json'))
          return armError(415, 'UnsupportedMediaType', `The content media type '${headers['content-type'] ?? ''}' is not supported. Only 'application/json' is supported.`);
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          return armError(400, 'InvalidRequestContent', 'The request content was invalid and could not be deserialized.');
        }
        const put = alertRulePut.safeParse(json);
        if (!put.success) return armError(400, 'BadRequest', `The alert rule does not match AlertRules.json: ${issues(put.error)}`);
        if (put.data.kind !== 'Scheduled') return armError(400, 'BadRequest', `The fake stores Scheduled alert rules only, not kind ${put.data.kind}.`);
        const props = scheduledRuleProperties.safeParse(put.data.properties);
        if (!props.success) return armError(400, 'BadRequest', `The Scheduled alert rule's properties do not match ScheduledAlertRuleProperties: ${issues(props.error)}`);
        if (existing && put.data.etag !== undefined && put.data.etag !== existing.etag) {
          return armError(409, 'Conflict', `The etag ${put.data.etag} does not match the alert rule's current etag ${existing.etag}; read the rule again.`);
        }
        const problem = queryProblem(props.data.query, isoDurationMs(props.data.queryPeriod)!);
        if (problem) return armError(400, 'BadRequest', `Failed to run the analytics rule query: ${problem}`);
        const { lastModifiedUtc: _ignored, ...stored } = props.data;
        const saved: StoredRule = { name: existing?.name ?? ruleId, etag: newEtag(), properties: { ...stored, lastModifiedUtc: new Date().toISOString() } };
        rules.set(key, saved);
        return { status: existing ? 200 : 201, body: resource(saved) };
      }
      default:
        return armError(405, 'MethodNotAllowed', `An alert rule takes GET, PUT or DELETE, not ${method}.`);
    }
  }

  function queryProblem(query: string, periodMs: number): string | null {
    try {
      runKql(query, workspace({ from: new Date(Date.now() - periodMs), to: new Date() }));
      return null;
    } catch (err) {
      if (err instanceof KqlError) return err.message;
      throw err;
    }
  }

  // ------------------------------------------------------------------ Log Analytics
  const laError = (status: number, code: string, message: string, inner?: { code: string; message: string }): Answer => ({
    status,
    body: { error: { message, code, correlationId: randomUUID(), ...(inner ? { innererror: inner } : {}) } },
  });

  function workspace(span: { from: Date; to: Date } | null) {
    return {
      table(name: string): KqlTable | undefined {
        const columns = schemas.get(name);
        if (!columns) return undefined;
        const all = rows.get(name)!;
        const kept = span ? all.filter((r) => r.TimeGenerated instanceof Date && r.TimeGenerated >= span.from && r.TimeGenerated < span.to) : all;
        return { columns, rows: kept };
      },
      tableNames: () => [...schemas.keys()],
      now: () => new Date(),
    };
  }

  function la(method: string, url: URL, headers: http.IncomingHttpHeaders, body: string): Answer {
    const m = /^\/v1\/workspaces\/([^/]+)\/query$/.exec(url.pathname);
    if (!m) return laError(400, 'PathNotFoundError', `The fake Log Analytics serves POST /v1/workspaces/{workspaceId}/query only, not ${method} ${url.pathname}`);
    const auth = bearer(headers, base.la, (status, code, message) =>
      laError(status, code === 'AuthenticationFailed' ? 'AuthorizationRequiredError' : 'InvalidTokenError', message),
    );
    if (auth) return auth;
    if (method !== 'POST') return laError(400, 'BadArgumentError', `The fake Log Analytics takes queries by POST, not ${method}.`);
    if (decodeURIComponent(m[1]!).toLowerCase() !== ids.workspaceId)
      return laError(404, 'WorkspaceNotFoundError', `The workspace could not be found: ${decodeURIComponent(m[1]!)}`);
    if (!(headers['content-type'] ?? '').startsWith('application/json'))
      return laError(415, 'UnsupportedMediaTypeError', `Content-Type must be application/json, not ${headers['content-type'] ?? 'absent'}.`);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return laError(400, 'BadArgumentError', 'The request body is not valid JSON.');
    }
    const req = logAnalyticsQuery.safeParse(json);
    if (!req.success) return laError(400, 'BadArgumentError', `The request had some invalid properties: ${issues(req.error)}`);
    let span: { from: Date; to: Date } | null = null;
    if (req.data.timespan !== undefined) {
      span = parseTimespan(req.data.timespan);
      if (!span) return laError(400, 'BadArgumentError', `The timespan '${req.data.timespan}' is not an ISO 8601 interval (start/end, start/duration or duration).`);
    }
    try {
      const result = runKql(req.data.query, workspace(span));
      const columns = result.columns.map((c) => ({
        name: c.name,
        type: c.type === 'long' && result.rows.some((r) => typeof r[c.name] === 'number' && !Number.isInteger(r[c.name])) ? 'real' : c.type,
      }));
      return { status: 200, body: { tables: [{ name: 'PrimaryResult', columns, rows: result.rows.map((r) => result.columns.map((c) => wireValue(r[c.name]))) }] } };
    } catch (err) {
      if (err instanceof KqlError) return laError(400, 'BadArgumentError', 'The request had some invalid properties', { code: err.code, message: err.message });
      throw err;
    }
  }

  // ------------------------------------------------------------------ HTTP
  function faultFor(method: string, path: string) {
    const f = faults.find((x) => x.remaining > 0 && (!x.match || x.match.test(`${method} ${path}`)));
    if (f) f.remaining--;
    return f;
  }

  function faultAnswer(role: Role, f: Fault): Answer {
    const headers = f.retryAfterSeconds !== undefined ? { 'retry-after': String(f.retryAfterSeconds) } : undefined;
    const status = f.status!;
    if (role === 'login')
      return {
        ...aadError(status, status === 429 ? 'temporarily_unavailable' : 'server_error', 50196, 'The server is temporarily unavailable.'),
        ...(headers ? { headers } : {}),
      };
    const code = status === 429 ? 'TooManyRequests' : status === 401 ? 'ExpiredAuthenticationToken' : status === 503 ? 'ServiceUnavailable' : 'InternalServerError';
    const message = status === 429 ? 'The request was throttled. Retry after the period given in Retry-After.' : `The fake answered ${status} as it was told to.`;
    return role === 'arm' ? armError(status, code, message, headers) : { ...laError(status, code, message), ...(headers ? { headers } : {}) };
  }

  function handler(role: Role) {
    return (req: http.IncomingMessage, res: http.ServerResponse) => {
      const at = new Date();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const url = new URL(req.url ?? '/', base[role]);
        const method = req.method ?? 'GET';
        const respond = (answer: Answer) => {
          if (res.writableEnded) return;
          const entry: RecordedRequest = { method, path: url.pathname, status: answer.status, at };
          log.push(entry);
          if (role === 'arm' && method === 'PUT' && answer.status >= 200 && answer.status < 300) writeLog.push(entry);
          // A client that gave up (a timeout) does not undo what was done: it is recorded above.
          if (res.destroyed) return;
          const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
          res.writeHead(answer.status, {
            ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}),
            'x-ms-request-id': randomUUID(),
            ...(answer.headers ?? {}),
          });
          res.end(text);
        };
        const fault = faultFor(method, url.pathname);
        const answer = () => {
          if (fault?.status !== undefined) return faultAnswer(role, fault);
          if (credentialsExpired && role !== 'login') {
            return role === 'arm'
              ? armError(401, 'ExpiredAuthenticationToken', 'The access token expiry UTC time is earlier than current UTC time.')
              : laError(401, 'InvalidTokenError', 'The provided authentication is not valid for this resource.');
          }
          const f = role === 'login' ? login : role === 'arm' ? arm : la;
          return f(method, url, req.headers, body);
        };
        if (fault?.delayMs) setTimeout(() => respond(answer()), fault.delayMs);
        else respond(answer());
      });
    };
  }

  const servers = (['login', 'arm', 'la'] as const).map((role) => {
    const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler(role)) : http.createServer(handler(role));
    return { role, server };
  });
  for (const { role, server } of servers) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base[role] = `${options.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const ruleByName = (name: string) => rules.get(name.toLowerCase());

  const fake: FakeSentinel = {
    kind: 'sentinel',
    connection: () => ({
      tenant_id: ids.tenant,
      client_id: ids.client,
      client_secret: ids.secret,
      subscription_id: ids.subscription,
      resource_group: ids.resourceGroup,
      workspace_name: ids.workspace,
      workspace_id: ids.workspaceId,
      authority_host: base.login,
      arm_url: base.arm,
      log_analytics_url: base.la,
    }),
    addProcessEvents(events: readonly ProcessEvent[]) {
      const table = rows.get('DeviceProcessEvents')!;
      for (const e of events) {
        const [domain, account] = splitUser(e.user);
        const id = ++reportId;
        const row: Record<string, KqlValue> = Object.fromEntries(PROCESS_COLUMNS.map((c) => [c.name, c.type === 'string' ? '' : null]));
        Object.assign(row, {
          TimeGenerated: e.time,
          Timestamp: e.time,
          DeviceId: `device-${(e.host ?? 'host').toLowerCase()}`,
          DeviceName: e.host ?? '',
          ActionType: 'ProcessCreated',
          FileName: basename(e.image),
          FolderPath: e.image,
          ProcessId: 1000 + id,
          ProcessCommandLine: e.commandLine,
          AccountDomain: domain,
          AccountName: account,
          InitiatingProcessFileName: basename(e.parentImage ?? ''),
          InitiatingProcessFolderPath: e.parentImage ?? '',
          InitiatingProcessId: 500 + id,
          ReportId: id,
        });
        table.push(row);
      }
    },
    objects: (): FakeObject[] =>
      [...rules.values()].map((r) => ({
        name: r.name,
        query: String(r.properties.query ?? ''),
        enabled: r.properties.enabled === true,
        description: String(r.properties.description ?? ''),
      })),
    editQuery(name, query) {
      const r = ruleByName(name);
      if (!r) throw new Error(`no alert rule ${name}`);
      r.properties = { ...r.properties, query, lastModifiedUtc: new Date().toISOString() };
      r.etag = newEtag();
    },
    setEnabled(name, enabled) {
      const r = ruleByName(name);
      if (!r) throw new Error(`no alert rule ${name}`);
      r.properties = { ...r.properties, enabled, lastModifiedUtc: new Date().toISOString() };
      r.etag = newEtag();
    },
    remove(name) {
      rules.delete(name.toLowerCase());
    },
    recordAlerts(name, times) {
      const r = ruleByName(name);
      for (const t of times) {
        rows.get('SecurityAlert')!.push({
          TimeGenerated: t,
          AlertName: String(r?.properties.displayName ?? name),
          AlertSeverity: String(r?.properties.severity ?? 'Medium'),
          AlertType: `${ids.workspaceId}_${r?.name ?? name}`,
          Description: '',
          ProviderName: 'ASI Scheduled Alerts',
          ProductName: 'Azure Sentinel',
          SystemAlertId: randomUUID(),
          StartTime: t,
          EndTime: t,
          ExtendedProperties: JSON.stringify({ 'Analytic Rule Ids': JSON.stringify([r?.name ?? name]), 'Analytic Rule Name': r?.properties.displayName ?? name }),
          Tactics: '',
          Techniques: '',
        });
      }
    },
    recordRuns(name, runs) {
      const r = ruleByName(name);
      for (const run of runs) {
        rows.get('SentinelHealth')!.push({
          TimeGenerated: run.time,
          OperationName: 'Scheduled analytics rule run',
          SentinelResourceId: `${rulesPath()}/${r?.name ?? name}`,
          SentinelResourceName: String(r?.properties.displayName ?? name),
          SentinelResourceType: 'Analytics Rule',
          SentinelResourceKind: 'Scheduled',
          Status: run.status,
          Description: run.status === 'Failure' ? 'The rule failed to run.' : 'The rule ran successfully.',
          Reason: run.reason ?? '',
          WorkspaceId: ids.workspaceId,
          RecordId: randomUUID(),
          ExtendedProperties: { QueryResultAmount: 0 },
        });
      }
    },
    expireCredentials() {
      credentialsExpired = true;
    },
    restoreCredentials() {
      credentialsExpired = false;
    },
    fault(f) {
      faults.push({ ...f, remaining: f.times });
    },
    requests: () => [...log],
    writes: () => [...writeLog],
    tokenRequests: () => [...tokenLog],
    revokeTokens() {
      for (const t of tokens.values()) t.exp = 0;
    },
    rule(name) {
      const r = ruleByName(name);
      return r ? { name: r.name, etag: r.etag, properties: { ...r.properties } } : undefined;
    },
    issueToken(which) {
      const token = randomBytes(24).toString('base64url');
      tokens.set(token, { aud: which === 'arm' ? base.arm : base.la, exp: Date.now() + lifetime * 1000 });
      return token;
    },
    async send(server, req) {
      const url = new URL(req.path, base[server]);
      const transport = url.protocol === 'https:' ? https : http;
      return new Promise((resolve, reject) => {
        const r = transport.request(url, { method: req.method, headers: req.headers ?? {}, ...(options.tls ? { ca: options.tls.cert } : {}) }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined, headers: res.headers });
          });
        });
        r.on('error', reject);
        if (req.body !== undefined) r.write(req.body);
        r.end();
      });
    },
    async close() {
      for (const { server } of servers) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
  return fake;
}

function basename(path: string): string {
  return path.split(/[\\/]/).pop() ?? '';
}

/** Defender keeps the account's domain apart from its name (`CORP\alice` → `corp`, `alice`). */
function splitUser(user: string | undefined): [string, string] {
  if (!user) return ['', ''];
  const i = user.indexOf('\\');
  return i < 0 ? ['', user] : [user.slice(0, i).toLowerCase(), user.slice(i + 1)];
}

/** The query API's timespan: `start/end`, `start/duration`, `duration/end`, or a duration ending now. */
function parseTimespan(value: string): { from: Date; to: Date } | null {
  const parts = value.split('/');
  const at = (s: string) => {
    const t = Date.parse(s);
    return Number.isFinite(t) && /^\d{4}-/.test(s) ? t : null;
  };
  if (parts.length === 1) {
    const d = isoDurationMs(parts[0]!);
    return d === null ? null : { from: new Date(Date.now() - d), to: new Date() };
  }
  if (parts.length !== 2) return null;
  const [a, b] = parts as [string, string];
  const [ta, tb, da, db] = [at(a), at(b), isoDurationMs(a), isoDurationMs(b)];
  if (ta !== null && tb !== null) return ta <= tb ? { from: new Date(ta), to: new Date(tb) } : null;
  if (ta !== null && db !== null) return { from: new Date(ta), to: new Date(ta + db) };
  if (da !== null && tb !== null) return { from: new Date(tb - da), to: new Date(tb) };
  return null;
}
