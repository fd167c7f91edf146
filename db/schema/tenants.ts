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
    /** Placeholder values every target of the environment has unless it sets its own (`%name%` → values). */
    placeholders: jsonb('placeholders').$type<Record<string, string[]>>().notNull().default({}),
    /** The version of these settings; each change adds a `settings_versions` row. */
    settingsVersion: integer('settings_version').notNull().default(1),
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
    /** The target's own placeholder values; they win over its environment's defaults. */
    placeholders: jsonb('placeholders').$type<Record<string, string[]>>().notNull().default({}),
    /**
     * The values rules are compiled with on this target: its environment's defaults overlaid with
     * its own. Kept here (rewritten with either) so every reader of a target row has them.
     */
    resolvedPlaceholders: jsonb('resolved_placeholders').$type<Record<string, string[]>>().notNull().default({}),
    /** The version of the target's rule-shaping settings (placeholders, field mapping); each change adds a `settings_versions` row. */
    settingsVersion: integer('settings_version').notNull().default(1),
    /** When the last drift check of this target completed; null until one has. */
    driftCheckedAt: tstz('drift_checked_at'),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('targets_tenant_name').on(t.tenantId, t.name)],
);

/**
 * The history of rule-shaping settings (placeholder values, a target's field mapping): one row per
 * version of a target's or an environment's settings, who asked for it, and what became of it.
 * `proposed` versions wait on an approval (a target with live rules); `current` is in force;
 * `superseded` was; `rejected` never was.
 */
export const settingsVersions = pgTable(
  'settings_versions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    subject: text('subject', { enum: ['target', 'environment'] }).notNull(),
    /** The target's or the environment's name. */
    name: text('name').notNull(),
    version: integer('version').notNull(),
    placeholders: jsonb('placeholders').$type<Record<string, string[]>>().notNull(),
    /** Targets: the mapping settings (`mapping`, `field_map`) of this version; null for environments. */
    mapping: jsonb('mapping').$type<{ mapping?: string; field_map?: string }>(),
    status: text('status', { enum: ['proposed', 'current', 'superseded', 'rejected'] }).notNull(),
    /** The approval a proposed version waits on; null when applied at once. */
    approvalId: uuid('approval_id'),
    requestedBy: uuid('requested_by'),
    requestedByPrincipal: text('requested_by_principal'),
    createdAt: createdAt(),
    decidedAt: tstz('decided_at'),
  },
  (t) => [uniqueIndex('settings_versions_subject_version').on(t.tenantId, t.subject, t.name, t.version)],
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
