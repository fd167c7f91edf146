import crypto from 'node:crypto';
import type { DomainDeps } from '../deps';
import type { Actor } from '../tenants/actor';
import type { Notify } from '../../workflows/notify';
import { KIND, TENANT, WorkflowType, workflowIds } from '../../workflows/contracts';
import { findWebhook } from './webhook-settings';

export type StartedTestNotification = { id: string; workflowId: string; runId: string };

/** Sends a test notification to the tenant's webhook through the same delivery path as real events (a Notify run). */
export async function sendTestNotification(deps: DomainDeps, auth: Actor): Promise<StartedTestNotification> {
  await findWebhook(deps.database.db, auth);
  const id = crypto.randomUUID();
  const workflowId = workflowIds.notify(auth.tenantId, 'webhook.test', id);
  const handle = await deps.temporal.client.workflow.start<typeof Notify>(WorkflowType.Notify, {
    workflowId,
    taskQueue: deps.temporal.taskQueue,
    args: [{ tenantId: auth.tenantId, event: 'webhook.test', sourceKey: `test/${id}`, data: { requested_by: auth.tokenId } }],
    typedSearchAttributes: [
      { key: TENANT, value: auth.tenantId },
      { key: KIND, value: 'notify' },
    ],
  });
  return { id, workflowId, runId: handle.firstExecutionRunId };
}
