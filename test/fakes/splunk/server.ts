/**
 * A fake Splunk management port (REST API) on loopback: the slice of the API detflow's Splunk
 * adapter uses, as Splunk documents it, refusing every request that departs from it with a 400
 * whose message names what departed.
 *
 * References (written from these pages, nothing copied):
 * - Splunk REST API Reference Manual, Search endpoints: `saved/searches` (GET list, POST create),
 *   `saved/searches/{name}` (GET, POST update, DELETE), `search/jobs` (POST, `exec_mode=oneshot`),
 *   `alerts/fired_alerts/{name}` (GET): https://docs.splunk.com/Documentation/Splunk/9.4.0/RESTREF/RESTsearch
 *   and https://docs.splunk.com/Documentation/SplunkCloud/9.3.2408/RESTREF/RESTsearch
 * - Splunk REST API User Manual, Basic concepts: `output_mode`, pagination and filtering parameters
 *   (`count`, `offset`, `search`), namespaces `/servicesNS/{owner}/{app}/`, Atom feeds rendered as
 *   JSON (`entry[]`, `paging`), error bodies `{"messages":[{"type":"ERROR","text":"…"}]}`; token
 *   authentication (`Authorization: Bearer <token>`, `Splunk <token>`) and HTTP Basic.
 * - savedsearches.conf.spec (settings of a saved search: `search`, `cron_schedule`,
 *   `dispatch.earliest_time`, `alert_type`, `alert_comparator`, `alert_threshold`, `alert.track`,
 *   `alert.digest_mode`, `alert.expires`, `alert.severity`, `actions`, `disabled`, `is_scheduled`).
 * - SPL: test/fakes/splunk/spl.ts (Search Reference: search, makeresults, regex, where, eval,
 *   stats, sort, head, table).
 * - Scheduler log fields (`sourcetype=scheduler`: savedsearch_name, app, status, run_time,
 *   result_count, reason) and audit log search events (`index=_audit action=search
 *   info=completed`: savedsearch_name, scan_count, total_run_time), as Splunk's Monitoring Console
 *   searches read them.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Fault, FakeObject, RecordedRequest } from '../fake-siem';
import { compile, SplError, type Row, type Value } from './spl';

export interface SavedSearch {
  name: string;
  app: string;
  owner: string;
  settings: Record<string, string>;
  updated: Date;
}

export interface FiredAlert {
  readonly savedsearch: string;
  readonly at: Date;
  readonly sid: string;
}

export interface FakeSplunkServerOptions {
  readonly token: string;
  readonly username: string;
  readonly password: string;
  /** Largest page of a collection answer, whatever `count` asks (so that paging is exercised). */
  readonly pageCap: number;
  readonly tls?: { readonly key: string; readonly cert: string };
  readonly now: () => Date;
}

/** Arguments `saved/searches` takes on create (plus `name`) and update; `action.<name>[.<setting>]` too. */
const SAVED_SEARCH_ARGS = new Set([
  'search',
  'description',
  'disabled',
  'is_scheduled',
  'is_visible',
  'cron_schedule',
  'dispatch.earliest_time',
  'dispatch.latest_time',
  'alert_type',
  'alert_comparator',
  'alert_threshold',
  'alert_condition',
  'alert.track',
  'alert.digest_mode',
  'alert.expires',
  'alert.severity',
  'alert.suppress',
  'actions',
]);
const ALERT_TYPES = new Set(['always', 'custom', 'number of events', 'number of hosts', 'number of sources']);
const ALERT_COMPARATORS = new Set(['greater than', 'less than', 'equal to', 'not equal to', 'drops by', 'rises by']);
const ALERT_ACTIONS = new Set(['email', 'webhook', 'script', 'rss', 'lookup', 'logevent', 'summary_index', 'populate_lookup']);
const BOOLEAN = /^(0|1|true|false)$/i;
const CRON_FIELD = /^(\*|\d+(-\d+)?)(\/\d+)?(,(\*|\d+(-\d+)?)(\/\d+)?)*$/;
/** Saved search names Splunk accepts: no slash-like or control characters, at most 255 characters. */
const NAME = /^[^/\\\x00-\x1f]{1,255}$/;
const JOB_ARGS = new Set(['search', 'exec_mode', 'earliest_time', 'latest_time', 'count', 'offset', 'rf', 'output_mode', 'adhoc_search_level']);

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: 'ERROR' | 'FATAL' | 'WARN' = 'ERROR',
  ) {
    super(message);
  }
}

