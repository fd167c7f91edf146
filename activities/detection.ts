import { ScheduleNotFoundError } from '@temporalio/client';
import { activityKey } from './activity-key';
import type { Db } from '../db/client';
import { workflowIds } from '../workflows/contracts';
import { runDetection, type DetectionOutcome } from '../domain/detection/run-detection';
import type { SiemAdapters } from '../siem/adapters';
import type { DomainMetrics } from '../domain/metrics';
import type { TemporalDeps } from './schedules';

export type { DetectionOutcome } from '../domain/detection/run-detection';

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
