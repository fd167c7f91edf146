import { WorkflowNotFoundError } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import type { DomainDeps } from '../deps';
import type { Actor } from '../tenants/actor';
import { webhookDeliveries } from '../../db/schema';
import { conflict, notFound } from '../errors';
import { startOrJoin } from '../runs/start-or-join';
import type { Redeliver } from '../../workflows/notify';
import { KIND, TENANT, WorkflowType, workflowIds } from '../../workflows/contracts';
import { findWebhook } from './webhook-settings';

export type StartedRedelivery = { id: string; workflowId: string; runId: string };

/**
 * Sends a delivery that was given up (`failed`) again: same delivery id and body, so a receiver
 * that deduplicates on `X-Detflow-Delivery` still sees it once. Repeating the request while the
 * re-send runs joins that run; a delivered one is never sent again.
 */
export async function redeliverWebhook(deps: DomainDeps, auth: Actor, deliveryId: string): Promise<StartedRedelivery> {
  const { db } = deps.database;
  const webhook = await findWebhook(db, auth);
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.tenantId, auth.tenantId)));
  if (!row) throw notFound(`No webhook delivery ${deliveryId} in this tenant`);
  if (row.status === 'delivered') throw conflict(`Webhook delivery ${deliveryId} was delivered already; it is never sent twice`);
  const workflowId = workflowIds.redeliver(auth.tenantId, deliveryId, row.attempts);
  if (row.status === 'pending') return { id: deliveryId, workflowId, runId: await joinRedelivery(deps, workflowId, deliveryId) };

  // Claimed before the run starts, so the run's own "given up" mark (pending → failed) cannot be lost.
  // Sent to the webhook's URL of now: a URL corrected after an outage gets what was given up.
  const claimed = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', url: webhook.url })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, 'failed'), eq(webhookDeliveries.attempts, row.attempts)))
    .returning({ id: webhookDeliveries.id });
  if (claimed.length === 0) return { id: deliveryId, workflowId, runId: await joinRedelivery(deps, workflowId, deliveryId) };
  try {
    const runId = await startOrJoin<typeof Redeliver>(deps.temporal.client, WorkflowType.Redeliver, {
      workflowId,
      taskQueue: deps.temporal.taskQueue,
      args: [{ deliveryId }],
      typedSearchAttributes: [
        { key: TENANT, value: auth.tenantId },
        { key: KIND, value: 'notify' },
      ],
    });
    return { id: deliveryId, workflowId, runId };
  } catch (err) {
    // Not started: left `failed`, so the request can simply be repeated.
    await db
      .update(webhookDeliveries)
      .set({ status: 'failed' })
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, 'pending')));
    throw err;
  }
}

/** A pending delivery is either being re-sent (join that run) or still in its first run's retries. */
async function joinRedelivery(deps: DomainDeps, workflowId: string, deliveryId: string): Promise<string> {
  try {
    return (await deps.temporal.client.workflow.getHandle(workflowId).describe()).runId;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    throw conflict(`Webhook delivery ${deliveryId} is still being retried; it can be re-sent once it is given up (status failed)`);
  }
}