function isoSplunk(at: Date): string {
  return at.toISOString().replace('Z', '+00:00');
}

/** A result value as Splunk's JSON output renders it: text, arrays for multivalue fields, `_time` as ISO text. */
function render(row: Row): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(row)) {
    if (v === null || v === undefined) continue;
    if (k === '_time' && typeof v === 'number') out[k] = isoSplunk(new Date(v * 1000));
    else if (Array.isArray(v)) out[k] = (v as readonly Value[]).map((x) => String(x));
    else out[k] = String(v);
  }
  return out;
}

export class FakeSplunkServer {
  readonly server: http.Server;
  readonly savedSearches = new Map<string, SavedSearch>();
  readonly firedAlerts: FiredAlert[] = [];
  readonly events: Row[] = [];
  readonly faults: Array<Fault & { left: number }> = [];
  readonly log: RecordedRequest[] = [];
  readonly writeLog: RecordedRequest[] = [];
  credentialsExpired = false;
  /** Writes that succeed but whose answer is replaced by a 500 (the answer lost on the way back). */
  lostWriteAnswers = 0;
  /** Every search job's search text, in order (tests read what the adapter sent). */
  readonly searches: string[] = [];

  constructor(private readonly options: FakeSplunkServerOptions) {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.handle(req, res);
    this.server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler) : http.createServer(handler);
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  objects(): FakeObject[] {
    return [...this.savedSearches.values()].map((s) => ({
      name: s.name,
      query: s.settings.search ?? '',
      enabled: !/^(1|true)$/i.test(s.settings.disabled ?? '0'),
      description: s.settings.description ?? '',
    }));
  }

