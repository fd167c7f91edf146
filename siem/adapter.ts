/**
 * The contract every SIEM target kind implements (`local`, `splunk`, `elastic`, `sentinel`).
 * Activities talk to targets only through this interface, so workflows never know which kind they
 * drive. The `local` adapter implements all of it and is the reference the others are measured
 * against.
 *
 * The rule handed to `compile` is a type parameter: the Sigma engine's rule model for real targets,
 * anything a test needs otherwise. Everything after compilation works on `CompiledRule` (query text
 * + identity), which is what deployments persist.
 */

export type TargetKind = 'local' | 'splunk' | 'elastic' | 'sentinel';

/** Half-open time window [from, to), UTC. */
export interface TimeWindow {
  readonly from: Date;
  readonly to: Date;
}

/** Sigma logsource a compiled rule applies to (routing; not part of the query text on every kind). */
export interface RuleLogsource {
  readonly product?: string;
  readonly category?: string;
  readonly service?: string;
}

/** What a target kind can do; lint reports it and activities check it before calling. */
export interface AdapterCapabilities {
  /** Name of the query language `compile` produces (e.g. `duckdb-sql`, `spl`, `esql`, `kql`). */
  readonly queryLanguage: string;
  /** Fixture tests run in the target itself (isolated from real data). */
  readonly fixtures: boolean;
  /** Historical search/count over a time window (replay, impact projection). */
  readonly historicalSearch: boolean;
  /** Cursor-based "events since" evaluation (shadow runs, scheduled detection). */
  readonly liveEvaluation: boolean;
  readonly deploy: boolean;
  readonly alertStats: boolean;
  readonly runStats: boolean;
  /** Field presence and freshness of the target's events of a logsource (rule health's data quality). */
  readonly fieldPresence: boolean;
  /** Longest window a single search may cover, in days; null when unbounded. */
  readonly maxSearchWindowDays: number | null;
}

/** A call an adapter cannot answer, as its capabilities say; callers check capabilities first. */
export class MissingCapability extends Error {
  override readonly name = 'MissingCapability';
  constructor(
    readonly kind: TargetKind,
    readonly capability: keyof AdapterCapabilities,
    why: string,
  ) {
    super(`${kind} targets lack ${capability}: ${why}`);
  }
}

