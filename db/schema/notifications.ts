import { bigserial, boolean, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tstz } from './columns';
import { tenants } from './tenants';

/** Webhook notifications: the settings, each delivery and each attempt. */

export const webhookSettings = pgTable('webhook_settings', {
  tenantId: text('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  /** HMAC secret, encrypted with DETFLOW_SECRET_KEY. */
  secret: text('secret').notNull(),
  events: jsonb('events').$type<string[]>().notNull(),
  enabled: boolean('enabled').notNull().default(true),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});

export const WEBHOOK_EVENTS = [
  'approval.requested',
  'approval.decided',
  'deployment.succeeded',
  'deployment.failed',
  'rollback.completed',
  'deployment.demoted',
  'deployment.promoted',
  'replay.completed',
  'shadow.completed',
  'noise_budget.exceeded',
  'rule.health_degraded',
  'deployment.drifted',
  'webhook.test',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** One notification to one tenant's webhook; retried until delivered or given up. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    event: text('event').notNull(),
    /** What caused it (e.g. a workflow id and step), so a retried activity never creates a second delivery. */
    sourceKey: text('source_key').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    url: text('url').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    deliveredAt: tstz('delivered_at'),
  },
  (t) => [uniqueIndex('webhook_deliveries_source').on(t.tenantId, t.sourceKey), index('webhook_deliveries_tenant').on(t.tenantId, t.createdAt)],
);

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    at: tstz('at').notNull().defaultNow(),
    statusCode: integer('status_code'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
  },
  (t) => [index('webhook_attempts_delivery').on(t.deliveryId)],
);
