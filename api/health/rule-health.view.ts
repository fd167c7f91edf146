import type { RuleHealth } from '../../domain/health/rule-health';
import type { HealthThresholds } from '../../domain/health/health-settings';

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const win = (w: { from: Date; to: Date }) => ({ from: w.from.toISOString(), to: w.to.toISOString() });
const change = (c: { current: number | null; previous: number | null; change: number | null }) => ({ current: c.current, previous: c.previous, change: c.change });

export function ruleHealthView(h: RuleHealth, duration: string) {
  return {
    rule_id: h.ruleId,
    title: h.title,
    target: h.target,
    window: { ...win(h.window), duration },
    status: h.status,
    reasons: h.reasons,
    snr: {
      ratio: h.snr.ratio,
      precision: h.snr.precision,
      true_positives: h.snr.truePositives,
      false_positives: h.snr.falsePositives,
      benign: h.snr.benign,
      duplicates: h.snr.duplicates,
      undispositioned: h.snr.undispositioned,
      reason: h.snr.reason,
    },
    latency: { alerts: h.latency.alerts, p50_ms: h.latency.p50Ms, p95_ms: h.latency.p95Ms, max_ms: h.latency.maxMs, reason: h.latency.reason },
    error_rate: {
      rate: h.errorRate.rate,
      runs: h.errorRate.runs,
      failed_runs: h.errorRate.failedRuns,
      last_error: h.errorRate.lastError
        ? { message: h.errorRate.lastError.message, at: h.errorRate.lastError.at.toISOString(), deployment_id: h.errorRate.lastError.deploymentId }
        : null,
      status: h.errorRate.status,
      reason: h.errorRate.reason,
    },
    noise_budget: {
      alerts_today: h.noiseBudget.alertsToday,
      alerts: h.noiseBudget.alerts,
      alerts_per_day: h.noiseBudget.alertsPerDay,
      suppressed: h.noiseBudget.suppressed,
      days_over_budget: h.noiseBudget.daysOverBudget,
      per_day: h.noiseBudget.perDay.map((d) => ({ day: d.day, alerts: d.alerts, suppressed: d.suppressed, over_budget: d.overBudget })),
      deployments: h.noiseBudget.deployments.map((d) => ({
        deployment_id: d.deploymentId,
        target: d.target,
        version: d.version,
        max_alerts_per_day: d.maxAlertsPerDay,
        alerts_today: d.alertsToday,
        consumption_today: d.consumptionToday,
        alerts: d.alerts,
        suppressed: d.suppressed,
        days_over_budget: d.daysOverBudget,
      })),
    },
    data_quality: {
      status: h.dataQuality.status,
      reason: h.dataQuality.reason,
      freshness_hours: h.thresholds.freshness_hours,
      logsources: h.dataQuality.logsources.map((l) => ({
        target: l.target,
        logsource: l.logsource,
        events: l.events,
        newest_event_time: iso(l.newestEventTime),
        status: l.status,
        reason: l.reason,
        fields: l.fields.map((f) => ({ field: f.field, events_with_field: f.eventsWithField, share: f.share, status: f.status, reason: f.reason })),
      })),
    },
    trend: {
      previous_window: win(h.trend.previousWindow),
      alerts: change(h.trend.alerts),
      snr: change(h.trend.snr),
      precision: change(h.trend.precision),
      error_rate: change(h.trend.errorRate),
      latency_p95_ms: change(h.trend.latencyP95Ms),
    },
    deployments: h.deployments.map((d) => ({
      id: d.id,
      version: d.version,
      target: d.target,
      status: d.status,
      activated_at: iso(d.activatedAt),
      max_alerts_per_day: d.maxAlertsPerDay,
    })),
    forecasts: h.forecasts,
    drift: h.drift,
    siem: h.siem,
  };
}

export function healthSettingsView(s: { thresholds: HealthThresholds; updatedAt: Date | null }) {
  return { thresholds: s.thresholds, updated_at: iso(s.updatedAt) };
}
