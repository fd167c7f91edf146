import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/activity';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { deployments, targets } from '../db/schema';
import { KIND, RULE_ID, TARGET, TENANT, FailureType, WorkflowType, workflowIds } from '../workflows/contracts';
import { LIVE_DEPLOYMENT_STATUSES } from '../domain/statuses';
import { isoDurationMs } from '../config/iso-duration';
import { detectionScheduleMetadata, driftScheduleMetadata, retentionRunMetadata } from '../workflows/run-summaries';

export type TemporalDeps = { client: Client; taskQueue: string };

/** The daily retention pass; created once per Temporal namespace, harmless to call again. */
export async function ensureRetentionSchedule(temporal: TemporalDeps): Promise<void> {
  try {
    await temporal.client.schedule.create({
      scheduleId: workflowIds.retentionSchedule,
      spec: { intervals: [{ every: '1 day' }] },
      action: {
        type: 'startWorkflow',
        workflowType: WorkflowType.ApplyRetention,
        args: [],
        taskQueue: temporal.taskQueue,
        workflowId: workflowIds.retentionSchedule,
        ...retentionRunMetadata,
        typedSearchAttributes: [{ key: KIND, value: 'retention' }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    // Created by a version before runs described themselves: the UI names its runs from now on.
    // Updated only then, so workers starting together do not race to rewrite it at every start.
    const handle = temporal.client.schedule.getHandle(workflowIds.retentionSchedule);
    const { action } = await handle.describe();
    if (action.type === 'startWorkflow' && action.staticSummary !== retentionRunMetadata.staticSummary) {
      await handle.update((s) => ({ ...s, action: { ...s.action, ...retentionRunMetadata } }));
    }
  }
}

/**
 * The drift check of every target with something deployed, every `minutes`. Created once; a
 * changed interval is applied to the existing schedule, so restarting with a new setting takes effect.
 */
export async function ensureDriftSchedule(temporal: TemporalDeps, minutes: number): Promise<void> {
  const spec = { intervals: [{ every: `${minutes} minutes` }] };
  try {
    await temporal.client.schedule.create({
      scheduleId: workflowIds.driftSchedule,
      spec,
      action: {
        type: 'startWorkflow',
        workflowType: WorkflowType.DriftCheck,
        args: [{}],
        taskQueue: temporal.taskQueue,
        workflowId: workflowIds.driftSchedule,
        ...driftScheduleMetadata(minutes),
        typedSearchAttributes: [{ key: KIND, value: 'drift' }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await temporal.client.schedule.getHandle(workflowIds.driftSchedule).update((s) => ({ ...s, spec, action: { ...s.action, ...driftScheduleMetadata(minutes) } }));
  }
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
      if (!row) throw ApplicationFailure.nonRetryable(`No deployment ${deploymentId}`, FailureType.DeploymentNotFound);
      if (row.kind !== 'local') return null;
      // Superseded or rolled back since it was activated (a newer deploy won the race): a schedule
      // now would run for ever on a deployment that never detects again.
      if (!(LIVE_DEPLOYMENT_STATUSES as readonly string[]).includes(row.d.status)) return null;
      const scheduleId = workflowIds.detectionSchedule(row.d.tenantId, deploymentId);
      try {
        await temporal.client.schedule.create({
          scheduleId,
          spec: { intervals: [{ every: isoDurationMs(row.interval) }] },
          action: {
            type: 'startWorkflow',
            workflowType: WorkflowType.DetectionRun,
            args: [{ deploymentId }],
            taskQueue: temporal.taskQueue,
            workflowId: scheduleId,
            ...detectionScheduleMetadata({ deploymentId, ruleId: row.d.ruleId, version: row.d.version, targetName: row.targetName, interval: row.interval }),
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
          await temporal.client.schedule.getHandle(workflowIds.detectionSchedule(tenantId, id)).delete();
        } catch (err) {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        }
      }
    },
  };
}

export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
