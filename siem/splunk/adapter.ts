import { remoteCapabilities } from '../remote/capabilities';
import { compileRemote } from '../remote/compile';
import { fixtureOutcomes } from '../fixture-outcomes';
import type { TargetMapping } from '../../sigma/pipelines';
import { mappingOf } from '../remote/mapping';
import type { SigmaRule } from '../../sigma/model';
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
  type RunStats,
  type TargetObject,
  type TimeWindow,
  type UndeployResult,
  type WindowChunk,
  type WindowCountResult,
  type WindowSearchResult,
} from '../adapter';
import { isSiemRequestError } from '../remote/errors';
import { describeDeployment, NAME_PREFIX, objectName, ownedOrUnmarked, queryHash, readMarker, refuseForeignObject, type DeployedMarker } from '../remote/deployed-marker';
import type { RemoteAdapter, RemoteTargetBinding } from '../remote/remote-kind';
import { daysOf, fillDays, liveSlice, sliceWindow } from '../remote/windows';
import { SplunkClient, type SplunkEntry } from './client';
import { cronSchedule, dispatchEarliest, indexes, type SplunkConnection } from './connection';
import {
  mappedFieldName,
  conditionOf,
  deployedSearch,
  epochSeconds,
  eventsSearch,
  FIXTURE_FIELD,
  fixtureSearch,
  perDaySearch,
  queryOfDeployedSearch,
  quoteSpl,
  scannedSearch,
  splField,
  windowParams,
} from './spl';

const DAY_MS = 86_400_000;
const DEFAULT_LIMIT = 1000;

/** What a saved search's `content` holds, as far as detflow reads it. */
interface SavedSearchContent {
  readonly search?: string;
  readonly description?: string;
  readonly disabled?: boolean | string | number;
  readonly is_scheduled?: boolean | string | number;
}

interface FiredAlertContent {
  readonly trigger_time?: number | string;
  readonly savedsearch_name?: string;
}

/** Sigma levels as Splunk's `alert.severity` (1 info … 5 critical). */
const SEVERITY: Readonly<Record<string, number>> = { informational: 1, low: 2, medium: 3, high: 4, critical: 5 };

/** Scheduler log statuses that end a scheduled run, and those of them that are failures (skipped runs never ran). */
const FINAL_STATUSES = new Set(['success', 'skipped', 'delegated_remote_completion', 'delegated_remote_error']);
const FAILED_STATUSES = new Set(['skipped', 'delegated_remote_error']);

function truthy(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 'true' || v === 'True';
}

function num(v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : 0;
}

/** Splunk's `_time` in results: an ISO 8601 text with offset (`2024-05-01T10:00:00.000+00:00`) or epoch seconds. */
function timeOf(v: unknown): Date | null {
  if (typeof v === 'number') return new Date(v * 1000);
  if (typeof v !== 'string' || v === '') return null;
  if (/^\d+(\.\d+)?$/.test(v)) return new Date(Number(v) * 1000);
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t);
}

/**
 * The `splunk` target kind: rules become scheduled saved searches with alerting on a Splunk
 * Enterprise or Splunk Cloud Platform instance, reached over its REST API (management port).
 * Searches (replay, shadow, fixtures, health) are one-shot search jobs. See docs/siem/splunk.md.
 */
export class SplunkAdapter implements RemoteAdapter {
  readonly kind = 'splunk' as const;
  private readonly client: SplunkClient;
  private readonly connection: SplunkConnection;
  private readonly indexes: string[];
  /** The data model the target's events follow (CIM, raw Sysmon), with the target's field overrides. */
  readonly mapping: TargetMapping;

  constructor(private readonly binding: RemoteTargetBinding<SplunkConnection>) {
    this.connection = binding.connection;
    this.mapping = mappingOf('splunk', binding.connection);
    this.indexes = indexes(binding.connection);
    this.client = new SplunkClient(binding.connection, binding.targetName);
  }

  capabilities(): AdapterCapabilities {
    return remoteCapabilities('spl');
  }

  compile(rule: SigmaRule): CompileResult {
    return compileRemote(rule, 'splunk', this.mapping.pipeline);
  }

