import { randomUUID } from 'node:crypto';
import { ActivityFailure, ApplicationFailure, TimeoutFailure, WorkflowFailedError } from '@temporalio/client';
import type { DriftCheck } from '../../workflows/drift-check';
import type { RestoreDeployment } from '../../workflows/restore-deployment';
import { FailureType, KIND, TENANT, WorkflowType, workflowIds } from '../../workflows/contracts';
import { and, eq } from 'drizzle-orm';
import { deployments, targets } from '../../db/schema';
import type { DomainDeps } from '../deps';
import { conflict, insufficientScope, notFound, unavailable } from '../errors';
import { LIVE_DEPLOYMENT_STATUSES } from '../statuses';
import { mayUseEnvironment, type Actor } from '../tenants/actor';
import { findTarget } from '../targets/targets';
import { openDriftOf } from './drift-queries';
import { driftCheckRunMetadata, restoreRunMetadata } from '../../workflows/run-summaries';
import { driftView, type DriftView } from './drift-view';

export type TargetDriftReport = { target: string; checked_at: string | null; items: DriftView[] };

/** A target's open drift, as the last check left it. */
export async function targetDriftReport(deps: Pick<DomainDeps, 'database'>, actor: Actor, name: string): Promise<TargetDriftReport> {
  const { db } = deps.database;
  const target = await findTarget(db, actor, name);
  const open = await openDriftOf(db, { tenantId: actor.tenantId, targetIds: [target.id] });
  return { target: target.name, checked_at: target.driftCheckedAt?.toISOString() ?? null, items: open.map(driftView) };
}

/**
 * Checks a target for drift now (the same run the schedule starts, for one target) and answers
 * what it found; new drift is notified as the scheduled check would.
 */
export async function checkTargetDriftNow(deps: DomainDeps, actor: Actor, name: string): Promise<TargetDriftReport> {
  const target = await findTarget(deps.database.db, actor, name);
  await answerOf(`Target ${target.name} could not be checked`, () =>
    deps.temporal.client.workflow.execute<typeof DriftCheck>(WorkflowType.DriftCheck, {
      workflowId: workflowIds.driftCheck(actor.tenantId, target.id, randomUUID()),
      taskQueue: deps.temporal.taskQueue,
      args: [{ targetId: target.id }],
      ...driftCheckRunMetadata({ targetName: target.name, requestedBy: actor.principal }),
      typedSearchAttributes: [
        { key: TENANT, value: actor.tenantId },
        { key: KIND, value: 'drift' },
      ],
    }),
  );
  return targetDriftReport(deps, actor, name);
}

/**
 * Puts a live deployment back on its target as detflow deployed it — recreated if it was deleted,
 * its query restored if it was edited, enabled if it was disabled — then checks the target again.
 * The version is the one already approved and live, so no new approval is asked for.
 */
export async function restoreDeployment(deps: DomainDeps, actor: Actor, id: string): Promise<{ deploymentId: string; target: string; drift: DriftView[] }> {
  const { db } = deps.database;
  const [row] = await db
    .select({ d: deployments, target: targets })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .where(and(eq(deployments.id, id), eq(deployments.tenantId, actor.tenantId)));
  if (!row) throw notFound(`No deployment ${id} in this tenant`);
  if (!mayUseEnvironment(actor, row.target.environment))
    throw insufficientScope(`This token may not act on environment ${row.target.environment} (target ${row.target.name})`);
  if (!(LIVE_DEPLOYMENT_STATUSES as readonly string[]).includes(row.d.status)) {
    throw conflict(`Deployment ${id} is ${row.d.status}; only the live deployment of a rule can be restored on its target`);
  }
  await answerOf(`Deployment ${id} could not be restored on ${row.target.name}`, () =>
    deps.temporal.client.workflow.execute<typeof RestoreDeployment>(WorkflowType.RestoreDeployment, {
      workflowId: workflowIds.restore(actor.tenantId, id, randomUUID()),
      taskQueue: deps.temporal.taskQueue,
      args: [{ deploymentId: id }],
      ...restoreRunMetadata({ deploymentId: id, ruleId: row.d.ruleId, version: row.d.version, targetName: row.target.name, requestedBy: actor.principal }),
      typedSearchAttributes: [
        { key: TENANT, value: actor.tenantId },
        { key: KIND, value: 'drift' },
      ],
    }),
  );
  const open = await openDriftOf(db, { tenantId: actor.tenantId, targetIds: [row.target.id] });
  return { deploymentId: id, target: row.target.name, drift: open.filter((o) => o.ruleId === row.d.ruleId).map(driftView) };
}

/**
 * A run's failure as the answer: the SIEM refusing detflow (credentials, settings, or a newer
 * version live) is the target's state (409); a SIEM throttling or down is temporary (503).
 */
async function answerOf<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const cause = err.cause instanceof ActivityFailure ? err.cause.cause : err.cause;
    if (cause instanceof TimeoutFailure) throw unavailable(`${what}: the SIEM did not answer in time`, 30);
    if (!(cause instanceof ApplicationFailure)) throw err;
    if (cause.type === 'SiemUnavailable') throw unavailable(`${what}: ${cause.message}`, 30);
    const refusals: readonly string[] = [
      FailureType.SiemRefused,
      FailureType.TargetMisconfigured,
      FailureType.UnsupportedTargetKind,
      FailureType.LiveVersionChanged,
      FailureType.RuleDoesNotCompile,
    ];
    if (cause.type && refusals.includes(cause.type)) throw conflict(`${what}: ${cause.message}`);
    throw err;
  }
}
