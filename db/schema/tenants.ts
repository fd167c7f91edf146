import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tstz } from './columns';

/** Who may do what: tenants, their environments and targets, and API tokens. */

export const tenants = pgTable('tenants', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  tier: text('tier', { enum: ['free', 'professional', 'enterprise', 'unlimited'] }).notNull(),
  /** Days the local event store keeps this tenant's events; older ones are deleted daily. */
  retentionDays: integer('retention_days').notNull().default(90),
  createdAt: createdAt(),
});

export const environments = pgTable(
  'environments',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.name] })],
);

export const targets = pgTable(
  'targets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    kind: text('kind', { enum: ['local', 'splunk', 'elastic', 'sentinel'] }).notNull(),
    environment: text('environment').notNull(),
    /** Connection settings; secrets inside are encrypted with DETFLOW_SECRET_KEY. */
    connection: jsonb('connection').$type<Record<string, unknown>>().notNull().default({}),
    detectionInterval: text('detection_interval').notNull().default('PT5M'),
    costModel: jsonb('cost_model').$type<TargetCostModel>().notNull(),
    builtIn: boolean('built_in').notNull().default(false),
    /** When the last drift check of this target completed; null until one has. */
    driftCheckedAt: tstz('drift_checked_at'),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('targets_tenant_name').on(t.tenantId, t.name)],
);

export type TargetCostModel = {
  currency: string;
  price_per_gb_scanned: number;
  triage_minutes_per_alert: number;
  cost_per_analyst_hour: number;
};

export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** First characters of the token, safe to show in lists and audit rows. */
    displayPrefix: text('display_prefix').notNull(),
    /** SHA-256 of the whole token, hex. The token itself is never stored. */
    hash: text('hash').notNull(),
    /** Environment names, or null for every environment of the tenant. */
    environments: jsonb('environments').$type<string[] | null>(),
    permissions: jsonb('permissions').$type<string[]>().notNull(),
    createdBy: uuid('created_by'),
    /**
     * The person (or system) the token acts for, e.g. an email; tokens a token creates inherit it.
     * Four-eyes compares principals. Tokens made before principals existed: `token:<id>`.
     */
    principal: text('principal').notNull(),
    createdAt: createdAt(),
    expiresAt: tstz('expires_at'),
    revokedAt: tstz('revoked_at'),
  },
  (t) => [uniqueIndex('api_tokens_hash').on(t.hash), index('api_tokens_tenant').on(t.tenantId)],
);
