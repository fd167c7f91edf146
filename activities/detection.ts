import { ScheduleNotFoundError } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { activityKey } from './activity-key';
import type { Db } from '../db/client';
import { workflowIds } from '../workflows/contracts';
import { runDetection, type DetectionOutcome } from '../domain/detection/run-detection';
import { runDetectionBatch, type BatchOutcome } from '../domain/detection/run-detection-batch';
import type { SiemAdapters } from '../siem/adapters';
import type { DomainMetrics } from '../domain/metrics';
import type { TemporalDeps } from './schedules';

export type { DetectionOutcome } from '../domain/detection/run-detection';
export type { BatchOutcome } from '../domain/detection/run-detection-batch';

/** Tells Temporal the pass is alive (and how far it got); nothing outside an activity. */
function heartbeat(done: number, of: number): void {
  try {
    Context.current().heartbeat({ done, of });
  } catch {
    // A direct call (tests): no activity to heartbeat.
  }
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
    /** One pass over every live deployment of a tenant on a local target (domain/detection/run-detection-batch.ts). */
    runDetectionBatch: ({ tenantId, targetId }: { tenantId: string; targetId: string }): Promise<BatchOutcome> =>
      runDetectionBatch({ db, siem, now, removeSchedule, ...(metrics ? { metrics } : {}) }, { tenantId, targetId, key: activityKey(), progress: heartbeat }),
  };
}

export type DetectionActivities = ReturnType<typeof createDetectionActivities>;
