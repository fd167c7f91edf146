import { ApplicationFailure, Context } from '@temporalio/activity';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { alerts, replays, targets, type RunStatus } from '../db/schema';
import { projectCost } from '../domain/detection/cost-projection';
import { documentItems, fieldValue, parseRule } from '../sigma';
import type { CompiledRule, DayCount } from '../siem/adapter';
import { adapterFor, type SiemAdapters } from '../siem/adapters';
import { withHeartbeat } from './heartbeat';
import { compileRuleForTarget } from '../domain/rules/rule-compilation';
import type { ShadowActivities } from './shadow';

const DAY_MS = 86_400_000;
/** Matched events the noise estimate looks at; beyond it the figures are scaled up from this sample. */
export const NOISE_SAMPLE_EVENTS = 10_000;
/** False-positive alerts of the rule read for the noise estimate (the most recent ones). */
const MAX_FALSE_POSITIVES = 5_000;

/**
 * Fields that name the entity an alert is about, by kind, in the order they are looked up. A match's
 * entity is (host, user, process): for each kind the value of the first of its fields the event has.
 */
export const ENTITY_FIELDS = {
  host: ['Computer', 'ComputerName', 'Hostname', 'DeviceName', 'host.name', 'host.hostname'],
  user: ['User', 'SubjectUserName', 'TargetUserName', 'AccountName', 'user.name'],
  process: ['Image', 'NewProcessName', 'ProcessName', 'process.executable', 'process.name'],
} as const;

export type ChunkFigures = { from: string; to: string; scanned: number; matched: number; bytesScanned: number; durationMs: number; perDay: DayCount[] };

export type NoiseEstimate = {
  sample_size: number;
  sampled: boolean;
  duplicates: number;
  entity_fields: typeof ENTITY_FIELDS;
  false_positive_matches: number;
  false_positive_fields: string[];
  false_positive_alerts_considered: number;
  noisy_alerts: number;
  noise_ratio: number;
};

const round = (x: number, places = 4) => Math.round(x * 10 ** places) / 10 ** places;

/** The fields a rule's detection reads (keyword searches read none), in source order. */
export function ruleFields(content: string): string[] {
  const seen = new Set<string>();
  for (const { item } of documentItems(parseRule(content))) if (item.field !== null) seen.add(item.field);
  return [...seen];
}

/** The rule as the target runs it; a rule that does not compile is permanent (RuleDoesNotCompile). */
export function compileStoredRun(siem: SiemAdapters, run: { ruleContent: string; ruleId: string; version: number | null }, kind: string): CompiledRule {
  return compileRuleForTarget(siem, run.ruleContent, run.ruleId, run.version ?? 0, kind);
}

function entityKey(event: Record<string, unknown>, day: string): string | undefined {
  const parts = Object.values(ENTITY_FIELDS).map((fields) => {
    for (const f of fields) {
      const v = fieldValue(event, f);
      if (v !== undefined && v !== null) return JSON.stringify(v);
    }
    return null;
  });
  return parts.every((p) => p === null) ? undefined : JSON.stringify([day, ...parts]);
}

/**
 * The noise estimate of a rule's matches (see NoiseEstimate in the README):
 * - duplicates: matches whose (UTC day, host, user, process) entity already had a match that day;
 *   a match without any entity field is never a duplicate;
 * - false_positive_matches: matches equal, on every field the rule reads, to the event of an alert
 *   of the same rule that was dispositioned false_positive;
 * - noisy_alerts: matches that are either (each counted once); noise_ratio = noisy / matched.
 * Computed on the first NOISE_SAMPLE_EVENTS matches in time order and scaled by matched / sample.
 */
export function estimateNoise(events: ReadonlyArray<{ time: Date; event: Record<string, unknown> }>, matched: number, fields: string[], falsePositives: ReadonlyArray<Record<string, unknown>>): NoiseEstimate {
  const signature = (e: Record<string, unknown>) => JSON.stringify(fields.map((f) => fieldValue(e, f) ?? null));
  const fpSignatures = new Set(fields.length ? falsePositives.map(signature) : []);
  const seen = new Set<string>();
  let duplicates = 0;
  let fp = 0;
  let noisy = 0;
  for (const { time, event } of events) {
    const key = entityKey(event, time.toISOString().slice(0, 10));
    const duplicate = key !== undefined && seen.has(key);
    if (key !== undefined) seen.add(key);
    const knownFalsePositive = fpSignatures.has(signature(event));
    if (duplicate) duplicates++;
    if (knownFalsePositive) fp++;
    if (duplicate || knownFalsePositive) noisy++;
  }
  const scale = events.length > 0 ? matched / events.length : 0;
  return {
    sample_size: events.length,
    sampled: events.length < matched,
    duplicates: Math.round(duplicates * scale),
    entity_fields: ENTITY_FIELDS,
    false_positive_matches: Math.round(fp * scale),
    false_positive_fields: fields,
    false_positive_alerts_considered: falsePositives.length,
    noisy_alerts: Math.round(noisy * scale),
    noise_ratio: matched > 0 ? round((noisy * scale) / matched) : 0,
  };
}

