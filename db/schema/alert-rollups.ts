import { bigint, date, index, integer, pgTable, smallint, text, unique, uuid } from 'drizzle-orm/pg-core';
import { tenants } from './tenants';

/**
 * Rollups of `alerts` for the health dashboard: much smaller than the alerts they count, kept by
 * statement-level triggers on `alerts` in the same transaction as the change (migration
 * 0015_alert_rollup_triggers), so a figure read from them is exactly the raw aggregate.
 *
 * Time is in spans of UTC days aligned on the epoch: every alert counts in its day (`span_days`
 * 1), its 8-day block and its 64-day block, each row keyed by the span's first day. A window
 * [from, now] reads its first, partial day from `alerts`, then the single days up to the next
 * 8-day boundary, the 8-day blocks up to the next 64-day boundary, and 64-day blocks on: at most
 * 7 + 7 + a few rows per group whatever the window's length (docs/decisions/0060).
 * Counts of a group may fall to 0 and the row stay; readers skip empty groups. Never written by
 * the application.
 */

const tenantId = () =>
  text('tenant_id')
    .notNull()
    .references(() => tenants.id, { onDelete: 'cascade' });

/** Alerts raised per (span of UTC days of created_at, target, rule): all, not suppressed, and per disposition. */
export const alertRaisedRollup = pgTable(
  'alert_raised_rollup',
  {
    tenantId: tenantId(),
    spanDays: smallint('span_days').notNull(),
    /** The first UTC day of the span. */
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
    unique('alert_raised_rollup_key').on(t.tenantId, t.spanDays, t.day, t.targetId, t.ruleId),
    // The window's spans in index-only scans.
    index('alert_raised_rollup_figures').on(t.tenantId, t.spanDays, t.day, t.targetId, t.ruleId, t.alerts, t.triaged, t.truePositive, t.falsePositive, t.benign, t.duplicate),
  ],
);

/**
 * Alerts closed (status `closed`) per (span of UTC days of closed_at, target, team, assignee, level
 * of the rule version that raised them), with the sum of their resolution times in milliseconds.
 */
export const alertClosedRollup = pgTable(
  'alert_closed_rollup',
  {
    tenantId: tenantId(),
    spanDays: smallint('span_days').notNull(),
    /** The first UTC day of the span. */
    day: date('day', { mode: 'string' }).notNull(),
    targetId: uuid('target_id').notNull(),
    team: text('team'),
    assignee: text('assignee'),
    level: text('level'),
    alerts: integer('alerts').notNull(),
    resolutionMs: bigint('resolution_ms', { mode: 'number' }).notNull(),
  },
  (t) => [
    unique('alert_closed_rollup_key').on(t.tenantId, t.spanDays, t.day, t.targetId, t.team, t.assignee, t.level).nullsNotDistinct(),
    index('alert_closed_rollup_figures').on(t.tenantId, t.spanDays, t.day, t.targetId, t.team, t.assignee, t.level, t.alerts, t.resolutionMs),
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