export interface CompileIssue {
  /** Stable code (e.g. `backend-unsupported`). */
  readonly code: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/** Compilation succeeds with a query or fails with reasons; it never yields a query meaning something else. */
export type CompileResult =
  { readonly ok: true; readonly query: string; readonly logsource?: RuleLogsource } | { readonly ok: false; readonly issues: readonly CompileIssue[] };

/** A rule compiled for one target: the unit that is tested, replayed and deployed. */
export interface CompiledRule {
  readonly ruleId: string;
  /** Rule version; deploying the same id and version twice changes nothing. */
  readonly version: number;
  readonly query: string;
  readonly logsource?: RuleLogsource;
  readonly title?: string;
  readonly level?: string;
  /** The rule's Sigma tags (`attack.t1059.001` …): kinds whose rules carry an ATT&CK mapping write it from them. */
  readonly tags?: readonly string[];
}

export interface FixtureCase {
  readonly name: string;
  readonly event: Record<string, unknown>;
  readonly expect: 'match' | 'no_match';
}

export interface FixtureOutcome {
  readonly name: string;
  readonly expect: 'match' | 'no_match';
  readonly matched: boolean;
  readonly passed: boolean;
  /** Why it failed, in words a rule author acts on; empty when passed. */
  readonly reason: string;
}

export interface DayCount {
  /** UTC day, YYYY-MM-DD. */
  readonly day: string;
  readonly scanned: number;
  readonly matched: number;
}

/** Cost and volume of one search: what replay progress and impact summaries are built from. */
export interface ScanStats {
  readonly scanned: number;
  /** How the figure is computed is the adapter's to document (local: raw JSON bytes of scanned events). */
  readonly bytesScanned: number;
  readonly durationMs: number;
}

export interface WindowCountResult extends ScanStats {
  readonly matched: number;
  readonly perDay: readonly DayCount[];
}

export interface MatchedEvent {
  readonly eventId: string;
  readonly time: Date;
  readonly event: Record<string, unknown>;
}

export interface WindowSearchResult extends WindowCountResult {
  readonly events: readonly MatchedEvent[];
  readonly truncated: boolean;
}

/** A matched event of a live evaluation, with its place in the target's commit order. */
export interface CursorEvent extends MatchedEvent {
  /** The event's cursor position: a cursor at or past it has evaluated it. */
  readonly seq: number;
}

/**
 * One live evaluation: the target's events committed after a cursor and up to the target's cursor
 * at the start of the call, so that consecutive calls see every event once.
 */
export interface LiveEvaluationResult extends ScanStats {
  /** The target's cursor the evaluation went up to; pass it back as `cursor` next time. */
  readonly cursor: number;
  readonly matched: number;
  /** Matched events in commit order, at most `limit`. */
  readonly events: readonly CursorEvent[];
  readonly truncated: boolean;
}

/** One rule of a shared live evaluation (`evaluateRulesSince`). */
export interface RulesetMember<TRule = unknown> {
  /** The rule's text and the settings it was compiled with: members with the same fingerprints, in the same order, reuse what was compiled for them. */
  readonly fingerprint: string;
  readonly rule: TRule;
  readonly compiled: CompiledRule;
  /** Where this rule's evaluation starts, as `evaluateSince`'s cursor. */
  readonly cursor: number;
}

/** A contiguous slice of a window, sized for one replay step (heartbeat, progress, cancellation). */
export interface WindowChunk extends TimeWindow {
  /** Events expected in the chunk (planning estimate). */
  readonly events: number;
}

export interface DeployRequest {
  /** Caller's deployment id (from its own records); the idempotency key of deploy. */
  readonly deploymentId: string;
  readonly tenantId: string;
  /** The target (the service's target id) the rule goes on: it evaluates that target's events. */
  readonly targetId: string;
  readonly rule: CompiledRule;
}

export type DeploymentState = 'active' | 'superseded' | 'undeployed';

export interface DeployedRule {
  readonly deploymentId: string;
  readonly tenantId: string;
  /** null only for a deployment recorded before deployments had a target, not adopted since. */
  readonly targetId: string | null;
  readonly ruleId: string;
  readonly version: number;
  readonly query: string;
  readonly logsource?: RuleLogsource;
  readonly state: DeploymentState;
  readonly deployedAt: Date;
}

export interface DeployResult {
  /** false when this deployment was already in place (a retry, or the same version twice). */
  readonly changed: boolean;
  readonly deployment: DeployedRule;
  /** The deployment this one replaced, if any. */
  readonly superseded: string | null;
}

export interface UndeployResult {
  /** false when nothing was active under that id. */
  readonly changed: boolean;
}

export interface AlertStats {
  readonly ruleId: string;
  readonly alerts: number;
  readonly perDay: ReadonlyArray<{ readonly day: string; readonly alerts: number }>;
  readonly firstAlertAt: Date | null;
  readonly lastAlertAt: Date | null;
}

export interface RunStats {
  readonly ruleId: string;
  readonly runs: number;
  readonly failedRuns: number;
  readonly eventsScanned: number;
  readonly meanDurationMs: number;
  readonly maxDurationMs: number;
  readonly lastRunAt: Date | null;
  readonly lastError: string | null;
}

/** What `fieldPresence` is asked: the fields a rule reads, on the events of its logsource since a time. */
export interface FieldPresenceRequest {
  readonly tenantId: string;
  readonly targetId: string;
  /** The rule's logsource; an empty one means every event of the target. */
  readonly logsource: RuleLogsource;
  /** Field names as the target stores them (after the target's field mapping, if it has one). */
  readonly fields: readonly string[];
  /** Events with an event time at or after it are counted. */
  readonly since: Date;
}

export interface FieldPresenceResult {
  /** Events of the logsource with an event time at or after `since`. */
  readonly events: number;
  /** Per field: how many of those events carry it (an own property whose value is not null). */
  readonly fields: Readonly<Record<string, number>>;
  /** Event time of the newest event of the logsource on the target, at any time; null when it has none. */
  readonly newestEventTime: Date | null;
}

/**
 * One object on a target under detflow's naming scheme, as the target has it now: what drift
 * detection compares with the deployments detflow recorded.
 */
export interface TargetObject {
  /** The object's name on the target (saved search, detection rule, analytics rule). */
  readonly name: string;
  /** The rule the object is named after, when the name follows the naming scheme. */
  readonly ruleId: string | null;
  /** The deployment the object says it is (its marker), or null when it carries none. */
  readonly deploymentId: string | null;
  readonly version: number | null;
  /** The query the object runs now. */
  readonly query: string;
  /** Whether the query is still the one detflow wrote (its hash matches the marker). */
  readonly queryUnchanged: boolean;
  readonly enabled: boolean;
}

/**
 * One target kind, as activities see it. Every call on events names the tenant and the target
 * (the service's target id, stable across renames): an event belongs to the target it was sent to,
 * and a count, search, replay plan or live evaluation reads that target's events only.
 */
export interface SiemAdapter<TRule = unknown> {
  readonly kind: TargetKind;
  /** The data model the target's events follow (a remote target's field mapping and its version); none for local targets, which keep raw events. */
  readonly mapping?: { readonly name: string; readonly version: string };
  capabilities(): AdapterCapabilities;
  compile(rule: TRule): CompileResult;
  runFixtures(rule: CompiledRule, fixtures: readonly FixtureCase[]): Promise<FixtureOutcome[]>;

