import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/activity';
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../db/client';
import { deployments, targets } from '../db/schema';
import { KIND, RULE_ID, TARGET, TENANT, FailureType, WorkflowType, workflowIds } from '../workflows/contracts';
import { LIVE_DEPLOYMENT_STATUSES } from '../domain/statuses';
import { isoDurationMs } from '../config/iso-duration';
import { detectionBatchScheduleMetadata, detectionScheduleMetadata, driftScheduleMetadata, retentionRunMetadata } from '../workflows/run-summaries';

export type TemporalDeps = { client: Client; taskQueue: string };

/**
 * How scheduled detection is scheduled (DETFLOW_DETECTION_SCHEDULES): `per-target` (the default),
 * one Schedule per tenant and local target whose DetectionBatch run evaluates every live deployment
 * of it in one pass; `per-deployment`, one Schedule and DetectionRun per deployment (the design
 * before decision record 0084).
 */
export const DETECTION_SCHEDULE_MODES = ['per-target', 'per-deployment'] as const;
export type DetectionScheduleMode = (typeof DETECTION_SCHEDULE_MODES)[number];

/**
 * The batched detection schedule of a tenant on a local target, at the target's interval; harmless
 * to call again. A schedule made at another interval (the target's setting changed since) is moved
 * to the current one, so the next deploy to the target, or the worker's start, applies the change.
 */
export async function ensureDetectionBatchSchedule(temporal: TemporalDeps, g: { tenantId: string; targetId: string; targetName: string; interval: string }): Promise<string> {
  const scheduleId = workflowIds.detectionBatchSchedule(g.tenantId, g.targetId);
  const every = isoDurationMs(g.interval);
  try {
    await temporal.client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every }] },
      action: {
        type: 'startWorkflow',
        workflowType: WorkflowType.DetectionBatch,
        args: [{ tenantId: g.tenantId, targetId: g.targetId }],
        taskQueue: temporal.taskQueue,
        workflowId: scheduleId,
        ...detectionBatchScheduleMetadata(g),
        typedSearchAttributes: [
          { key: TENANT, value: g.tenantId },
          { key: TARGET, value: g.targetName },
          { key: KIND, value: 'detect' },
        ],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    const handle = temporal.client.schedule.getHandle(scheduleId);
    const current = (await handle.describe()).spec.intervals?.[0]?.every;
    // Described to the nearest second.
    if (current === undefined || Math.round(current / 1000) !== Math.round(every / 1000)) {
      await handle.update((s) => ({ ...s, spec: { intervals: [{ every }] }, action: { ...s.action, ...detectionBatchScheduleMetadata(g) } }));
    }
  }
  return scheduleId;
}

async function deleteSchedule(temporal: TemporalDeps, scheduleId: string): Promise<void> {
  try {
    await temporal.client.schedule.getHandle(scheduleId).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/**
 * At worker start: the detection schedules of this database's live local deployments put in the
 * configured mode. `per-target` creates each tenant-and-target schedule and deletes the
 * per-deployment schedules an earlier version created; `per-deployment` does the reverse. Only
 * schedules that exist are deleted (one listing), so a start with nothing to migrate costs one call
 * per group.
 */
export async function migrateDetectionSchedules(db: Db, temporal: TemporalDeps, mode: DetectionScheduleMode): Promise<void> {
  const live = await db
    .select({ id: deployments.id, tenantId: deployments.tenantId, targetId: deployments.targetId, targetName: targets.name, interval: targets.detectionInterval })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .where(and(eq(targets.kind, 'local'), inArray(deployments.status, [...LIVE_DEPLOYMENT_STATUSES])));
  if (live.length === 0) return;
  const existing = new Set<string>();
  for await (const s of temporal.client.schedule.list()) existing.add(s.scheduleId);
  const groups = new Map(live.map((d) => [workflowIds.detectionBatchSchedule(d.tenantId, d.targetId), d]));
  if (mode === 'per-target') {
    for (const g of groups.values()) await ensureDetectionBatchSchedule(temporal, g);
    for (const d of live) {
      const id = workflowIds.detectionSchedule(d.tenantId, d.id);
      if (existing.has(id)) await deleteSchedule(temporal, id);
    }
    return;
  }
  const schedules = createScheduleActivities({ db, temporal, mode });
  for (const d of live) if (!existing.has(workflowIds.detectionSchedule(d.tenantId, d.id))) await schedules.ensureDetectionSchedule({ deploymentId: d.id });
  for (const id of groups.keys()) if (existing.has(id)) await deleteSchedule(temporal, id);
}

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
 * Scheduled detection of deployments on local targets, at the target's detection interval;
 * overlapping runs are skipped, so a slow run never piles up. `per-target`: one Schedule per tenant
 * and target (DetectionBatch), which a deployment joins by being live; `per-deployment`: one
 * Schedule per deployment (DetectionRun).
 */
export function createScheduleActivities({ db, temporal, mode = 'per-target' }: { db: Db; temporal: TemporalDeps; mode?: DetectionScheduleMode }) {
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
      if (mode === 'per-target') {
        return ensureDetectionBatchSchedule(temporal, { tenantId: row.d.tenantId, targetId: row.d.targetId, targetName: row.targetName, interval: row.interval });
      }
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

    /**
     * The per-deployment schedules of deployments that stopped being live. With per-target
     * schedules there is none to delete (a deployment leaves its group's pass by no longer being
     * live); one left by an earlier version is deleted all the same.
     */
    async removeDetectionSchedules({ tenantId, deploymentIds }: { tenantId: string; deploymentIds: string[] }): Promise<void> {
      for (const id of deploymentIds) await deleteSchedule(temporal, workflowIds.detectionSchedule(tenantId, id));
    },
  };
}

export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
