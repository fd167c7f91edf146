import type { ApiDeps } from '../context';
import { runLink } from '../context';
import { defineRoute } from '../http/route';
import { decodeCursor, encodeCursor } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { deleteWebhook, findWebhook, putWebhook } from '../../domain/notifications/webhook-settings';
import { sendTestNotification } from '../../domain/notifications/test-notification';
import { listDeliveries } from '../../domain/notifications/webhook-deliveries';
import { redeliverWebhook } from '../../domain/notifications/redeliver';
import { WorkflowStarted } from '../deployments/schemas';
import { deliveryView, webhookView } from './webhook.view';
import { DeliveryList, DeliveryQuery, PutWebhookBody, UuidParams, Webhook } from './schemas';

const DELIVERIES = '/api/v1/settings/webhook/deliveries';

/** Notification settings: one webhook per tenant (Slack-compatible body, HMAC-signed). */
export function webhookRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'get',
      path: '/settings/webhook',
      operationId: 'getWebhook',
      summary: "The tenant's webhook",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      responses: { 200: { description: 'The webhook', schema: Webhook }, 404: { description: 'No webhook is configured', schema: ProblemSchema } },
      handler: async ({ auth }) => ({ status: 200, body: webhookView(await findWebhook(db, auth)) }),
    }),
    defineRoute({
      method: 'put',
      path: '/settings/webhook',
      operationId: 'putWebhook',
      summary: "Set the tenant's webhook: URL, secret, events, enabled",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      body: PutWebhookBody,
      responses: { 200: { description: 'The webhook', schema: Webhook } },
      handler: async ({ body, auth }) => ({
        status: 200,
        body: webhookView(await putWebhook(deps, auth, { url: body.url, secret: body.secret, events: body.events, enabled: body.enabled })),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/settings/webhook',
      operationId: 'deleteWebhook',
      summary: "Remove the tenant's webhook (pending deliveries are given up)",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      responses: { 204: { description: 'Removed' }, 404: { description: 'No webhook is configured', schema: ProblemSchema } },
      handler: async ({ auth }) => {
        await deleteWebhook(db, auth);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/settings/webhook/test',
      operationId: 'testWebhook',
      summary: 'Send a test notification through the same delivery path as real events',
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      responses: {
        202: { description: 'The delivery run started', schema: WorkflowStarted },
        404: { description: 'No webhook is configured', schema: ProblemSchema },
      },
      handler: async ({ auth }) => {
        const started = await sendTestNotification(deps, auth);
        const run = runLink(deps.temporal, started.workflowId, started.runId);
        return {
          status: 202,
          headers: { Location: DELIVERIES },
          body: { id: started.id, status: 'running', workflow_id: started.workflowId, run_id: started.runId, links: { self: DELIVERIES, ...(run ? { run } : {}) } },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/settings/webhook/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'Webhook deliveries, newest first, with every attempt',
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      query: DeliveryQuery,
      responses: { 200: { description: 'A page of deliveries', schema: DeliveryList } },
      handler: async ({ query, auth }) => {
        const before = decodeCursor<string>(query.cursor, 'time');
        const page = await listDeliveries(db, auth, {
          before: before !== undefined ? new Date(before) : undefined,
          status: query.status,
          event: query.event,
          limit: query.limit,
        });
        return {
          status: 200,
          body: { items: page.items.map(deliveryView), next_cursor: page.more ? encodeCursor(page.items.at(-1)!.delivery.createdAt.toISOString()) : null },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/settings/webhook/deliveries/{id}/redeliver',
      operationId: 'redeliverWebhookDelivery',
      summary: 'Send a given-up delivery (status failed) again, with the same delivery id and body',
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      params: UuidParams,
      responses: {
        202: { description: 'The re-send run started (or, repeated, the one already running)', schema: WorkflowStarted },
        404: { description: 'No such delivery in this tenant, or no webhook is configured', schema: ProblemSchema },
        409: { description: 'The delivery was delivered already, or is still being retried by its first run', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const started = await redeliverWebhook(deps, auth, params.id);
        const run = runLink(deps.temporal, started.workflowId, started.runId);
        const self = `${DELIVERIES}?status=pending`;
        return {
          status: 202,
          headers: { Location: self },
          body: { id: started.id, status: 'running', workflow_id: started.workflowId, run_id: started.runId, links: { self, ...(run ? { run } : {}) } },
        };
      },
    }),
  ];
}
