import { and, eq, inArray } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import type { Db } from '../../db/client';
import { approvals, deployments } from '../../db/schema';
import type { DeploymentStatus } from '../statuses';
import { unrecordedEnd } from '../runs/unrecorded-end';

/** Statuses a change's own run moves its deployments on from; nothing else does. */
export const IN_PROGRESS: ReadonlySet<DeploymentStatus> = new Set(['pending_approval', 'deploying']);

/**
 * Settles the records of a change whose run ended without settling them (see unrecorded-end.ts):
 * its deployments still in progress end `failed` and its pending approval `cancelled`, both with
 * the reason. Otherwise a CI job waiting on the deployment, or `detflow sync` following it, would
 * wait for ever. Returns whether it changed anything.
 */
export async function settleAbandonedChange(db: Db, client: Client, change: { workflowId: string; createdAt: Date }, now: Date = new Date()): Promise<boolean> {
  const ended = await unrecordedEnd(client, change.workflowId, change.createdAt, now);
  if (ended === undefined) return false;
  const error = `${ended}; the change did not complete`;
  return db.transaction(async (tx) => {
    const failed = await tx
      .update(deployments)
      .set({ status: 'failed', error, endedAt: now, updatedAt: now })
      .where(and(eq(deployments.workflowId, change.workflowId), inArray(deployments.status, [...IN_PROGRESS])))
      .returning({ id: deployments.id });
    const cancelled = await tx
      .update(approvals)
      .set({ status: 'cancelled', comment: error, decidedAt: now })
      .where(and(eq(approvals.workflowId, change.workflowId), eq(approvals.status, 'pending')))
      .returning({ id: approvals.id });
    return failed.length + cancelled.length > 0;
  });
}