  /**
   * The fixture events, mapped to the CIM field names the query reads, are generated inside one
   * search (`| makeresults format=json data=…`) with their position in `_fixture`; the rule's
   * condition (without its logsource prefix: fixtures carry no CIM tags) filters them and the
   * positions that remain are the fixtures that matched. Each event's original JSON is its `_raw`,
   * so Sigma keyword searches see the whole event.
   */
  async runFixtures(rule: CompiledRule, fixtures: readonly FixtureCase[]): Promise<FixtureOutcome[]> {
    if (fixtures.length === 0) return [];
    const rows = fixtures.map((f, i) => {
      const row: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(f.event)) row[mappedFieldName(rule.logsource, k, this.mapping.pipeline)] = v;
      row._raw = JSON.stringify(f.event);
      row[FIXTURE_FIELD] = i;
      return row;
    });
    const { results } = await this.client.oneshot(fixtureSearch(rows, conditionOf(rule.query, rule.logsource, this.mapping.pipeline)), null);
    const matching = new Set(results.map((r) => Number(r[FIXTURE_FIELD])));
    return fixtureOutcomes(rule, fixtures, (i) => matching.has(i), ' in Splunk');
  }

  async count(_tenantId: string, _targetId: string, rule: CompiledRule, window: TimeWindow): Promise<WindowCountResult> {
    const started = Date.now();
    const { matched, scanned, perDay } = await this.perDay(rule, window);
    return { matched, scanned, perDay, bytesScanned: 0, durationMs: Date.now() - started };
  }

  async search(_tenantId: string, _targetId: string, rule: CompiledRule, window: TimeWindow, options: { limit?: number } = {}): Promise<WindowSearchResult> {
    const started = Date.now();
    const limit = Math.max(0, options.limit ?? DEFAULT_LIMIT);
    const [figures, found] = await Promise.all([this.perDay(rule, window), this.events(rule, window, limit)]);
    return { ...figures, events: found.events, truncated: found.truncated || figures.matched > found.events.length, bytesScanned: 0, durationMs: Date.now() - started };
  }

  planChunks(_tenantId: string, _targetId: string, window: TimeWindow, _targetEvents: number): Promise<WindowChunk[]> {
    return Promise.resolve(sliceWindow(window, 1));
  }

  /** Event time, in epoch milliseconds, up to which Splunk is taken to have indexed everything: now − `ingest_lag_seconds`. */
  latestCursor(_tenantId: string, _targetId: string): Promise<number> {
    return Promise.resolve(this.binding.now().getTime() - this.lagMs());
  }

  async evaluateSince(_tenantId: string, _targetId: string, rule: CompiledRule, cursor: number, options: { limit?: number } = {}): Promise<LiveEvaluationResult> {
    const started = Date.now();
    const slice = liveSlice(cursor, this.binding.now(), this.lagMs());
    if (!slice) return { cursor, matched: 0, events: [], truncated: false, scanned: 0, bytesScanned: 0, durationMs: Date.now() - started };
    const limit = Math.max(0, options.limit ?? DEFAULT_LIMIT);
    const [found, scanned] = await Promise.all([this.events(rule, slice, limit), this.total(scannedSearch(this.indexes, rule.logsource, this.mapping.pipeline), slice)]);
    const matched = found.truncated ? await this.total(deployedSearch(this.indexes, rule.query), slice) : found.events.length;
    const events: CursorEvent[] = found.events.map((e) => ({ ...e, seq: e.time.getTime() }));
    return { cursor: slice.to.getTime(), matched, events, truncated: found.truncated, scanned, bytesScanned: 0, durationMs: Date.now() - started };
  }

  /**
   * Create-or-update of the saved search `detflow-<ruleId>`, read first: when it already runs this
   * deployment's search with this deployment's marker and is enabled, nothing is written.
   */
  async deploy(request: DeployRequest): Promise<DeployResult> {
    const { rule } = request;
    const name = objectName(rule.ruleId);
    const search = deployedSearch(this.indexes, rule.query);
    const marker: DeployedMarker = {
      deploymentId: request.deploymentId,
      tenantId: request.tenantId,
      targetId: request.targetId,
      version: rule.version,
      queryHash: queryHash(rule.query),
    };
    const description = describeDeployment(rule.title, marker);
    const existing = await this.savedSearch(name);
    const previous = existing ? readMarker(existing.content.description) : null;
    refuseForeignObject('splunk', name, previous, request);
    const superseded = previous && previous.deploymentId !== request.deploymentId ? previous.deploymentId : null;
    const deployment = (deployedAt: Date): DeployedRule => ({
      deploymentId: request.deploymentId,
      tenantId: request.tenantId,
      targetId: request.targetId,
      ruleId: rule.ruleId,
      version: rule.version,
      query: rule.query,
      ...(rule.logsource ? { logsource: rule.logsource } : {}),
      state: 'active',
      deployedAt,
    });
    const asWanted = (s: SplunkEntry<SavedSearchContent>) => s.content.search === search && s.content.description === description && !truthy(s.content.disabled);
    if (existing && asWanted(existing)) return { changed: false, deployment: deployment(this.updatedAt(existing)), superseded: null };
    const fields = {
      search,
      description,
      disabled: 0,
      is_scheduled: 1,
      cron_schedule: cronSchedule(this.connection),
      'dispatch.earliest_time': dispatchEarliest(this.connection),
      'dispatch.latest_time': this.connection.dispatch_latest,
      alert_type: 'number of events',
      alert_comparator: 'greater than',
      alert_threshold: 0,
      'alert.track': 1,
      'alert.digest_mode': 1,
      'alert.expires': this.connection.alert_expires,
      'alert.severity': SEVERITY[rule.level ?? ''] ?? 3,
      actions: this.connection.alert_action ?? '',
    };
    type Written = { entry?: Array<SplunkEntry<SavedSearchContent>> };
    const update = () => this.client.post<Written>(this.savedSearchPath(name), fields);
    let written;
    if (existing) written = await update();
    else {
      try {
        written = await this.client.post<Written>(this.client.ns('saved/searches'), { name, ...fields });
      } catch (err) {
        // Created meanwhile (another attempt of this deployment, or its own earlier request the SIEM
        // held): when it is already as wanted — a dead attempt's create landing after its retry
        // wrote it — nothing is written; otherwise it is updated.
        if (!(isSiemRequestError(err) && err.details.status === 409)) throw err;
        const now = await this.savedSearch(name);
        refuseForeignObject('splunk', name, now ? readMarker(now.content.description) : null, request);
        if (now && asWanted(now)) return { changed: false, deployment: deployment(this.updatedAt(now)), superseded: null };
        written = await update();
      }
    }
    const entry = written.body?.entry?.[0];
    return { changed: true, deployment: deployment(entry ? this.updatedAt(entry) : this.binding.now()), superseded };
  }

  /**
   * Deletes the saved search that carries this deployment's marker. Deleting (not disabling) is
   * detflow's rollback on Splunk: a disabled search would still hold the rule's name and show up
   * in the inventory as a detflow object, and a later deploy rewrites the object anyway.
   */
  async undeploy(tenantId: string, deploymentId: string): Promise<UndeployResult> {
    const found = (await this.detflowSearches()).find((e) => {
      const m = readMarker(e.content.description);
      return m !== null && m.deploymentId === deploymentId && m.tenantId === tenantId;
    });
    if (!found) return { changed: false };
    const status = await this.client.delete(this.savedSearchPath(found.name), { accept: [404] });
    return { changed: status !== 404 };
  }

  async listDeployed(tenantId: string, targetId?: string): Promise<DeployedRule[]> {
    const out: DeployedRule[] = [];
    for (const e of await this.detflowSearches()) {
      const m = readMarker(e.content.description);
      if (!m || m.tenantId !== tenantId || (targetId !== undefined && m.targetId !== targetId)) continue;
      const search = e.content.search ?? '';
      out.push({
        deploymentId: m.deploymentId,
        tenantId: m.tenantId,
        targetId: m.targetId,
        ruleId: e.name.slice(NAME_PREFIX.length),
        version: m.version,
        query: queryOfDeployedSearch(this.indexes, search) ?? search,
        state: 'active',
        deployedAt: this.updatedAt(e),
      });
    }
    return out;
  }

  /** Every saved search named `detflow-*` in the target's app, with what its marker and its search say. */
  async inventory(tenantId: string, targetId: string): Promise<TargetObject[]> {
    const mine = (await this.detflowSearches()).filter((e) => ownedOrUnmarked(readMarker(e.content.description), tenantId, targetId));
    return mine.map((e) => {
      const m = readMarker(e.content.description);
      const search = e.content.search ?? '';
      const query = queryOfDeployedSearch(this.indexes, search);
      return {
        name: e.name,
        ruleId: e.name.slice(NAME_PREFIX.length) || null,
        deploymentId: m?.deploymentId ?? null,
        version: m?.version ?? null,
        query: search,
        queryUnchanged: m !== null && query !== null && queryHash(query) === m.queryHash,
        enabled: !truthy(e.content.disabled),
      };
    });
  }

  /** Triggered alerts of the rule's saved search (`alerts/fired_alerts/{name}`), by trigger time; Splunk keeps them for `alert.expires`. */
  async alertStats(_tenantId: string, ruleId: string, window: TimeWindow): Promise<AlertStats> {
    const name = objectName(ruleId);
    const entries = await this.client.list<FiredAlertContent>(`/services/alerts/fired_alerts/${encodeURIComponent(name)}`, {}, { accept: [404] });
    const times = entries
      .map((e) => timeOf(e.content.trigger_time))
      .filter((t): t is Date => t !== null && t.getTime() >= window.from.getTime() && t.getTime() < window.to.getTime())
      .sort((a, b) => a.getTime() - b.getTime());
    const perDay = new Map<string, number>();
    for (const t of times) perDay.set(t.toISOString().slice(0, 10), (perDay.get(t.toISOString().slice(0, 10)) ?? 0) + 1);
    return {
      ruleId,
      alerts: times.length,
      perDay: daysOf(window).map((day) => ({ day, alerts: perDay.get(day) ?? 0 })),
      firstAlertAt: times[0] ?? null,
      lastAlertAt: times[times.length - 1] ?? null,
    };
  }

  /**
   * Scheduled runs of the rule's saved search from the scheduler log (`index=_internal
   * sourcetype=scheduler`: one event per run with `status`, `run_time`, `reason`), and the events
   * they scanned from the audit log (`index=_audit action=search info=completed`: `scan_count`).
   */
  async runStats(_tenantId: string, ruleId: string, window: TimeWindow): Promise<RunStats> {
    const name = quoteSpl(objectName(ruleId));
    const app = quoteSpl(this.connection.app);
    const scheduler = `search index=_internal sourcetype=scheduler savedsearch_name=${name} app=${app}`;
    const params = windowParams(window);
    const [byStatus, lastFailure, audit] = await Promise.all([
      this.client.oneshot(`${scheduler} | stats count, avg(run_time) as mean_run_time, max(run_time) as max_run_time, max(_time) as last_time by status`, params),
      this.client.oneshot(`${scheduler} status!=success status!=continued status!=delegated_remote | head 1 | table _time status reason`, params),
      this.client.oneshot(`search index=_audit action=search info=completed savedsearch_name=${name} | stats sum(scan_count) as scanned`, params),
    ]);
    let runs = 0;
    let failedRuns = 0;
    let timedRuns = 0;
    let totalSeconds = 0;
    let maxSeconds = 0;
    let last: Date | null = null;
    for (const row of byStatus.results) {
      const status = String(row.status ?? '');
      if (!FINAL_STATUSES.has(status)) continue;
      const n = num(row.count);
      runs += n;
      if (FAILED_STATUSES.has(status)) failedRuns += n;
      if (row.mean_run_time !== undefined && row.mean_run_time !== null && row.mean_run_time !== '') {
        timedRuns += n;
        totalSeconds += num(row.mean_run_time) * n;
        maxSeconds = Math.max(maxSeconds, num(row.max_run_time));
      }
      const at = timeOf(row.last_time);
      if (at && (!last || at > last)) last = at;
    }
    const failure = lastFailure.results[0];
    return {
      ruleId,
      runs,
      failedRuns,
      eventsScanned: num(audit.results[0]?.scanned),
      meanDurationMs: timedRuns === 0 ? 0 : Math.round((totalSeconds / timedRuns) * 1000),
      maxDurationMs: Math.round(maxSeconds * 1000),
      lastRunAt: last,
      lastError: failure ? `${String(failure.status ?? 'failed')}${failure.reason ? `: ${String(failure.reason)}` : ''}` : null,
    };
  }

  /** Two searches over the logsource's events: per-field `count(field)` since `since`, and the newest event at any time. */
  async fieldPresence(request: FieldPresenceRequest): Promise<FieldPresenceResult> {
    const base = scannedSearch(this.indexes, request.logsource, this.mapping.pipeline);
    const aggregates = request.fields.map((f, i) => `count(${splField(f)}) as detflow_f${i}`);
    const now = this.binding.now();
    const [counts, newest] = await Promise.all([
      this.client.oneshot(`${base} | stats ${['count as detflow_events', ...aggregates].join(', ')}`, { earliest: epochSeconds(request.since), latest: epochSeconds(now) }),
      this.client.oneshot(`${base} | head 1 | table _time`, null),
    ]);
    const row = counts.results[0] ?? {};
    const fields: Record<string, number> = {};
    request.fields.forEach((f, i) => (fields[f] = num(row[`detflow_f${i}`])));
    return { events: num(row.detflow_events), fields, newestEventTime: timeOf(newest.results[0]?._time) };
  }

  close(): void {
    this.client.close();
  }

  // --- helpers -------------------------------------------------------------------------------

  private lagMs(): number {
    return this.connection.ingest_lag_seconds * 1000;
  }

  private savedSearchPath(name: string): string {
    return this.client.ns(`saved/searches/${encodeURIComponent(name)}`);
  }

  private async savedSearch(name: string): Promise<SplunkEntry<SavedSearchContent> | null> {
    const { status, body } = await this.client.get<{ entry?: Array<SplunkEntry<SavedSearchContent>> }>(this.savedSearchPath(name), {}, { accept: [404] });
    if (status === 404) return null;
    return body?.entry?.find((e) => e.name === name) ?? null;
  }

  /** The saved searches of the target's app named under detflow's scheme. */
  private async detflowSearches(): Promise<Array<SplunkEntry<SavedSearchContent>>> {
    const entries = await this.client.list<SavedSearchContent>(this.client.ns('saved/searches'), { search: `name=${NAME_PREFIX}*` });
    return entries.filter((e) => e.name.startsWith(NAME_PREFIX));
  }

  private updatedAt(entry: { readonly updated?: string }): Date {
    const t = entry.updated ? Date.parse(entry.updated) : NaN;
    return Number.isNaN(t) ? this.binding.now() : new Date(t);
  }

  /** Matched and scanned events per UTC day of the window. */
  private async perDay(rule: CompiledRule, window: TimeWindow): Promise<{ matched: number; scanned: number; perDay: WindowCountResult['perDay'] }> {
    const params = windowParams(window);
    const [matchedRows, scannedRows] = await Promise.all([
      this.client.oneshot(perDaySearch(deployedSearch(this.indexes, rule.query)), params),
      this.client.oneshot(perDaySearch(scannedSearch(this.indexes, rule.logsource, this.mapping.pipeline)), params),
    ]);
    const counts = new Map<string, { scanned: number; matched: number }>();
    const day = (row: Record<string, unknown>) => new Date(num(row.detflow_day) * DAY_MS).toISOString().slice(0, 10);
    for (const row of scannedRows.results) counts.set(day(row), { scanned: num(row.count), matched: 0 });
    for (const row of matchedRows.results) {
      const c = counts.get(day(row)) ?? { scanned: 0, matched: 0 };
      counts.set(day(row), { scanned: Math.max(c.scanned, num(row.count)), matched: num(row.count) });
    }
    const perDay = fillDays(window, counts);
    return { matched: perDay.reduce((s, d) => s + d.matched, 0), scanned: perDay.reduce((s, d) => s + d.scanned, 0), perDay };
  }

  private async total(search: string, window: TimeWindow): Promise<number> {
    const { results } = await this.client.oneshot(`${search} | stats count`, windowParams(window));
    return num(results[0]?.count);
  }

  /** The window's matched events, oldest first, at most `limit` (one more is asked for to tell whether there were more). */
  private async events(rule: CompiledRule, window: TimeWindow, limit: number): Promise<{ events: MatchedEvent[]; truncated: boolean }> {
    const { results } = await this.client.oneshot(eventsSearch(deployedSearch(this.indexes, rule.query), limit + 1), windowParams(window), { rf: '*' });
    const events: MatchedEvent[] = [];
    for (const r of results.slice(0, limit)) {
      const time = timeOf(r._time);
      if (!time) continue;
      const event: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(r)) if (!k.startsWith('_') || k === '_raw') event[k] = v;
      events.push({ eventId: this.eventId(r, time), time, event });
    }
    return { events, truncated: results.length > limit };
  }

  /** Splunk's address of an event: its index, bucket (`_bkt`) and offset in it (`_cd`); the time and raw text when those are missing. */
  private eventId(r: Record<string, unknown>, time: Date): string {
    if (typeof r._cd === 'string' && r._cd !== '') return `${String(r.index ?? '')}:${String(r._bkt ?? '')}:${r._cd}`;
    return `${time.getTime()}:${queryHash(String(r._raw ?? JSON.stringify(r)))}`;
  }
}
