import { fixtureOutcomes } from '../fixture-outcomes';
import {
  MissingCapability,
  type AdapterCapabilities,
  type AlertStats,
  type CompiledRule,
  type CompileResult,
  type DeployedRule,
  type DeployRequest,
  type DeployResult,
  type FieldPresenceRequest,
  type FieldPresenceResult,
  type FixtureCase,
  type FixtureOutcome,
  type LiveEvaluationResult,
  type RulesetMember,
  type RunStats,
  type SiemAdapter,
  type TargetObject,
  type TimeWindow,
  type UndeployResult,
  type WindowChunk,
  type WindowCountResult,
  type WindowSearchResult,
} from '../adapter';
import { DeploymentRegistry } from './deployments';
import type { LocalEventStore } from './event-store';
import type { LocalRuleset } from './ruleset-scan';

/**
 * How a rule becomes a WHERE expression over the local store. The Sigma engine's DuckDB SQL
 * backend is one; it receives the store's field mapping so hot fields read their columns.
 */
export type LocalRuleCompiler<TRule> = (rule: TRule, fields: LocalFieldMapping) => CompileResult;

/** How many rules become one in-process matcher for a shared scan (evaluateRulesSince). */
export type LocalRulesetCompiler<TRule> = (rules: readonly TRule[]) => LocalRuleset;

export interface LocalFieldMapping {
  fieldExpression(field: string): string;
  existsExpression(field: string): string;
}

export interface LocalAdapterOptions<TRule> {
  readonly store: LocalEventStore;
  readonly compiler: LocalRuleCompiler<TRule>;
  /** Without one, evaluateRulesSince is not offered and every rule is evaluated alone. */
  readonly rulesetCompiler?: LocalRulesetCompiler<TRule>;
  /** Clock for deployment times (tests pin it). */
  readonly now?: () => Date;
}

/** The `local` target kind: an embedded SIEM over a LocalEventStore. */
export class LocalSiemAdapter<TRule = unknown> implements SiemAdapter<TRule> {
  readonly kind = 'local' as const;
  private readonly store: LocalEventStore;
  private readonly compiler: LocalRuleCompiler<TRule>;
  private readonly now: () => Date;
  private readonly deployments: DeploymentRegistry;
  private readonly rulesetCompiler: LocalRulesetCompiler<TRule> | undefined;
  /** The last ruleset compiled per tenant and target, with the fingerprints it was compiled for. */
  private readonly rulesets = new Map<string, { fingerprints: string; ruleset: LocalRuleset }>();
  readonly evaluateRulesSince?: (
    tenantId: string,
    targetId: string,
    members: readonly RulesetMember<TRule>[],
    options?: { limit?: number },
  ) => Promise<Array<LiveEvaluationResult | null>>;

  constructor(options: LocalAdapterOptions<TRule>) {
    this.store = options.store;
    this.compiler = options.compiler;
    this.rulesetCompiler = options.rulesetCompiler;
    if (this.rulesetCompiler) this.evaluateRulesSince = (tenantId, targetId, members, opts) => this.rulesSince(tenantId, targetId, members, opts);
    this.now = options.now ?? (() => new Date());
    this.deployments = new DeploymentRegistry(this.store);
  }

  capabilities(): AdapterCapabilities {
    return {
      queryLanguage: 'duckdb-sql',
      fixtures: true,
      historicalSearch: true,
      liveEvaluation: true,
      deploy: true,
      // Scheduled detection on local targets is the service's (activities/detection.ts): alerts and
      // runs are in its database, not in this target.
      alertStats: false,
      runStats: false,
      fieldPresence: true,
      maxSearchWindowDays: null,
    };
  }

  compile(rule: TRule): CompileResult {
    return this.compiler(rule, {
      fieldExpression: (f) => this.store.fieldExpression(f),
      existsExpression: (f) => this.store.existsExpression(f),
    });
  }

  /**
   * Fixtures are the rule's own examples: the logsource is not checked against them (they carry
   * none), only the detection query.
   */
  async runFixtures(rule: CompiledRule, fixtures: readonly FixtureCase[]): Promise<FixtureOutcome[]> {
    const matching = new Set(
      await this.store.withFixtureTable(
        fixtures.map((f) => f.event),
        (table) => table.matching(rule.query),
      ),
    );
    return fixtureOutcomes(rule, fixtures, (i) => matching.has(i + 1));
  }

