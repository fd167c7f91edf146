import { Context } from '@temporalio/activity';
import { ScheduleNotFoundError } from '@temporalio/client';
import type { Db } from '../db/client';
import { workflowIds } from '../workflows/contracts';
import { runDetection, type DetectionOutcome } from '../domain/detection/run-detection';
import type { SiemAdapters } from '../siem/adapters';
import type { DomainMetrics } from '../domain/metrics';
import type { TemporalDeps } from './schedules';

export type { DetectionOutcome } from '../domain/detection/run-detection';

/**
 * The activity execution this call is (the same for every attempt of it), or null outside an
 * activity (a direct call): a retry after an attempt committed returns that attempt's outcome.
 */
function activityKey(): string | null {
  let info;
  try {
    info = Context.current().info;
  } catch {
    return null;
  }
  const run = info.workflowExecution;
  return run ? `${run.workflowId}/${run.runId}/${info.activityId}` : null;
}

export function createDetectionActivities({
  db,
  siem,
  temporal,
  now = () => new Date(),
  metrics,
}: {
  db: Db;
  siem: SiemAdapters;
  temporal?: TemporalDeps;
  now?: () => Date;
  metrics?: DomainMetrics;
}) {
  async function removeSchedule(tenantId: string, deploymentId: string): Promise<void> {
    if (!temporal) return;
    try {
      await temporal.client.schedule.getHandle(workflowIds.detectionSchedule(tenantId, deploymentId)).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }
  return {
    /** One scheduled-detection run of one deployment (domain/detection/run-detection.ts). */
    runDetection: ({ deploymentId }: { deploymentId: string }): Promise<DetectionOutcome> =>
      runDetection({ db, siem, now, removeSchedule, ...(metrics ? { metrics } : {}) }, { deploymentId, activityKey: activityKey() }),
  };
}

export type DetectionActivities = ReturnType<typeof createDetectionActivities>;
