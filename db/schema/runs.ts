import { index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { RUN_STATUSES, type NoiseBudgetPolicy } from '../../domain/statuses';
import { createdAt, tstz } from './columns';
import { tenants } from './tenants';

/** Replays and shadow evaluations. */

/**
 * Replays (POST /rules/replay): a rule over a past window of a target's data. The rule text is kept
 * as it was replayed, so an inline rule and a stored version read back the same way. `result` is
 * written once, when the run ends (completed, or cancelled with the figures of what was processed).
 */
export const replays = pgTable(
  'replays',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    /** null for an inline rule (sent in the request, not stored). */
    version: integer('version'),
    ruleContent: text('rule_content').notNull(),
    targetId: uuid('target_id').notNull(),
    windowFrom: tstz('window_from').notNull(),
    windowTo: tstz('window_to').notNull(),
    noiseBudget: jsonb('noise_budget').$type<NoiseBudgetPolicy>(),
    chunkEvents: integer('chunk_events').notNull(),
    status: text('status', { enum: RUN_STATUSES }).notNull(),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: text('error'),
    workflowId: text('workflow_id').notNull(),
    runId: text('run_id'),
    requestedBy: uuid('requested_by'),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
    endedAt: tstz('ended_at'),
  },
  (t) => [index('replays_tenant_status').on(t.tenantId, t.status)],
);

/** Shadow evaluations (POST /rules/shadow): a rule over live data for a while; never raises an alert. */
export const shadowRuns = pgTable(
  'shadow_runs',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    version: integer('version'),
    ruleContent: text('rule_content').notNull(),
    targetId: uuid('target_id').notNull(),
    duration: text('duration').notNull(),
    interval: text('interval').notNull(),
    status: text('status', { enum: RUN_STATUSES }).notNull(),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: text('error'),
    workflowId: text('workflow_id').notNull(),
    runId: text('run_id'),
    requestedBy: uuid('requested_by'),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
    endedAt: tstz('ended_at'),
  },
  (t) => [index('shadow_runs_tenant_status').on(t.tenantId, t.status)],
);
