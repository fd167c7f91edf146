import { jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { tstz } from './columns';
import { tenants } from './tenants';
import { deployments } from './changes';

/** Rule health: each tenant's thresholds (domain/health/health-settings.ts holds the defaults). */

/** What a tenant changed of the health thresholds; a tenant without a row uses the defaults. */
export type HealthThresholds = {
  /** A field carried by at least this share of the logsource's recent events is `ok`. */
  field_share_ok: number;
  /** Below this share it is `failing`; in between, `degraded`. */
  field_share_failing: number;
  /** Hours that count as recent: the data-quality sample and the freshness limit. */
  freshness_hours: number;
  /** Error rate (failed runs / runs) at or above which detection is `degraded`. */
  error_rate_degraded: number;
  /** Error rate at or above which it is `failing`. */
  error_rate_failing: number;
};

export const healthSettings = pgTable('health_settings', {
  tenantId: text('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  thresholds: jsonb('thresholds').$type<HealthThresholds>().notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});

/**
 * The last grades of each live deployment's health figures, as the check after each detection run
 * left them: `rule.health_degraded` is sent when a grade gets worse than it was, not on every run.
 */
export const ruleHealthStates = pgTable('rule_health_states', {
  deploymentId: uuid('deployment_id')
    .primaryKey()
    .references(() => deployments.id, { onDelete: 'cascade' }),
  tenantId: text('tenant_id').notNull(),
  /** `ok`, `degraded` or `failing`; null until the figure could first be graded. */
  errorRate: text('error_rate', { enum: ['ok', 'degraded', 'failing'] }),
  dataQuality: text('data_quality', { enum: ['ok', 'degraded', 'failing'] }),
  /** The check (its activity execution) that last found a grade worse, and what it found: a retried attempt answers the same. */
  crossingKey: text('crossing_key'),
  crossing: jsonb('crossing').$type<Record<string, unknown>>(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});
