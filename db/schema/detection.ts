import { bigint, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { ALERT_STATUSES, DISPOSITIONS } from '../../domain/statuses';
import { createdAt, tstz } from './columns';
import { deployments } from './changes';
import { tenants } from './tenants';

/** Scheduled detection: the alerts it raises and a record of every run. */

/** Alerts raised by scheduled detection; one per matched event per deployment, never twice. */
export const alerts = pgTable(
  'alerts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    deploymentId: uuid('deployment_id')
      .notNull()
      .references(() => deployments.id),
    ruleId: text('rule_id').notNull(),
    version: integer('version').notNull(),
    targetId: uuid('target_id').notNull(),
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull(),
    eventId: text('event_id').notNull(),
    eventTime: tstz('event_time').notNull(),
    event: jsonb('event').$type<Record<string, unknown>>().notNull(),
    /** `suppressed`: raised beyond the deployment's noise budget for its UTC day, counted but not worked. */
    status: text('status', { enum: ALERT_STATUSES }).notNull(),
    disposition: text('disposition', { enum: DISPOSITIONS }),
    assignee: text('assignee'),
    team: text('team'),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
    acknowledgedAt: tstz('acknowledged_at'),
    closedAt: tstz('closed_at'),
  },
  (t) => [
    uniqueIndex('alerts_deployment_event').on(t.deploymentId, t.eventSeq),
    index('alerts_tenant_created').on(t.tenantId, t.createdAt),
    index('alerts_tenant_rule').on(t.tenantId, t.ruleId),
    // The dashboard's first, partial day of alerts closed (the whole days are in alert_closed_rollup).
    index('alerts_tenant_closed').on(t.tenantId, t.closedAt),
  ],
);

/** Every scheduled detection run: what it scanned, matched, raised and suppressed, or why it failed. */
export const detectionRuns = pgTable(
  'detection_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id').notNull(),
    deploymentId: uuid('deployment_id')
      .notNull()
      .references(() => deployments.id),
    ruleId: text('rule_id').notNull(),
    startedAt: tstz('started_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    eventsScanned: bigint('events_scanned', { mode: 'number' }).notNull(),
    matches: integer('matches').notNull(),
    alertsRaised: integer('alerts_raised').notNull(),
    alertsSuppressed: integer('alerts_suppressed').notNull(),
    /** `alert`, or `shadow` while the deployment is demoted: matches counted, no alert raised. */
    mode: text('mode', { enum: ['alert', 'shadow'] })
      .notNull()
      .default('alert'),
    cursorFrom: bigint('cursor_from', { mode: 'number' }).notNull(),
    cursorTo: bigint('cursor_to', { mode: 'number' }).notNull(),
    error: text('error'),
    /**
     * The Temporal activity execution that made this run (workflow id, run id, activity id), and
     * what it returned: an attempt retried after this one committed returns the same outcome
     * instead of finding nothing new, so the run's noise-budget crossing is never lost.
     */
    activityKey: text('activity_key'),
    outcome: jsonb('outcome').$type<Record<string, unknown>>(),
  },
  (t) => [
    index('detection_runs_deployment').on(t.deploymentId, t.startedAt),
    index('detection_runs_tenant_rule').on(t.tenantId, t.ruleId, t.startedAt),
    // The ROI report's noise saved: every run of a tenant in a window, grouped by deployment. It
    // carries the volumes summed, so the read is an index-only scan, never visits of the runs' rows.
    // (The lifetime volume of a deployment is read from detection_run_totals.)
    index('detection_runs_tenant_started_volumes').on(t.tenantId, t.startedAt, t.deploymentId, t.mode, t.alertsRaised, t.alertsSuppressed, t.matches),
    uniqueIndex('detection_runs_activity_key').on(t.activityKey),
  ],
);

/**
 * Each deployment's detection runs summed over its whole life: what forecast accuracy and ROI read
 * instead of summing `detection_runs` per deployment on every request (a sum that grows with every
 * run). Kept by statement-level triggers on `detection_runs` in the same transaction as the runs
 * they count (migration 0024_detection_run_totals), so a figure read from it is exactly the raw
 * aggregate; never written by the application (docs/decisions/0093).
 */
export const detectionRunTotals = pgTable('detection_run_totals', {
  deploymentId: uuid('deployment_id')
    .primaryKey()
    .references(() => deployments.id, { onDelete: 'cascade' }),
  tenantId: text('tenant_id')
    .notNull()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  runs: integer('runs').notNull(),
  failedRuns: integer('failed_runs').notNull(),
  alertsRaised: bigint('alerts_raised', { mode: 'number' }).notNull(),
  alertsSuppressed: bigint('alerts_suppressed', { mode: 'number' }).notNull(),
  /** Matches of runs in `shadow` mode (demoted): the alerts it would have raised. */
  shadowMatches: bigint('shadow_matches', { mode: 'number' }).notNull(),
});
