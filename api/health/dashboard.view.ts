import type { Dashboard } from '../../domain/health/dashboard';
import type { Count } from '../../domain/health/attack-coverage';
import type { WorkloadFigures } from '../../domain/health/team-workload';
import type { Mttr } from '../../domain/health/mttr';
import { SEVERITY_WEIGHT, VALUE_WEIGHTS } from '../../domain/health/value-score';

/** The formula of the value score, as the answer states it beside the scores (README "Dashboard"). */
export const VALUE_SCORE_FORMULA =
  'score = 100 × Σ wᵢ·pᵢ / Σ wᵢ over the known parts; ' +
  'signal p = TP / (TP + FP + benign) of its alerts in the window; ' +
  'uniqueness p = mean over its techniques of 1 / (1 + other active rules covering it), 0 without one; ' +
  `severity p = level weight (${Object.entries(SEVERITY_WEIGHT)
    .map(([l, w]) => `${l} ${w}`)
    .join(', ')}); ` +
  'cost p = 1 − its cost / the highest cost of an active rule in that currency (1 when that is 0), ' +
  'cost = alerts triaged × triage_minutes_per_alert / 60 × cost_per_analyst_hour + scan cost when recorded';

const count = (c: Count) => ({ covered: c.covered, total: c.total, ratio: c.ratio });
const figures = (f: WorkloadFigures) => ({ open: f.open, acknowledged: f.acknowledged, handled: f.handled });
const meanTime = (m: Mttr) => ({ alerts: m.alerts, mean_seconds: m.meanSeconds });

export function dashboardView(d: Dashboard) {
  const c = d.coverage;
  return {
    generated_at: d.generatedAt.toISOString(),
    window: { duration: d.window.duration, from: d.window.from.toISOString(), to: d.window.to.toISOString() },
    environments: d.environments === null ? null : [...d.environments],
    active_rules: { rules: d.activeRules.rules, deployments: d.activeRules.deployments, demoted_deployments: d.activeRules.demotedDeployments, reason: d.activeRules.reason },
    coverage: {
      attack: { domain: c.matrix.domain, version: c.matrix.version, released: c.matrix.released, source: c.matrix.source, attribution: c.matrix.attribution },
      rules: c.rules,
      techniques: count(c.techniques),
      sub_techniques: count(c.subTechniques),
      tactics: {
        ...count(c.tactics),
        items: c.tactics.items.map((t) => ({
          id: t.id,
          shortname: t.shortname,
          name: t.name,
          covered: t.covered,
          techniques: count(t.techniques),
          sub_techniques: count(t.subTechniques),
          tagged_by_rules: t.taggedByRules,
        })),
      },
      covered: c.covered.map((t) => ({ id: t.id, name: t.name, parent: t.parent, tactics: [...t.tactics], rules: t.rules })),
      outside_matrix: c.outsideMatrix.map((o) => ({ technique: o.technique, reason: o.reason, counted_as: o.countedAs, rules: o.rules })),
      legacy_tactic_tags: c.legacyTactics.map((l) => ({ tactic: l.tactic, rules: l.rules, counted_as: l.countedAs })),
      reason: c.reason,
    },
    noise: {
      ratio: d.noise.ratio,
      dispositioned: d.noise.dispositioned,
      true_positive: d.noise.truePositive,
      false_positive: d.noise.falsePositive,
      benign: d.noise.benign,
      duplicate: d.noise.duplicate,
      reason: d.noise.reason,
    },
    workload: {
      total: figures(d.workload.total),
      teams: d.workload.teams.map((t) => ({ team: t.team, ...figures(t), assignees: t.assignees.map((a) => ({ assignee: a.assignee, ...figures(a) })) })),
      reason: d.workload.reason,
    },
    mttr: {
      overall: meanTime(d.mttr.overall),
      by_team: d.mttr.byTeam.map((t) => ({ team: t.team, ...meanTime(t) })),
      by_severity: d.mttr.bySeverity.map((s) => ({ level: s.level, ...meanTime(s) })),
      reason: d.mttr.reason,
    },
    value_scores: {
      formula: VALUE_SCORE_FORMULA,
      weights: { ...VALUE_WEIGHTS },
      rules: d.valueScores.rules.map((r) => {
        const p = r.parts;
        const base = <T extends { weight: number; value: number | null; points: number | null; reason: string | null }>(x: T) => ({
          weight: x.weight,
          value: x.value,
          points: x.points,
          reason: x.reason,
        });
        return {
          rule_id: r.ruleId,
          title: r.title,
          level: r.level,
          score: r.score,
          missing: r.missing,
          parts: {
            signal: { ...base(p.signal), snr: p.signal.snr, true_positives: p.signal.truePositives, false_positives: p.signal.falsePositives, benign: p.signal.benign },
            uniqueness: { ...base(p.uniqueness), techniques: p.uniqueness.techniques.map((t) => ({ id: t.id, other_rules: t.otherRules })) },
            severity: { ...base(p.severity), level: p.severity.level },
            cost: {
              ...base(p.cost),
              currency: p.cost.currency,
              triage_cost: p.cost.triageCost,
              scan_cost: p.cost.scanCost,
              scan_cost_reason: p.cost.scanCostReason,
              total: p.cost.total,
              alerts_triaged: p.cost.alertsTriaged,
            },
          },
        };
      }),
      reason: d.valueScores.reason,
    },
    forecast_accuracy: d.forecastAccuracy,
  };
}
