import type { DeploymentSpan } from '../../domain/health/deployment-history';
import type { TechniqueDelta } from '../../domain/health/coverage-deltas';
import type { RoiReport } from '../../domain/health/roi';
import { round } from '../../domain/runs/rounding';

/** How the API shows the ROI report: figures rounded to 4 decimals (days to 6), instants in RFC 3339. */
const deploymentRef = (d: DeploymentSpan) => ({
  deployment_id: d.id,
  version: d.version,
  status: d.status,
  activated_at: d.activatedAt.toISOString(),
  ended_at: d.endedAt?.toISOString() ?? null,
});

const nullableRound = (x: number | null) => (x === null ? null : round(x));

const coverageDelta = (t: TechniqueDelta) => ({
  technique: t.technique,
  rules: t.deployments.map((d) => ({ rule_id: d.ruleId, version: d.version, deployment_id: d.id, target: d.targetName })),
});

export function roiView(r: RoiReport, durations: { window: string; minObserved: string }) {
  const sumOf = (kind: 'new_version' | 'rollback' | 'removal') => r.changes.filter((c) => c.kind === kind).reduce((s, c) => s + (c.noiseSaved ?? 0), 0);
  const budget = r.budgets.reduce((s, b) => s + b.noiseSaved, 0);
  const bySource = { new_versions: sumOf('new_version'), rollbacks: sumOf('rollback'), removals: sumOf('removal'), budget_suppression: budget };
  const unknown = r.changes.filter((c) => c.noiseSaved === null).length;
  const noiseReason =
    r.changes.length === 0 && r.budgets.length === 0
      ? 'no rule version was replaced, rolled back or removed, and no noise budget kept an alert from analysts, on this token’s targets in the window'
      : unknown > 0
        ? `${unknown} change(s) have no counterfactual rate (see each one’s reason) and are left out of the totals`
        : null;
  return {
    window: { from: r.window.from.toISOString(), to: r.window.to.toISOString(), duration: durations.window },
    min_observed: durations.minObserved,
    noise_saved: {
      total: round(bySource.new_versions + bySource.rollbacks + bySource.removals + bySource.budget_suppression),
      by_source: {
        new_versions: round(bySource.new_versions),
        rollbacks: round(bySource.rollbacks),
        removals: round(bySource.removals),
        budget_suppression: round(bySource.budget_suppression),
      },
      unknown_changes: unknown,
      reason: noiseReason,
      changes: r.changes.map((c) => ({
        kind: c.kind,
        rule_id: c.replaced.ruleId,
        target: c.replaced.targetName,
        environment: c.replaced.environment,
        replaced: deploymentRef(c.replaced),
        replacement: c.replacement ? deploymentRef(c.replacement) : null,
        in_effect: { from: c.from.toISOString(), until: c.until?.toISOString() ?? null },
        counterfactual: {
          basis: c.counterfactual.basis,
          alerts_per_day: nullableRound(c.counterfactual.alertsPerDay),
          observed_days: round(c.counterfactual.observedDays, 6),
          observed_alerts: c.counterfactual.observedAlerts,
          replay_id: c.counterfactual.basis === 'replayed' ? c.counterfactual.replay!.id : null,
          reason: c.counterfactual.reason,
        },
        days_in_window: round(c.daysInWindow, 6),
        expected_alerts: nullableRound(c.expectedAlerts),
        actual_alerts: c.actualAlerts,
        noise_saved: nullableRound(c.noiseSaved),
      })),
      budget_suppression: r.budgets.map((b) => ({
        deployment_id: b.deployment.id,
        rule_id: b.deployment.ruleId,
        version: b.deployment.version,
        target: b.deployment.targetName,
        environment: b.deployment.environment,
        suppressed_alerts: b.suppressed,
        shadow_matches: b.shadowMatches,
        noise_saved: b.noiseSaved,
      })),
    },
    cost_avoided: {
      reason: r.costs.length === 0 ? 'no noise saved on this token’s targets in the window, so no cost avoided' : null,
      by_currency: r.costs.map((c) => ({
        currency: c.currency,
        noise_saved: round(c.noiseSaved),
        triage_cost_avoided: round(c.triageCostAvoided),
        scan_cost_saved: nullableRound(c.scanCostSaved),
        scan_cost_reason: c.scanCostReason,
        total: round(c.total),
        targets: c.targets.map((t) => ({
          target: t.targetName,
          environment: t.environment,
          noise_saved: round(t.noiseSaved),
          triage_minutes_per_alert: t.model.triage_minutes_per_alert,
          cost_per_analyst_hour: t.model.cost_per_analyst_hour,
          triage_cost_avoided: round(t.triageCostAvoided),
        })),
      })),
    },
    coverage: {
      techniques_at_start: r.coverage.atStart,
      techniques_now: r.coverage.atEnd,
      gained: r.coverage.gained.map(coverageDelta),
      lost: r.coverage.lost.map(coverageDelta),
      reason:
        r.coverage.atStart === 0 && r.coverage.atEnd === 0
          ? 'no rule alerting on this token’s targets at the window’s start or now carries an ATT&CK technique tag (attack.tNNNN)'
          : null,
    },
  };
}
