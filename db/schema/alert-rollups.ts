import { bigint, date, index, integer, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { tenants } from './tenants';

/**
 * Rollups of `alerts` for the health dashboard: much smaller than the alerts they count, kept by
 * statement-level triggers on `alerts` in the same transaction as the change (migration
 * 0015_alert_rollup_triggers), so a figure read from them is exactly the raw aggregate. A window
 * reads its whole UTC days here and its first, partial day from `alerts` (docs/decisions/0055f).
 * Counts of a group may fall to 0 and the row stay; readers skip empty groups. Never written by
 * the application.
 */

const tenantId = () =>
  text('tenant_id')
    .notNull()
    .references(() => tenants.id, { onDelete: 'cascade' });

/** Alerts raised per (target, rule, UTC day of created_at): all, not suppressed, and per disposition. */
export const alertRaisedDaily = pgTable(
  'alert_raised_daily',
  {
    tenantId: tenantId(),
    day: date('day', { mode: 'string' }).notNull(),
    targetId: uuid('target_id').notNull(),
    ruleId: text('rule_id').notNull(),
    alerts: integer('alerts').notNull(),
    triaged: integer('triaged').notNull(),
    truePositive: integer('true_positive').notNull(),
    falsePositive: integer('false_positive').notNull(),
    benign: integer('benign').notNull(),
    duplicate: integer('duplicate').notNull(),
  },
  (t) => [
    unique('alert_raised_daily_key').on(t.tenantId, t.day, t.targetId, t.ruleId),
    // The window's days in an index-only scan: the dashboard reads a third of the rows at P30D.
    index('alert_raised_daily_figures').on(t.tenantId, t.day, t.targetId, t.ruleId, t.alerts, t.triaged, t.truePositive, t.falsePositive, t.benign, t.duplicate),
  ],
);

/**
 * Alerts closed (status `closed`) per (target, team, assignee, level of the rule version that
 * raised them, UTC day of closed_at), with the sum of their resolution times in milliseconds.
 */
export const alertClosedDaily = pgTable(
  'alert_closed_daily',
  {
    tenantId: tenantId(),
    day: date('day', { mode: 'string' }).notNull(),
    targetId: uuid('target_id').notNull(),
    team: text('team'),
    assignee: text('assignee'),
    level: text('level'),
    alerts: integer('alerts').notNull(),
    resolutionMs: bigint('resolution_ms', { mode: 'number' }).notNull(),
  },
  (t) => [
    unique('alert_closed_daily_key').on(t.tenantId, t.day, t.targetId, t.team, t.assignee, t.level).nullsNotDistinct(),
    index('alert_closed_daily_figures').on(t.tenantId, t.day, t.targetId, t.team, t.assignee, t.level, t.alerts, t.resolutionMs),
  ],
);

/** The backlog per (target, team, assignee): alerts open or acknowledged, and of them acknowledged. */
export const alertBacklog = pgTable(
  'alert_backlog',
  {
    tenantId: tenantId(),
    targetId: uuid('target_id').notNull(),
    team: text('team'),
    assignee: text('assignee'),
    open: integer('open').notNull(),
    acknowledged: integer('acknowledged').notNull(),
  },
  (t) => [unique('alert_backlog_key').on(t.tenantId, t.targetId, t.team, t.assignee).nullsNotDistinct()],
);
