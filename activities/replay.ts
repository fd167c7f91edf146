import { ApplicationFailure, Context } from '@temporalio/activity';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { replays, targets } from '../db/schema';
import type { RunStatus } from '../domain/statuses';
import type { SiemAdapters } from '../siem/adapters';
import { targetAdapter } from '../domain/rules/rule-compilation';
import { withHeartbeat } from './heartbeat';
import { replayFigures, type ChunkFigures } from '../domain/runs/replay-figures';
import { estimateNoise, falsePositiveEvents, NOISE_SAMPLE_EVENTS, ruleFields, type NoiseEstimate } from '../domain/runs/replay-noise';
import { compileStoredRun } from '../domain/runs/stored-run-rule';
import type { ShadowActivities } from './shadow';

// The workflow names these as the activities' inputs and outputs.
export type { ChunkFigures, NoiseEstimate };

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

export function createReplayActivities({ db, siem }: { db: Db; siem: SiemAdapters }) {
  async function loadReplay(replayId: string) {
    const [row] = await db
      .select({
        r: replays,
        kind: targets.kind,
        targetName: targets.name,
        connection: targets.connection,
        resolvedPlaceholders: targets.resolvedPlaceholders,
        environment: targets.environment,
        costModel: targets.costModel,
      })
      .from(replays)
      .innerJoin(targets, eq(targets.id, replays.targetId))
      .where(eq(replays.id, replayId));
    if (!row) throw ApplicationFailure.nonRetryable(`No replay ${replayId}`, 'ReplayNotFound');
    return {
      ...row,
      target: {
        id: row.r.targetId,
        name: row.targetName,
        kind: row.kind,
        connection: row.connection,
        environment: row.environment,
        resolvedPlaceholders: row.resolvedPlaceholders,
      },
    };
  }

  return {
    /** Splits the replay's window into chunks of about `chunkEvents` events (whole UTC hours). */
    async planReplay({ replayId }: { replayId: string }): Promise<Array<{ from: string; to: string; events: number }>> {
      const { r, target } = await loadReplay(replayId);
      compileStoredRun(siem, r, target); // a rule that cannot run fails the replay before any work
      const chunks = await targetAdapter(siem, target).planChunks(r.tenantId, r.targetId, { from: r.windowFrom, to: r.windowTo }, r.chunkEvents);
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
      const counted = await withHeartbeat(
        async () => {
          const { r, target } = await loadReplay(replayId);
          const rule = compileStoredRun(siem, r, target);
          return targetAdapter(siem, target).count(r.tenantId, r.targetId, rule, { from: new Date(from), to: new Date(to) });
        },
        { index, phase: 'counting' },
      );
      ctx.heartbeat({ index, phase: 'counted', scanned: counted.scanned });
      return {
        from,
        to,
        scanned: counted.scanned,
        matched: counted.matched,
        bytesScanned: counted.bytesScanned,
        durationMs: Math.round(counted.durationMs * 1000) / 1000,
        perDay: [...counted.perDay],
      };
    },

    /** The noise estimate of the processed part of the window (see estimateNoise). */
    async assessReplayNoise({ replayId, until }: { replayId: string; until: string }): Promise<NoiseEstimate> {
      // Heartbeats while it searches the processed window, which can take as long as a chunk.
      return withHeartbeat(async () => {
        const { r, target } = await loadReplay(replayId);
        const rule = compileStoredRun(siem, r, target);
        const fields = ruleFields(r.ruleContent);
        const window = { from: r.windowFrom, to: new Date(until) };
        const found =
          window.to.getTime() > window.from.getTime()
            ? await targetAdapter(siem, target).search(r.tenantId, r.targetId, rule, window, { limit: NOISE_SAMPLE_EVENTS })
            : { events: [], matched: 0 };
        const fps = await falsePositiveEvents(db, r.tenantId, r.ruleId);
        return estimateNoise(found.events, found.matched, fields, fps);
      });
    },

    /** Writes the replay's final figures (alert volume, noise, latency, cost) and status; returns them. */
    async recordReplayResult(totals: ReplayTotals): Promise<Record<string, unknown>> {
      const { replayId } = totals;
      const { r, costModel } = await loadReplay(replayId);
      const result = replayFigures(r, totals, costModel);
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
