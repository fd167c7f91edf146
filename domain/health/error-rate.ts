import type { HealthThresholds } from './health-settings';
import { ratio, type HealthStatus } from './health-status';

export type LastError = { message: string; at: Date; deploymentId: string };
export type ErrorRate = { runs: number; failedRuns: number; rate: number | null; lastError: LastError | null; status: HealthStatus; reason: string | null };

/** Failed detection runs / runs, graded by the tenant's thresholds; `no_data` without a run. */
export function errorRateOf(runs: number, failedRuns: number, lastError: LastError | null, t: HealthThresholds): ErrorRate {
  const rate = ratio(failedRuns, runs);
  if (rate === null) return { runs, failedRuns, rate, lastError, status: 'no_data', reason: 'no detection run in the window' };
  const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
  if (rate >= t.error_rate_failing) {
    return {
      runs,
      failedRuns,
      rate,
      lastError,
      status: 'failing',
      reason: `${failedRuns} of ${runs} detection runs failed (${pct(rate)}, failing at ${pct(t.error_rate_failing)})`,
    };
  }
  if (rate >= t.error_rate_degraded) {
    return {
      runs,
      failedRuns,
      rate,
      lastError,
      status: 'degraded',
      reason: `${failedRuns} of ${runs} detection runs failed (${pct(rate)}, degraded at ${pct(t.error_rate_degraded)})`,
    };
  }
  return { runs, failedRuns, rate, lastError, status: 'ok', reason: null };
}