  async count(tenantId: string, targetId: string, rule: CompiledRule, window: TimeWindow): Promise<WindowCountResult> {
    return this.store.count(tenantId, targetId, rule.query, window, rule.logsource);
  }

  async search(tenantId: string, targetId: string, rule: CompiledRule, window: TimeWindow, options: { limit?: number } = {}): Promise<WindowSearchResult> {
    return this.store.search(tenantId, targetId, rule.query, window, { ...options, ...(rule.logsource ? { logsource: rule.logsource } : {}) });
  }

  planChunks(tenantId: string, targetId: string, window: TimeWindow, targetEvents: number): Promise<WindowChunk[]> {
    return this.store.planChunks(tenantId, targetId, window, targetEvents);
  }

  /** The store's cursor is store-wide (one commit order for every tenant and target), so it serves any target. */
  latestCursor(_tenantId: string, _targetId: string): Promise<number> {
    return this.store.latestCursor();
  }

  evaluateSince(tenantId: string, targetId: string, rule: CompiledRule, cursor: number, options: { limit?: number } = {}): Promise<LiveEvaluationResult> {
    return this.store.since(tenantId, targetId, rule.query, cursor, { ...options, ...(rule.logsource ? { logsource: rule.logsource } : {}) });
  }

  /**
   * evaluateSince for many rules over one scan (ruleset-scan.ts). The rules are compiled once for
   * the in-process evaluator and kept while the same rules, in the same order, come back (a pass of
   * scheduled detection over an unchanged set of live rules).
   */
  private async rulesSince(
    tenantId: string,
    targetId: string,
    members: readonly RulesetMember<TRule>[],
    options: { limit?: number } = {},
  ): Promise<Array<LiveEvaluationResult | null>> {
    const key = `${tenantId}\u0000${targetId}`;
    const fingerprints = members.map((m) => m.fingerprint).join('\u0000');
    let cached = this.rulesets.get(key);
    if (cached?.fingerprints !== fingerprints) {
      cached = { fingerprints, ruleset: this.rulesetCompiler!(members.map((m) => m.rule)) };
      this.rulesets.set(key, cached);
    }
    return this.store.rulesetSince(
      tenantId,
      targetId,
      cached.ruleset,
      members.map((m) => ({ where: m.compiled.query, cursor: m.cursor, ...(m.compiled.logsource ? { logsource: m.compiled.logsource } : {}) })),
      { limit: options.limit ?? 1000 },
    );
  }

  deploy(request: DeployRequest): Promise<DeployResult> {
    return this.deployments.deploy(request, this.now());
  }

  undeploy(tenantId: string, deploymentId: string): Promise<UndeployResult> {
    return this.deployments.undeploy(tenantId, deploymentId, this.now());
  }

  async listDeployed(tenantId: string, targetId?: string): Promise<DeployedRule[]> {
    return (await this.deployments.listActive(tenantId, targetId)).map(({ detectionCursor: _cursor, ...d }) => d);
  }

  /**
   * The local target's active deployments, each named by its rule id. Its queries are the ones
   * detflow wrote (nothing else edits the store), so drift here is a deployment that is missing,
   * extra, or a different version from the one the service's records say is live.
   */
  async inventory(tenantId: string, targetId: string): Promise<TargetObject[]> {
    return (await this.deployments.listActive(tenantId, targetId)).map((d) => ({
      name: d.ruleId,
      ruleId: d.ruleId,
      deploymentId: d.deploymentId,
      version: d.version,
      query: d.query,
      queryUnchanged: true,
      enabled: true,
    }));
  }

  alertStats(_tenantId: string, _ruleId: string, _window: TimeWindow): Promise<AlertStats> {
    return Promise.reject(new MissingCapability(this.kind, 'alertStats', "the service's database holds the alerts of local targets"));
  }

  runStats(_tenantId: string, _ruleId: string, _window: TimeWindow): Promise<RunStats> {
    return Promise.reject(new MissingCapability(this.kind, 'runStats', "the service's database holds the detection runs of local targets"));
  }

  fieldPresence(request: FieldPresenceRequest): Promise<FieldPresenceResult> {
    return this.store.fieldPresence(request.tenantId, request.targetId, request.logsource, request.fields, request.since);
  }
}
