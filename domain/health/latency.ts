/** Detection latency of a window's alerts: event time → alert time (the detection run that raised it), in milliseconds. */
export type Latency = { alerts: number; p50Ms: number | null; p95Ms: number | null; maxMs: number | null; reason: string | null };

/**
 * From the database's nearest-rank percentiles (`percentile_disc`: the smallest latency at or
 * above which lie the given share of alerts), null when the window has no alert.
 */
export function latencyOf(alerts: number, p50: number | null, p95: number | null, max: number | null): Latency {
  if (alerts === 0) return { alerts, p50Ms: null, p95Ms: null, maxMs: null, reason: 'no alert in the window' };
  return { alerts, p50Ms: p50, p95Ms: p95, maxMs: max, reason: null };
}
