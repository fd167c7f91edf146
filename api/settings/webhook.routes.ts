import crypto from 'node:crypto';
import { and, desc, eq, inArray, lt } from 'drizzle-orm';
import { z } from 'zod';
import type { ApiDeps } from '../context';
import { runLink } from '../context';
import { WEBHOOK_EVENTS, webhookAttempts, webhookDeliveries, webhookSettings } from '../../db/schema';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { decodeCursor, encodeCursor, PageQuery } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { invalidRequest, notFound } from '../../domain/errors';
import { Notify } from '../../workflows/notify';
import { KIND, TENANT, workflowIds } from '../../domain/contracts';
import { WorkflowStarted } from '../deployments/schemas';

const NOTIFY_EVENTS = WEBHOOK_EVENTS.filter((e) => e !== 'webhook.test');

const PutWebhookBody = openapi(
  z
    .object({
      url: z.url({ protocol: /^https?$/ }).max(2048),
      secret: z.string().min(16).max(256).optional().describe('HMAC key for X-Detflow-Signature; required the first time, kept when omitted later'),
      events: z.array(z.enum(NOTIFY_EVENTS)).min(1).default([...NOTIFY_EVENTS]),
      enabled: z.boolean().default(true),
    })
    .strict(),
  'PutWebhook',
);

const Webhook = openapi(
  z.object({
    url: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    secret_set: z.boolean().describe('The secret itself is never returned'),
    updated_at: z.string(),
  }),
  'Webhook',
);

const DeliveryAttempt = z.object({ attempt: z.number().int(), at: z.string(), status_code: z.number().int().nullable(), error: z.string().nullable(), duration_ms: z.number().int() });
const Delivery = openapi(
  z.object({
    id: z.string(),
    event: z.string(),
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.array(DeliveryAttempt),
    created_at: z.string(),
    delivered_at: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()),
  }),
  'WebhookDelivery',
);
const DeliveryList = openapi(z.object({ items: z.array(Delivery), next_cursor: z.string().nullable() }), 'WebhookDeliveryList');
const DeliveryQuery = PageQuery.extend({ status: z.enum(['pending', 'delivered', 'failed']).optional(), event: z.enum(WEBHOOK_EVENTS).optional() }).strict();

