import type { DomainDeps } from '../deps';
import type { Actor } from '../tenants/actor';
import { attackCoverage, type AttackCoverage } from './attack-coverage';
import { alertsRaisedSince, liveDeployments, targetsInScope, workloadAndResolutionsSince, type LiveDeployment, type RaisedRow } from './dashboard-records';
import { mttr, SEVERITY_ORDER, type MttrReport } from './mttr';
import { navigatorLayer, type NavigatorLayer } from './navigator-layer';
import { addDispositions, NO_DISPOSITIONS, noiseRatio, type DispositionCounts, type NoiseRatio } from './noise-ratio';
import { teamWorkload, type TeamWorkloadReport } from './team-workload';
import { valueScores, type ValueScore } from './value-score';
import { forecastAccuracyDistribution, type ForecastDistribution } from './forecast-accuracy';

/**
 * The health dashboard (GET /health/dashboard): ATT&CK coverage of the active rules, noise ratio,
 * team workload, MTTR and the value score of each active rule, for the actor's tenant and the
 * targets of its environments. README "Dashboard" gives every formula; docs/decisions/0056 why.
 *
 * An active rule is a rule with at least one deployment in status `active` on a target in the
 * actor's environments. A demoted deployment raises no alert (it runs in shadow until promoted),
 * so it covers nothing: it is counted apart (`demotedDeployments`). A rule active on several targets
 * or in several versions counts once, with the union of its active versions' tags and the most
 * severe of their levels.
 */

export type ActiveRule = {
  ruleId: string;
  /** The title of its newest active version. */
  title: string;
  level: string | null;
  tags: string[];
  versions: number[];
  targetIds: string[];
};

export type Dashboard = {
  generatedAt: Date;
  window: { duration: string; from: Date; to: Date };
  /** The actor's environments; null for every environment of the tenant. */
  environments: readonly string[] | null;
  activeRules: { rules: number; deployments: number; demotedDeployments: number; reason: string | null };
  coverage: Omit<AttackCoverage, 'perRule'> & { reason: string | null };
  noise: NoiseRatio;
  workload: TeamWorkloadReport;
  mttr: MttrReport;
  valueScores: { rules: ValueScore[]; reason: string | null };
  /** Projected against observed alerts/day of the deployments live in the window. */
  forecastAccuracy: ForecastDistribution;
};

export type DashboardWindow = { duration: string; ms: number };

const NO_ACTIVE_RULE = 'no rule is active on a target in the environments of this token';

const severityRank = (level: string | null) => {
  const i = level === null ? -1 : (SEVERITY_ORDER as readonly string[]).indexOf(level);
  return i >= 0 ? i : SEVERITY_ORDER.length;
};

/** The active deployments folded per rule. */
export function activeRulesOf(live: readonly LiveDeployment[]): ActiveRule[] {
  const rules = new Map<string, ActiveRule & { newest: number }>();
  for (const d of live) {
    if (d.status !== 'active') continue;
    const r = rules.get(d.ruleId) ?? { ruleId: d.ruleId, title: d.title, level: d.level, tags: [], versions: [], targetIds: [], newest: -1 };
    if (d.version > r.newest) ((r.newest = d.version), (r.title = d.title));
    if (severityRank(d.level) < severityRank(r.level)) r.level = d.level;
    r.tags = [...new Set([...r.tags, ...d.tags])];
    if (!r.versions.includes(d.version)) r.versions.push(d.version);
    if (!r.targetIds.includes(d.targetId)) r.targetIds.push(d.targetId);
    rules.set(d.ruleId, r);
  }
  return [...rules.values()].map(({ newest: _, ...r }) => ({ ...r, versions: r.versions.sort((a, b) => a - b) })).sort((a, b) => a.ruleId.localeCompare(b.ruleId));
}

function dispositionsOf(rows: readonly RaisedRow[]): DispositionCounts {
  return rows.reduce<DispositionCounts>((sum, r) => addDispositions(sum, r), NO_DISPOSITIONS);
}

