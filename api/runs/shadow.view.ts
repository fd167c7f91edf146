import type { TemporalContext } from '../../domain/deps';
import type { ShadowRecord } from '../../domain/runs/shadows';
import { runLink } from '../context';
import { recordedRunResult } from './projection.view';

/** How the API shows a shadow evaluation (the Shadow schema): progress from the run while it runs. */
export function shadowView(temporal: TemporalContext, { shadow: s, targetName, progress }: ShadowRecord) {
  const run = runLink(temporal, s.workflowId, s.runId);
  return {
    id: s.id,
    rule_id: s.ruleId,
    version: s.version,
    target: targetName,
    duration: s.duration,
    interval: s.interval,
    status: s.status,
    progress: progress
      ? {
          started_at: progress.startedAt,
          ends_at: progress.endsAt,
          evaluations: progress.evaluations,
          workflow_runs: progress.workflowRuns,
          events_scanned: progress.eventsScanned,
          alerts: progress.matches,
          bytes_scanned: progress.bytesScanned,
        }
      : null,
    result: recordedRunResult(s.result),
    error: s.error,
    workflow_id: s.workflowId,
    run_id: s.runId,
    created_at: s.createdAt.toISOString(),
    ended_at: s.endedAt?.toISOString() ?? null,
    links: { self: `/api/v1/shadows/${s.id}`, stop: `/api/v1/shadows/${s.id}/stop`, ...(run ? { run } : {}) },
  };
}
