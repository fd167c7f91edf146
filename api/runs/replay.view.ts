import type { TemporalContext } from '../../domain/deps';
import type { ReplayRecord } from '../../domain/runs/replays';
import { runLink } from '../context';
import { recordedRunResult } from './projection.view';

/** The parts of a recorded result a replay's progress is read from once it has ended. */
type RecordedFigures = { chunks?: { done: number; total: number }; events_scanned?: number; alerts?: { total: number }; window_processed?: { to: string } } | null;

/** How the API shows a replay (the Replay schema): progress from the run while it runs, else from its recorded figures. */
export function replayView(temporal: TemporalContext, { replay: r, targetName, progress }: ReplayRecord) {
  const result = r.result as RecordedFigures;
  const run = runLink(temporal, r.workflowId, r.runId);
  return {
    id: r.id,
    rule_id: r.ruleId,
    version: r.version,
    target: targetName,
    window: { from: r.windowFrom.toISOString(), to: r.windowTo.toISOString() },
    noise_budget: r.noiseBudget ?? null,
    chunk_events: r.chunkEvents,
    status: r.status,
    progress: progress
      ? {
          chunks_done: progress.chunksDone,
          chunks_total: progress.chunksTotal,
          events_scanned: progress.eventsScanned,
          alerts: progress.alerts,
          processed_until: progress.processedUntil,
        }
      : result?.chunks
        ? {
            chunks_done: result.chunks.done,
            chunks_total: result.chunks.total,
            events_scanned: result.events_scanned ?? 0,
            alerts: result.alerts?.total ?? 0,
            processed_until: result.window_processed?.to ?? r.windowFrom.toISOString(),
          }
        : null,
    result: recordedRunResult(r.result),
    error: r.error,
    workflow_id: r.workflowId,
    run_id: r.runId,
    created_at: r.createdAt.toISOString(),
    ended_at: r.endedAt?.toISOString() ?? null,
    links: { self: `/api/v1/replays/${r.id}`, cancel: `/api/v1/replays/${r.id}/cancel`, ...(run ? { run } : {}) },
  };
}