export type ReplayTotals = {
  replayId: string;
  status: Extract<RunStatus, 'completed' | 'cancelled' | 'failed'>;
  error: string | null;
  chunks: ChunkFigures[];
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

export function createReplayActivities({ db, siem }: { db: Db; siem: SiemAdapters }) {
  async function loadReplay(replayId: string) {
    const [row] = await db
      .select({ r: replays, kind: targets.kind, targetName: targets.name, costModel: targets.costModel })
      .from(replays)
      .innerJoin(targets, eq(targets.id, replays.targetId))
      .where(eq(replays.id, replayId));
    if (!row) throw ApplicationFailure.nonRetryable(`No replay ${replayId}`, 'ReplayNotFound');
    return row;
  }

  return {
    /** Splits the replay's window into chunks of about `chunkEvents` events (whole UTC hours). */
    async planReplay({ replayId }: { replayId: string }): Promise<Array<{ from: string; to: string; events: number }>> {
      const { r, kind } = await loadReplay(replayId);
      compileStoredRun(siem, r, kind); // a rule that cannot run fails the replay before any work
      const chunks = await adapterFor(siem, kind).planChunks(r.tenantId, { from: r.windowFrom, to: r.windowTo }, r.chunkEvents);
      return chunks.map((c) => ({ from: c.from.toISOString(), to: c.to.toISOString(), events: c.events }));
    },

    /**
     * Counts one chunk. It heartbeats while the query runs (however long a large chunk takes), so a
     * cancelled replay stops at the next chunk boundary and a worker that died mid-chunk is noticed
     * within the heartbeat timeout; the chunk is then counted again from scratch (counting is
     * read-only, so a repeat is harmless).
     */
    async replayChunk({ replayId, index, from, to }: { replayId: string; index: number; from: string; to: string }): Promise<ChunkFigures> {
      const ctx = Context.current();
      const counted = await withHeartbeat(async () => {
        const { r, kind } = await loadReplay(replayId);
        const rule = compileStoredRun(siem, r, kind);
        return adapterFor(siem, kind).count(r.tenantId, rule, { from: new Date(from), to: new Date(to) });
      }, { index, phase: 'counting' });
      ctx.heartbeat({ index, phase: 'counted', scanned: counted.scanned });
      return { from, to, scanned: counted.scanned, matched: counted.matched, bytesScanned: counted.bytesScanned, durationMs: Math.round(counted.durationMs * 1000) / 1000, perDay: [...counted.perDay] };
    },

    /** The noise estimate of the processed part of the window (see estimateNoise). */
    async assessReplayNoise({ replayId, until }: { replayId: string; until: string }): Promise<NoiseEstimate> {
      // Heartbeats while it searches the processed window, which can take as long as a chunk.
      return withHeartbeat(async () => {
        const { r, kind } = await loadReplay(replayId);
        const rule = compileStoredRun(siem, r, kind);
        const fields = ruleFields(r.ruleContent);
        const window = { from: r.windowFrom, to: new Date(until) };
        const found = window.to.getTime() > window.from.getTime() ? await adapterFor(siem, kind).search(r.tenantId, rule, window, { limit: NOISE_SAMPLE_EVENTS }) : { events: [], matched: 0 };
        const fps = await db
          .select({ event: alerts.event })
          .from(alerts)
          .where(and(eq(alerts.tenantId, r.tenantId), eq(alerts.ruleId, r.ruleId), eq(alerts.disposition, 'false_positive')))
          .orderBy(sql`${alerts.createdAt} desc`)
          .limit(MAX_FALSE_POSITIVES);
        return estimateNoise(found.events, found.matched, fields, fps.map((f) => f.event));
      });
    },

    /** Writes the replay's final figures (alert volume, noise, latency, cost) and status; returns them. */
    async recordReplayResult(totals: ReplayTotals): Promise<Record<string, unknown>> {
      const { replayId } = totals;
      const { r, costModel } = await loadReplay(replayId);
      const sum = sumChunks(totals.chunks);
      const processedMs = new Date(totals.processedUntil).getTime() - r.windowFrom.getTime();
      const durations = totals.chunks.map((c) => c.durationMs);
      const totalMs = durations.reduce((s, d) => s + d, 0);
      const budget = r.noiseBudget?.max_alerts_per_day ?? null;
      const windowDays = processedMs / DAY_MS;
      const result = {
        window_processed: { from: r.windowFrom.toISOString(), to: totals.processedUntil },
        chunks: { done: totals.chunks.length, total: totals.chunksTotal },
        events_scanned: sum.scanned,
        bytes_scanned: sum.bytes,
        alerts: {
          total: sum.matched,
          per_day: sum.perDay,
          mean_per_day: windowDays > 0 ? round(sum.matched / windowDays) : 0,
          peak_per_day: sum.perDay.reduce((m, d) => Math.max(m, d.alerts), 0),
        },
        noise: {
          ...(totals.noise ?? estimateNoise([], 0, [], [])),
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
          max_chunk_ms: round(durations.reduce((m, d) => Math.max(m, d), 0), 3),
          per_chunk: totals.chunks.map((c) => ({ from: c.from, to: c.to, events_scanned: c.scanned, alerts: c.matched, ms: c.durationMs })),
        },
        cost: projectCost(costModel, sum.bytes, sum.matched, processedMs),
      };
      await db
        .update(replays)
        .set({ status: totals.status, error: totals.error, result, updatedAt: sql`now()`, endedAt: sql`now()` })
        .where(and(eq(replays.id, replayId), eq(replays.status, 'running')));
      return result;
    },
  };
}

/**
 * The replay activities, and the shadow ones: workflows/shadow.ts proxies the shadow activities
 * under this type. Once it names ShadowActivities, this is ReturnType<typeof createReplayActivities>.
 */
export type ReplayActivities = ReturnType<typeof createReplayActivities> & ShadowActivities;
