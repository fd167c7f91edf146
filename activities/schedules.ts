import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/activity';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { deployments, targets } from '../db/schema';
import { KIND, RULE_ID, TARGET, TENANT } from '../workflows/search-attributes';

export type TemporalDeps = { client: Client; taskQueue: string };

export function detectionScheduleId(tenantId: string, deploymentId: string): string {
  return `detect/${tenantId}/${deploymentId}`;
}

/** ISO 8601 durations of hours/minutes/seconds (what targets accept) in milliseconds. */
export function isoDurationMs(text: string): number {
  const m = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/.exec(text);
  if (!m || text === 'PT') throw new Error(`Not an ISO 8601 duration of hours, minutes and seconds: ${text}`);
  return ((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1000;
}

/**
 * Scheduled detection runs as one Temporal Schedule per active deployment on a local target, at the
 * target's detection interval; overlapping runs are skipped, so a slow run never piles up.
 */
export function createScheduleActivities({ db, temporal }: { db: Db; temporal: TemporalDeps }) {
  return {
    async ensureDetectionSchedule({ deploymentId }: { deploymentId: string }): Promise<string | null> {
      const [row] = await db
        .select({ d: deployments, interval: targets.detectionInterval, kind: targets.kind, targetName: targets.name })
        .from(deployments)
        .innerJoin(targets, eq(targets.id, deployments.targetId))
        .where(eq(deployments.id, deploymentId));
      if (!row) throw ApplicationFailure.nonRetryable(`No deployment ${deploymentId}`, 'DeploymentNotFound');
      if (row.kind !== 'local') return null;
      const scheduleId = detectionScheduleId(row.d.tenantId, deploymentId);
      try {
        await temporal.client.schedule.create({
          scheduleId,
          spec: { intervals: [{ every: isoDurationMs(row.interval) }] },
          action: {
            type: 'startWorkflow',
            workflowType: 'DetectionRun',
            args: [{ deploymentId }],
            taskQueue: temporal.taskQueue,
            workflowId: scheduleId,
            typedSearchAttributes: [
              { key: TENANT, value: row.d.tenantId },
              { key: RULE_ID, value: row.d.ruleId },
              { key: TARGET, value: row.targetName },
              { key: KIND, value: 'detect' },
            ],
          },
          policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
        });
      } catch (err) {
        if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      }
      return scheduleId;
    },

    async removeDetectionSchedules({ tenantId, deploymentIds }: { tenantId: string; deploymentIds: string[] }): Promise<void> {
      for (const id of deploymentIds) {
        try {
          await temporal.client.schedule.getHandle(detectionScheduleId(tenantId, id)).delete();
        } catch (err) {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        }
      }
    },
  };
}

export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