/** Notification settings: one webhook per tenant (Slack-compatible body, HMAC-signed). */
export function webhookRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const view = (row: typeof webhookSettings.$inferSelect) => ({ url: row.url, events: row.events, enabled: row.enabled, secret_set: true, updated_at: row.updatedAt.toISOString() });

  return [
    defineRoute({
      method: 'get',
      path: '/settings/webhook',
      operationId: 'getWebhook',
      summary: "The tenant's webhook",
      tag: 'settings',
      permission: 'admin',
      responses: { 200: { description: 'The webhook', schema: Webhook }, 404: { description: 'No webhook is configured', schema: ProblemSchema } },
      handler: async ({ auth }) => {
        const [row] = await db.select().from(webhookSettings).where(eq(webhookSettings.tenantId, auth.tenantId));
        if (!row) throw notFound('No webhook is configured for this tenant');
        return { status: 200, body: view(row) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/settings/webhook',
      operationId: 'putWebhook',
      summary: "Set the tenant's webhook: URL, secret, events, enabled",
      tag: 'settings',
      permission: 'admin',
      body: PutWebhookBody,
      responses: { 200: { description: 'The webhook', schema: Webhook } },
      handler: async ({ body, auth }) => {
        const [existing] = await db.select().from(webhookSettings).where(eq(webhookSettings.tenantId, auth.tenantId));
        if (!existing && body.secret === undefined) {
          throw invalidRequest('A secret is required when the webhook is first set', [{ pointer: '/body/secret', message: 'required' }]);
        }
        const secret = body.secret !== undefined ? deps.secrets.seal(body.secret) : existing!.secret;
        const values = { tenantId: auth.tenantId, url: body.url, secret, events: [...new Set(body.events)], enabled: body.enabled, updatedAt: new Date() };
        const [row] = await db.insert(webhookSettings).values(values).onConflictDoUpdate({ target: webhookSettings.tenantId, set: values }).returning();
        return { status: 200, body: view(row!) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/settings/webhook',
      operationId: 'deleteWebhook',
      summary: "Remove the tenant's webhook (pending deliveries are given up)",
      tag: 'settings',
      permission: 'admin',
      responses: { 204: { description: 'Removed' }, 404: { description: 'No webhook is configured', schema: ProblemSchema } },
      handler: async ({ auth }) => {
        const removed = await db.delete(webhookSettings).where(eq(webhookSettings.tenantId, auth.tenantId)).returning({ t: webhookSettings.tenantId });
        if (removed.length === 0) throw notFound('No webhook is configured for this tenant');
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
      responses: {
        202: { description: 'The delivery run started', schema: WorkflowStarted },
        404: { description: 'No webhook is configured', schema: ProblemSchema },
      },
      handler: async ({ auth }) => {
        const [row] = await db.select().from(webhookSettings).where(eq(webhookSettings.tenantId, auth.tenantId));
        if (!row) throw notFound('No webhook is configured for this tenant');
        const id = crypto.randomUUID();
        const workflowId = workflowIds.notify(auth.tenantId, 'webhook.test', id);
        const handle = await deps.temporal.client.workflow.start(Notify, {
          workflowId,
          taskQueue: deps.temporal.taskQueue,
          args: [{ tenantId: auth.tenantId, event: 'webhook.test', sourceKey: `test/${id}`, data: { requested_by: auth.tokenId } }],
          typedSearchAttributes: [
            { key: TENANT, value: auth.tenantId },
            { key: KIND, value: 'notify' },
          ],
        });
        const run = runLink(deps.temporal, workflowId, handle.firstExecutionRunId);
        return {
          status: 202,
          headers: { Location: '/api/v1/settings/webhook/deliveries' },
          body: { id, status: 'running', workflow_id: workflowId, run_id: handle.firstExecutionRunId, links: { self: '/api/v1/settings/webhook/deliveries', ...(run ? { run } : {}) } },
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
      query: DeliveryQuery,
      responses: { 200: { description: 'A page of deliveries', schema: DeliveryList } },
      handler: async ({ query, auth }) => {
        const before = decodeCursor<string>(query.cursor, 'time');
        const rows = await db
          .select()
          .from(webhookDeliveries)
          .where(
            and(
              eq(webhookDeliveries.tenantId, auth.tenantId),
              before !== undefined ? lt(webhookDeliveries.createdAt, new Date(before)) : undefined,
              query.status !== undefined ? eq(webhookDeliveries.status, query.status) : undefined,
              query.event !== undefined ? eq(webhookDeliveries.event, query.event) : undefined,
            ),
          )
          .orderBy(desc(webhookDeliveries.createdAt))
          .limit(query.limit + 1);
        const page = rows.slice(0, query.limit);
        const attempts = page.length
          ? await db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, page.map((d) => d.id))).orderBy(webhookAttempts.attempt)
          : [];
        return {
          status: 200,
          body: {
            items: page.map((d) => ({
              id: d.id,
              event: d.event,
              url: d.url,
              status: d.status,
              attempts: attempts
                .filter((a) => a.deliveryId === d.id)
                .map((a) => ({ attempt: a.attempt, at: a.at.toISOString(), status_code: a.statusCode, error: a.error, duration_ms: a.durationMs })),
              created_at: d.createdAt.toISOString(),
              delivered_at: d.deliveredAt?.toISOString() ?? null,
              payload: d.payload,
            })),
            next_cursor: rows.length > query.limit ? encodeCursor(page.at(-1)!.createdAt.toISOString()) : null,
          },
        };
      },
    }),
  ];
}