  count(tenantId: string, targetId: string, rule: CompiledRule, window: TimeWindow): Promise<WindowCountResult>;
  search(tenantId: string, targetId: string, rule: CompiledRule, window: TimeWindow, options?: { limit?: number }): Promise<WindowSearchResult>;
  /** Splits a window of the target's events into chunks of about `targetEvents` events for a chunked replay. */
  planChunks(tenantId: string, targetId: string, window: TimeWindow, targetEvents: number): Promise<WindowChunk[]>;

  /**
   * Live evaluation: the target's cursor now. Events committed after it are new to an evaluation
   * that starts from it (a shadow run, a first detection run).
   */
  latestCursor(tenantId: string, targetId: string): Promise<number>;
  /** Evaluates the rule on the target's events committed after `cursor`. Read-only. */
  evaluateSince(tenantId: string, targetId: string, rule: CompiledRule, cursor: number, options?: { limit?: number }): Promise<LiveEvaluationResult>;
  /**
   * Many rules' `evaluateSince` over one read of the target's events (local targets: scheduled
   * detection of every live rule in one pass). Each answer is what `evaluateSince` would answer for
   * that rule and cursor, except that it may stop earlier (its `cursor` says where); null for a
   * rule this call did not evaluate, which the caller evaluates alone. Read-only. Optional.
   */
  evaluateRulesSince?(tenantId: string, targetId: string, members: readonly RulesetMember<TRule>[], options?: { limit?: number }): Promise<Array<LiveEvaluationResult | null>>;

  deploy(request: DeployRequest): Promise<DeployResult>;
  undeploy(tenantId: string, deploymentId: string): Promise<UndeployResult>;
  /** The tenant's active deployments on one target, or on all its targets of this kind when `targetId` is left out. */
  listDeployed(tenantId: string, targetId?: string): Promise<DeployedRule[]>;

  /** Every object on the target under detflow's naming scheme, deployed by detflow or not (drift detection). */
  inventory(tenantId: string, targetId: string): Promise<TargetObject[]>;

  alertStats(tenantId: string, ruleId: string, window: TimeWindow): Promise<AlertStats>;
  runStats(tenantId: string, ruleId: string, window: TimeWindow): Promise<RunStats>;
  /** Which of `fields` the logsource's recent events carry, and how fresh its newest event is (capability `fieldPresence`). */
  fieldPresence(request: FieldPresenceRequest): Promise<FieldPresenceResult>;
}
