import type { AlertsPerDay } from './alert-rate-projection';
import { round } from './rounding';

const DAY_MS = 86_400_000;

/** A target's prices, as a target's settings give them (see the README's cost model). */
export type CostModel = {
  currency: string;
  price_per_gb_scanned: number;
  triage_minutes_per_alert: number;
  cost_per_analyst_hour: number;
};

/** What running a rule over a period would cost: what replay and shadow results report. */
export type CostProjection = {
  currency: string;
  bytes_scanned: number;
  scan_cost: number;
  triage_hours: number;
  triage_cost: number;
  total: number;
  per_month: number;
  /**
   * per_month with the alerts/day at the ends of their 95% interval (scanning cost is measured, not
   * estimated, so only triage moves); null when there is no rate (a window of no time).
   */
  per_month_ci95: { low: number; high: number } | null;
  window_days: number;
  model: CostModel;
};

/**
 * Cost of running a rule over a window: bytes scanned / 1e9 × price_per_gb_scanned, plus
 * alerts × triage_minutes_per_alert / 60 × cost_per_analyst_hour; per month = total × 30 / window days.
 * Its interval: scanning × 30 / window days + alerts/day (low, high) × 30 × triage cost per alert.
 */
export function projectCost(model: CostModel, bytesScanned: number, alertCount: number, windowMs: number, alertsPerDay: AlertsPerDay | null = null): CostProjection {
  const scanCost = (bytesScanned / 1e9) * model.price_per_gb_scanned;
  const triageHours = (alertCount * model.triage_minutes_per_alert) / 60;
  const triageCost = triageHours * model.cost_per_analyst_hour;
  const total = scanCost + triageCost;
  const windowDays = windowMs / DAY_MS;
  const triagePerAlert = (model.triage_minutes_per_alert / 60) * model.cost_per_analyst_hour;
  const monthAt = (perDay: number) => round(windowDays > 0 ? (scanCost * 30) / windowDays + perDay * 30 * triagePerAlert : 0);
  return {
    currency: model.currency,
    bytes_scanned: bytesScanned,
    scan_cost: round(scanCost),
    triage_hours: round(triageHours),
    triage_cost: round(triageCost),
    total: round(total),
    per_month: windowDays > 0 ? round((total * 30) / windowDays) : 0,
    per_month_ci95: alertsPerDay && windowDays > 0 ? { low: monthAt(alertsPerDay.ci95.low), high: monthAt(alertsPerDay.ci95.high) } : null,
    window_days: round(windowDays, 6),
    model,
  };
}
