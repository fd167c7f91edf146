import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tstz } from './columns';
import { tenants } from './tenants';

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
