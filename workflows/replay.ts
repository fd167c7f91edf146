import { ActivityFailure, CancellationScope, defineQuery, isCancellation, log, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { ChunkFigures, NoiseEstimate, ReplayActivities } from '../activities/replay';
import { RunQuery, STATUS, FailureType } from './contracts';
import { notifyInBackground } from './notify';
import { trackSteps } from './current-step';

// Replay and shadow are registered together (workflows/index.ts): both are rule runs over target data.
export { ShadowEvaluation } from './shadow';

export type ReplayInput = {
  replayId: string;
  tenantId: string;
  ruleId: string;
  targetName: string;
  windowFrom: string;
  windowTo: string;
};

export type ReplayProgress = {
  status: 'planning' | 'running' | 'completed' | 'cancelled' | 'failed';
  chunksDone: number;
  chunksTotal: number | null;
  eventsScanned: number;
  alerts: number;
  /** End of the processed part of the window. */
  processedUntil: string;
};

export const replayProgressQuery = defineQuery<ReplayProgress>(RunQuery.replayProgress);

const PERMANENT = [FailureType.ReplayNotFound, FailureType.RuleDoesNotCompile, FailureType.UnsupportedTargetKind];

const bookkeeping = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 10, nonRetryableErrorTypes: PERMANENT },
});

// A chunk is one count query: minutes at most. The heartbeat timeout notices a dead worker (and
// delivers a cancellation) well before the start-to-close timeout would.
const counting = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 8, nonRetryableErrorTypes: [...PERMANENT, FailureType.EventStoreQueryError] },
});

/**
 * A rule over a past window of a target's data, chunk by chunk (one activity per chunk, in time
 * order). Completed chunks live in the workflow's history, so a worker that dies mid-replay resumes
 * at the chunk it was on and ends with the same figures. Cancelling the run stops at the current
 * chunk; the figures of the chunks done so far are recorded as a `cancelled` result.
 */
export async function Replay(input: ReplayInput): Promise<Record<string, unknown>> {
  const chunks: ChunkFigures[] = [];
  const progress: ReplayProgress = { status: 'planning', chunksDone: 0, chunksTotal: null, eventsScanned: 0, alerts: 0, processedUntil: input.windowFrom };
  setHandler(replayProgressQuery, () => progress);
  const step = trackSteps();

  let status: 'completed' | 'cancelled' | 'failed' = 'completed';
  let error: string | null = null;
  try {
    step('planning the chunks');
    const plan = await bookkeeping.planReplay({ replayId: input.replayId });
    progress.status = 'running';
    progress.chunksTotal = plan.length;
    for (const [index, chunk] of plan.entries()) {
      step(`replaying chunk ${index + 1} of ${plan.length} (${chunk.from} → ${chunk.to})`);
      const figures = await counting.replayChunk.executeWithOptions({ summary: `Chunk ${index + 1}/${plan.length}: ${chunk.from} → ${chunk.to}` }, [
        { replayId: input.replayId, index, from: chunk.from, to: chunk.to },
      ]);
      chunks.push(figures);
      progress.chunksDone = chunks.length;
      progress.eventsScanned += figures.scanned;
      progress.alerts += figures.matched;
      progress.processedUntil = chunk.to;
    }
  } catch (err) {
    if (isCancellation(err)) {
      status = 'cancelled';
    } else if (err instanceof ActivityFailure) {
      status = 'failed';
      error = err.cause?.message ?? err.message;
      log.warn('replay failed', { replayId: input.replayId, error });
    } else {
      throw err;
    }
  }

  // Recording the outcome must happen even when the run was cancelled.
  step(`recording the result (${status})`);
  return CancellationScope.nonCancellable(async () => {
    let noise: NoiseEstimate | null = null;
    if (status !== 'failed') {
      try {
        // A count over the whole processed window: as long as a chunk may take.
        noise = await counting.assessReplayNoise({ replayId: input.replayId, until: progress.processedUntil });
      } catch (err) {
        // The figures of every chunk are recorded anyway; only the noise estimate is missing.
        if (!(err instanceof ActivityFailure)) throw err;
        log.warn('replay noise estimate failed', { replayId: input.replayId, error: err.cause?.message ?? err.message });
      }
    }
    // Upserted before the record is written, so a client that sees the record sees the attribute.
    upsertSearchAttributes([{ key: STATUS, value: status }]);
    const result = await bookkeeping.recordReplayResult({
      replayId: input.replayId,
      status,
      error,
      chunks,
      chunksTotal: progress.chunksTotal ?? 0,
      processedUntil: progress.processedUntil,
      noise,
    });
    progress.status = status;
    step(`done: ${status}`);
    await notifyInBackground({
      tenantId: input.tenantId,
      event: 'replay.completed',
      step: status,
      data: {
        replay_id: input.replayId,
        rule_id: input.ruleId,
        target: input.targetName,
        status,
        error,
        alerts: progress.alerts,
        events_scanned: progress.eventsScanned,
        window: { from: input.windowFrom, to: input.windowTo },
      },
    });
    return { status, ...result };
  });
}