  // --- request handling ----------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const at = new Date();
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const body = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    let status = 500;
    let payload: unknown;
    let headers: Record<string, string> = {};
    let write = false;
    try {
      const fault = this.faults.find((f) => f.left > 0 && (!f.match || f.match.test(`${method} ${url.pathname}`)));
      if (fault) {
        fault.left--;
        if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
        if (fault.status !== undefined) {
          if (fault.retryAfterSeconds !== undefined) headers = { 'retry-after': String(fault.retryAfterSeconds) };
          throw new Refusal(
            fault.status,
            fault.status === 429 ? 'Too many requests; retry later.' : fault.status === 503 ? 'Service Unavailable' : `Fault injected: HTTP ${fault.status}`,
          );
        }
      }
      this.authenticate(req);
      if (url.searchParams.get('output_mode') !== 'json') {
        status = 400;
        res.writeHead(400, { 'content-type': 'text/xml; charset=UTF-8' });
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?>\n<response><messages><msg type="ERROR">This fake answers JSON only: the query string must carry output_mode=json (without it Splunk answers Atom/XML)</msg></messages></response>`,
        );
        this.log.push({ method, path: url.pathname, status, at });
        return;
      }
      let form: URLSearchParams | null = null;
      if (method === 'POST') {
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (type !== 'application/x-www-form-urlencoded')
          throw new Refusal(400, `Content-Type ${type || '(none)'} is not accepted: Splunk's REST API takes application/x-www-form-urlencoded bodies`);
        form = new URLSearchParams(body);
      } else if (body !== '') throw new Refusal(400, `${method} takes no body`);
      const answer = this.route(method, url, form);
      status = answer.status;
      payload = answer.body;
      write = answer.write ?? false;
    } catch (e) {
      if (e instanceof Refusal) {
        status = e.status;
        payload = { messages: [{ type: e.type, text: e.message }] };
      } else {
        status = 500;
        payload = { messages: [{ type: 'ERROR', text: `fake Splunk failed: ${(e as Error).message}` }] };
      }
    }
    const record = { method, path: url.pathname, status, at };
    if (write && status >= 200 && status < 300) {
      this.writeLog.push(record);
      if (this.lostWriteAnswers > 0) {
        this.lostWriteAnswers--;
        status = 500;
        payload = { messages: [{ type: 'ERROR', text: 'Fault injected: the write was done, its answer lost' }] };
      }
    }
    this.log.push({ ...record, status });
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
    res.end(JSON.stringify(payload));
  }

  private authenticate(req: http.IncomingMessage): void {
    const header = req.headers.authorization ?? '';
    const [scheme, credential = ''] = header.split(' ', 2) as [string, string?];
    let ok = false;
    if ((scheme === 'Bearer' || scheme === 'Splunk') && credential === this.options.token) ok = true;
    if (scheme === 'Basic') ok = Buffer.from(credential, 'base64').toString('utf8') === `${this.options.username}:${this.options.password}`;
    if (!ok || this.credentialsExpired) throw new Refusal(401, 'call not properly authenticated', 'WARN');
  }

  private route(method: string, url: URL, form: URLSearchParams | null): { status: number; body: unknown; write?: boolean } {
    const path = url.pathname;
    const ns = /^\/servicesNS\/([^/]+)\/([^/]+)\/saved\/searches(?:\/([^/]+))?\/?$/.exec(path);
    if (ns) {
      const owner = decodeURIComponent(ns[1]!);
      const app = decodeURIComponent(ns[2]!);
      const name = ns[3] === undefined ? undefined : decodeURIComponent(ns[3]);
      if (name === undefined) {
        if (method === 'GET') return { status: 200, body: this.listSavedSearches(app, url) };
        if (method === 'POST') return { status: 201, body: this.createSavedSearch(owner, app, form!), write: true };
        throw new Refusal(405, `${method} is not allowed on saved/searches (GET lists, POST creates)`);
      }
      if (method === 'GET') return { status: 200, body: this.feed([this.findSavedSearch(app, name)]) };
      if (method === 'POST') return { status: 200, body: this.updateSavedSearch(app, name, form!), write: true };
      if (method === 'DELETE') {
        const s = this.findSavedSearch(app, name);
        this.savedSearches.delete(this.key(s.app, s.name));
        return { status: 200, body: this.feed([]), write: true };
      }
      throw new Refusal(405, `${method} is not allowed on saved/searches/{name}`);
    }
    if (/^\/services(?:NS\/[^/]+\/[^/]+)?\/search\/jobs\/?$/.test(path)) {
      if (method !== 'POST') throw new Refusal(405, `${method} on search/jobs: this fake creates jobs only (POST)`);
      return { status: 200, body: this.searchJob(form!) };
    }
    const fired = /^\/services(?:NS\/[^/]+\/[^/]+)?\/alerts\/fired_alerts\/([^/]+)\/?$/.exec(path);
    if (fired) {
      if (method !== 'GET') throw new Refusal(405, `${method} on alerts/fired_alerts/{name}: GET lists the triggered alerts`);
      return { status: 200, body: this.listFiredAlerts(decodeURIComponent(fired[1]!), url) };
    }
    throw new Refusal(404, `No endpoint ${method} ${path} in this fake (it implements saved/searches, search/jobs and alerts/fired_alerts)`);
  }

  private key(app: string, name: string): string {
    return `${app}\u0000${name}`;
  }

  private findSavedSearch(app: string, name: string): SavedSearch {
    const s = this.savedSearches.get(this.key(app, name));
    if (!s) throw new Refusal(404, `Could not find object id=${name}`);
    return s;
  }

  private paging(url: URL): { count: number; offset: number } {
    const count = url.searchParams.get('count') ?? '30';
    const offset = url.searchParams.get('offset') ?? '0';
    if (!/^-?\d+$/.test(count)) throw new Refusal(400, `count must be an integer, not '${count}'`);
    if (!/^\d+$/.test(offset)) throw new Refusal(400, `offset must be a non-negative integer, not '${offset}'`);
    const n = Number(count);
    return { count: n <= 0 ? this.options.pageCap : Math.min(n, this.options.pageCap), offset: Number(offset) };
  }

  private page<T>(items: readonly T[], url: URL): { items: T[]; paging: { total: number; perPage: number; offset: number } } {
    const { count, offset } = this.paging(url);
    return { items: items.slice(offset, offset + count), paging: { total: items.length, perPage: count, offset } };
  }

  private feed(entries: unknown[], paging?: { total: number; perPage: number; offset: number }): unknown {
    return {
      links: {},
      origin: 'https://fake-splunk:8089/services/saved/searches',
      updated: isoSplunk(this.options.now()),
      generator: { build: 'fake', version: '9.4.0' },
      entry: entries.map((e) => (e && typeof e === 'object' && 'settings' in e ? this.entry(e as SavedSearch) : e)),
      paging: paging ?? { total: entries.length, perPage: 30, offset: 0 },
      messages: [],
    };
  }

  private entry(s: SavedSearch): unknown {
    const content: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s.settings)) content[k] = v;
    content.disabled = /^(1|true)$/i.test(s.settings.disabled ?? '0');
    content.is_scheduled = /^(1|true)$/i.test(s.settings.is_scheduled ?? '0');
    return {
      name: s.name,
      id: `https://fake-splunk:8089/servicesNS/${s.owner}/${s.app}/saved/searches/${encodeURIComponent(s.name)}`,
      updated: isoSplunk(s.updated),
      author: s.owner,
      acl: { app: s.app, owner: s.owner, sharing: s.owner === 'nobody' ? 'app' : 'user' },
      content,
    };
  }

  /** The `search` filter of a collection read: `field=value` (with `*`) or free text in any field. */
  private filter(url: URL): (s: SavedSearch) => boolean {
    const search = url.searchParams.get('search');
    if (search === null || search === '') return () => true;
    const m = /^([A-Za-z_.]+)=(.*)$/.exec(search);
    const re = (p: string) =>
      new RegExp(
        `^${p
          .split('*')
          .map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
        'i',
      );
    if (m) {
      const [, field, value] = m as unknown as [string, string, string];
      return (s) => re(value).test(field === 'name' ? s.name : (s.settings[field] ?? ''));
    }
    return (s) => [s.name, ...Object.values(s.settings)].some((v) => v.toLowerCase().includes(search.toLowerCase()));
  }

  private listSavedSearches(app: string, url: URL): unknown {
    const all = [...this.savedSearches.values()].filter((s) => s.app === app || app === '-').filter(this.filter(url));
    all.sort((a, b) => a.name.localeCompare(b.name));
    const { items, paging } = this.page(all, url);
    return this.feed(items, paging);
  }

  private checkSavedSearchArgs(form: URLSearchParams, creating: boolean): Record<string, string> {
    const settings: Record<string, string> = {};
    for (const [k, v] of form) {
      if (k === 'name' && creating) continue;
      if (k === 'output_mode') continue;
      if (!SAVED_SEARCH_ARGS.has(k) && !/^action\.[a-z_]+(\.[A-Za-z_.]+)?$/.test(k)) throw new Refusal(400, `Argument "${k}" is not supported by this handler.`);
      if (k in settings) throw new Refusal(400, `Argument "${k}" was given more than once.`);
      settings[k] = v;
    }
    const bool = (k: string) => {
      if (settings[k] !== undefined && !BOOLEAN.test(settings[k])) throw new Refusal(400, `${k} must be a boolean (0, 1, true, false), not '${settings[k]}'`);
    };
    ['disabled', 'is_scheduled', 'is_visible', 'alert.digest_mode', 'alert.suppress'].forEach(bool);
    if (settings['alert.track'] !== undefined && !/^(0|1|true|false|auto)$/i.test(settings['alert.track']))
      throw new Refusal(400, `alert.track must be true, false or auto, not '${settings['alert.track']}'`);
    if (settings.cron_schedule !== undefined) {
      const fields = settings.cron_schedule.trim().split(/\s+/);
      if (fields.length !== 5 || !fields.every((f) => CRON_FIELD.test(f))) throw new Refusal(400, `Invalid cron_schedule: '${settings.cron_schedule}'`);
    }
    if (settings.alert_type !== undefined && !ALERT_TYPES.has(settings.alert_type)) throw new Refusal(400, `Invalid alert_type: '${settings.alert_type}'`);
    if (settings.alert_comparator !== undefined && !ALERT_COMPARATORS.has(settings.alert_comparator))
      throw new Refusal(400, `Invalid alert_comparator: '${settings.alert_comparator}'`);
    if (settings.alert_threshold !== undefined && !/^\d+(\.\d+)?%?$/.test(settings.alert_threshold))
      throw new Refusal(400, `Invalid alert_threshold: '${settings.alert_threshold}'`);
    if (settings['alert.severity'] !== undefined && !/^[1-6]$/.test(settings['alert.severity']))
      throw new Refusal(400, `alert.severity must be 1 to 6, not '${settings['alert.severity']}'`);
    if (settings['alert.expires'] !== undefined && !/^\d+[smhdp]?$/.test(settings['alert.expires']))
      throw new Refusal(400, `Invalid alert.expires: '${settings['alert.expires']}'`);
    if (settings.actions !== undefined && settings.actions !== '') {
      for (const a of settings.actions.split(',').map((x) => x.trim())) if (!ALERT_ACTIONS.has(a)) throw new Refusal(400, `Unknown alert action '${a}' in actions`);
    }
    for (const k of ['dispatch.earliest_time', 'dispatch.latest_time']) {
      const v = settings[k];
      if (v !== undefined && !/^(now|[+-]?\d+[a-z]+(@[a-z0-9]+)?|@[a-z0-9]+|\d+(\.\d+)?|rt(-?\d+[a-z]+)?)$/.test(v)) throw new Refusal(400, `Invalid ${k}: '${v}'`);
    }
    if (settings.search !== undefined) this.checkSpl(settings.search);
    return settings;
  }

  private checkSpl(search: string): void {
    try {
      compile(search);
    } catch (e) {
      if (e instanceof SplError) throw new Refusal(400, `Error in search: ${e.message}`, 'FATAL');
      throw e;
    }
  }

  private createSavedSearch(owner: string, app: string, form: URLSearchParams): unknown {
    const names = form.getAll('name');
    if (names.length !== 1 || names[0] === '') throw new Refusal(400, 'Missing argument: name');
    const name = names[0]!;
    if (!NAME.test(name)) throw new Refusal(400, `Invalid saved search name '${name}'`);
    if (this.savedSearches.has(this.key(app, name)))
      throw new Refusal(409, `Unable to create saved search with name '${name}'. A saved search with that name already exists.`);
    const settings = this.checkSavedSearchArgs(form, true);
    if (settings.search === undefined || settings.search.trim() === '') throw new Refusal(400, 'Missing argument: search');
    if (/^(1|true)$/i.test(settings.is_scheduled ?? '0') && settings.cron_schedule === undefined) throw new Refusal(400, 'A scheduled search needs cron_schedule');
    const s: SavedSearch = { name, app, owner, settings, updated: this.options.now() };
    this.savedSearches.set(this.key(app, name), s);
    return this.feed([s]);
  }

  private updateSavedSearch(app: string, name: string, form: URLSearchParams): unknown {
    const s = this.findSavedSearch(app, name);
    if (form.has('name')) throw new Refusal(400, 'Argument "name" is not supported by this handler.');
    const settings = this.checkSavedSearchArgs(form, false);
    if (settings.search !== undefined && settings.search.trim() === '') throw new Refusal(400, 'search must not be empty');
    Object.assign(s.settings, settings);
    s.updated = this.options.now();
    return this.feed([s]);
  }

  private listFiredAlerts(name: string, url: URL): unknown {
    const alerts = this.firedAlerts.filter((a) => a.savedsearch === name).sort((a, b) => b.at.getTime() - a.at.getTime());
    if (alerts.length === 0 && ![...this.savedSearches.values()].some((s) => s.name === name)) throw new Refusal(404, `Could not find object id=${name}`);
    const { items, paging } = this.page(alerts, url);
    const entries = items.map((a) => ({
      name: `${a.sid}`,
      updated: isoSplunk(a.at),
      content: {
        savedsearch_name: a.savedsearch,
        sid: a.sid,
        trigger_time: Math.floor(a.at.getTime() / 1000),
        trigger_time_rendered: isoSplunk(a.at),
        alert_type: 'number of events',
        digest_mode: true,
        severity: 3,
        triggered_alerts: '1',
        actions: '',
      },
    }));
    return this.feed(entries, paging);
  }

  private searchJob(form: URLSearchParams): unknown {
    for (const k of form.keys())
      if (!JOB_ARGS.has(k)) throw new Refusal(400, `Argument "${k}" is not supported by this fake's search/jobs (it takes ${[...JOB_ARGS].join(', ')})`);
    const search = form.get('search');
    if (search === null || search.trim() === '') throw new Refusal(400, 'Missing argument: search');
    const mode = form.get('exec_mode') ?? 'normal';
    if (mode !== 'oneshot') throw new Refusal(400, `exec_mode=${mode}: this fake runs oneshot jobs only`);
    const epoch = (k: string): number | undefined => {
      const v = form.get(k);
      if (v === null) return undefined;
      if (!/^\d+(\.\d+)?$/.test(v)) throw new Refusal(400, `${k} must be epoch seconds in this fake (detflow sends epoch times), not '${v}'`);
      return Number(v);
    };
    const earliest = epoch('earliest_time');
    const latest = epoch('latest_time');
    if (earliest !== undefined && latest !== undefined && earliest > latest) throw new Refusal(400, 'earliest_time is after latest_time');
    const countText = form.get('count') ?? '100';
    if (!/^\d+$/.test(countText)) throw new Refusal(400, `count must be a non-negative integer, not '${countText}'`);
    this.searches.push(search);
    let program: ReturnType<typeof compile>;
    try {
      program = compile(search);
    } catch (e) {
      if (e instanceof SplError) throw new Refusal(400, `Error in search: ${e.message}`, 'FATAL');
      throw e;
    }
    const rows = program.run({
      events: () =>
        this.events
          .filter((e) => {
            const t = e._time as number;
            return (earliest === undefined || t >= earliest) && (latest === undefined || t < latest);
          })
          .sort((a, b) => (b._time as number) - (a._time as number))
          .map((e) => ({ ...e })),
    });
    const limit = Number(countText) === 0 ? 50_000 : Number(countText);
    const results = rows.slice(0, limit).map(render);
    const fields = [...new Set(results.flatMap((r) => Object.keys(r)))].map((name) => ({ name }));
    return { preview: false, init_offset: 0, post_process_count: 0, messages: [], fields, results, highlighted: {} };
  }

  newSid(name: string, at: Date): string {
    return `scheduler__nobody__search__RMD5${randomUUID().replace(/-/g, '').slice(0, 16)}_at_${Math.floor(at.getTime() / 1000)}_${name.length}`;
  }
}
