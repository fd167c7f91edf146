import type { NoiseBudgetPolicy } from '../statuses';
import type { DayCount } from '../../siem/adapter';
import { projectAlertRate } from './alert-rate-projection';
import { projectCost, type CostModel } from './cost-projection';
import { estimateNoise, type NoiseEstimate } from './replay-noise';
import { round } from './rounding';

const DAY_MS = 86_400_000;

export type ChunkFigures = { from: string; to: string; scanned: number; matched: number; bytesScanned: number; durationMs: number; perDay: DayCount[] };

/** What a replay ran: the chunks it counted, of how many, up to where, and the noise of its matches. */
export type ReplayProcessed = {
  chunks: readonly ChunkFigures[];
  chunksTotal: number;
  /** End of the part of the window that was processed (the window's start when none was). */
  processedUntil: string;
  noise: NoiseEstimate | null;
};

/** Adds up chunk figures: per-day counts of days split over several chunks are summed. */
export function sumChunks(chunks: readonly ChunkFigures[]) {
  const days = new Map<string, { scanned: number; matched: number }>();
  let scanned = 0;
  let matched = 0;
  let bytes = 0;
  for (const c of chunks) {
    scanned += c.scanned;
    matched += c.matched;
    bytes += c.bytesScanned;
    for (const d of c.perDay) {
      const cur = days.get(d.day) ?? { scanned: 0, matched: 0 };
      days.set(d.day, { scanned: cur.scanned + d.scanned, matched: cur.matched + d.matched });
    }
  }
  const perDay = [...days.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, v]) => ({ day, alerts: v.matched, events_scanned: v.scanned }));
  return { scanned, matched, bytes, perDay };
}

/**
 * A replay's final figures (alert volume, noise against its budget, latency, cost) from what it
 * processed, with the sample the projection rests on, its 95% interval on alerts/day and whether
 * the sample is too thin to trust (see projectAlertRate).
 */
export function replayFigures(replay: { windowFrom: Date; noiseBudget: NoiseBudgetPolicy | null }, processed: ReplayProcessed, costModel: CostModel) {
  const sum = sumChunks(processed.chunks);
  const processedMs = new Date(processed.processedUntil).getTime() - replay.windowFrom.getTime();
  const durations = processed.chunks.map((c) => c.durationMs);
  const totalMs = durations.reduce((s, d) => s + d, 0);
  const budget = replay.noiseBudget?.max_alerts_per_day ?? null;
  const windowDays = processedMs / DAY_MS;
  const projection = projectAlertRate({
    events: sum.scanned,
    alerts: sum.matched,
    from: replay.windowFrom,
    to: new Date(processed.processedUntil),
    daysWithEvents: sum.perDay.filter((d) => d.events_scanned > 0).length,
  });
  return {
    window_processed: { from: replay.windowFrom.toISOString(), to: processed.processedUntil },
    chunks: { done: processed.chunks.length, total: processed.chunksTotal },
    events_scanned: sum.scanned,
    bytes_scanned: sum.bytes,
    alerts: {
      total: sum.matched,
      per_day: sum.perDay,
      mean_per_day: windowDays > 0 ? round(sum.matched / windowDays) : 0,
      peak_per_day: sum.perDay.reduce((m, d) => Math.max(m, d.alerts), 0),
    },
    noise: {
      ...(processed.noise ?? estimateNoise([], 0, [], [])),
      budget:
        budget === null
          ? null
          : {
              max_alerts_per_day: budget,
              days_over_budget: sum.perDay.filter((d) => d.alerts > budget).length,
              alerts_over_budget: sum.perDay.reduce((s, d) => s + Math.max(0, d.alerts - budget), 0),
              within_budget: sum.perDay.every((d) => d.alerts <= budget),
            },
    },
    latency: {
      total_ms: round(totalMs, 3),
      mean_chunk_ms: durations.length ? round(totalMs / durations.length, 3) : 0,
      max_chunk_ms: round(
        durations.reduce((m, d) => Math.max(m, d), 0),
        3,
      ),
      per_chunk: processed.chunks.map((c) => ({ from: c.from, to: c.to, events_scanned: c.scanned, alerts: c.matched, ms: c.durationMs })),
    },
    cost: projectCost(costModel, sum.bytes, sum.matched, processedMs, projection.alerts_per_day),
    ...projection,
  };
}