async function activeCoverage(deps: DomainDeps, actor: Actor) {
  const live = await liveDeployments(deps.database.db, actor);
  const rules = activeRulesOf(live);
  return { live, rules, coverage: attackCoverage(rules) };
}

export async function healthDashboard(deps: DomainDeps, actor: Actor, window: DashboardWindow): Promise<Dashboard> {
  const { db } = deps.database;
  const now = (deps.now ?? (() => new Date()))();
  const from = new Date(now.getTime() - window.ms);
  const [{ live, rules, coverage }, scoped, raised, closed, forecastAccuracy] = await Promise.all([
    activeCoverage(deps, actor),
    targetsInScope(db, actor),
    alertsRaisedSince(db, actor, from),
    workloadAndResolutionsSince(db, actor, from),
    forecastAccuracyDistribution(deps, actor, { from, to: now }),
  ]);
  const costModels = new Map(scoped.map((t) => [t.id, t.costModel]));

  // Per active rule: the verdicts and the triage cost of its alerts in the window, on any target in scope.
  const raisedByRule = new Map<string, RaisedRow[]>();
  for (const r of raised) raisedByRule.set(r.ruleId, [...(raisedByRule.get(r.ruleId) ?? []), r]);
  const rulesPerTechnique = new Map(coverage.covered.map((c) => [c.id, c.rules.length]));
  const scores = valueScores(
    rules.map((rule) => {
      const rows = raisedByRule.get(rule.ruleId) ?? [];
      const triageCost = new Map<string, number>();
      for (const id of rule.targetIds) {
        const model = costModels.get(id);
        if (model) triageCost.set(model.currency, triageCost.get(model.currency) ?? 0);
      }
      for (const r of rows) {
        const model = costModels.get(r.targetId);
        if (!model || r.triaged === 0) continue;
        const cost = ((r.triaged * model.triage_minutes_per_alert) / 60) * model.cost_per_analyst_hour;
        triageCost.set(model.currency, (triageCost.get(model.currency) ?? 0) + cost);
      }
      return {
        ruleId: rule.ruleId,
        title: rule.title,
        level: rule.level,
        techniques: coverage.perRule.get(rule.ruleId)?.techniques ?? [],
        dispositions: dispositionsOf(rows),
        cost: { alertsTriaged: rows.reduce((n, r) => n + r.triaged, 0), triageCost },
      };
    }),
    rulesPerTechnique,
  ).sort((a, b) => b.score - a.score || a.ruleId.localeCompare(b.ruleId));

  const { perRule: _, ...coverageFigures } = coverage;
  const activeDeployments = live.filter((d) => d.status === 'active').length;
  return {
    generatedAt: now,
    window: { duration: window.duration, from, to: now },
    environments: actor.environments,
    activeRules: {
      rules: rules.length,
      deployments: activeDeployments,
      demotedDeployments: live.length - activeDeployments,
      reason: rules.length ? null : NO_ACTIVE_RULE,
    },
    coverage: { ...coverageFigures, reason: rules.length ? null : NO_ACTIVE_RULE },
    noise: noiseRatio(dispositionsOf(raised)),
    workload: teamWorkload(closed.workload),
    mttr: mttr(closed.resolutions),
    valueScores: { rules: scores, reason: rules.length ? null : NO_ACTIVE_RULE },
    forecastAccuracy,
  };
}

/** The coverage of the active rules as an ATT&CK Navigator layer (GET /health/dashboard/navigator-layer). */
export async function healthNavigatorLayer(deps: DomainDeps, actor: Actor): Promise<NavigatorLayer> {
  const now = (deps.now ?? (() => new Date()))();
  const { rules, coverage } = await activeCoverage(deps, actor);
  return navigatorLayer(coverage, {
    tenant: actor.tenantId,
    environments: actor.environments,
    generatedAt: now,
    titles: new Map(rules.map((r) => [r.ruleId, r.title])),
  });
}
