import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { tstz } from './columns';
import { targets, tenants } from './tenants';
import { deployments } from './changes';

/**
 * How what is on a target departs from what detflow deployed there:
 * - `missing`: a live deployment's object is gone from the target (deleted in the SIEM);
 * - `edited`: its query is not the one detflow wrote;
 * - `disabled`: it is switched off in the SIEM;
 * - `other_version`: the object is another deployment than the live one (an older version put back by hand);
 * - `unmanaged`: an object under detflow's naming scheme that no live deployment accounts for.
 */
export const DRIFT_KINDS = ['missing', 'edited', 'disabled', 'other_version', 'unmanaged'] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

/**
 * Drift found by the checks: a row per departure, open until a check finds it gone. The first
 * check that finds it is the one that notifies (`deployment.drifted`).
 */
export const targetDrift = pgTable(
  'target_drift',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    targetId: uuid('target_id')
      .notNull()
      .references(() => targets.id, { onDelete: 'cascade' }),
    /** The object's name on the target. */
    objectName: text('object_name').notNull(),
    ruleId: text('rule_id'),
    /** The live deployment the target departs from; null for `unmanaged` objects. */
    deploymentId: uuid('deployment_id').references(() => deployments.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: DRIFT_KINDS }).notNull(),
    detail: text('detail').notNull(),
    firstSeenAt: tstz('first_seen_at').notNull().defaultNow(),
    lastSeenAt: tstz('last_seen_at').notNull().defaultNow(),
    resolvedAt: tstz('resolved_at'),
    /** The check (its activity execution or request) that found it first. */
    foundBy: text('found_by').notNull(),
  },
  (t) => [
    // One open row per departure: a check that finds it again refreshes it.
    uniqueIndex('target_drift_open')
      .on(t.targetId, t.objectName, t.kind)
      .where(sql`${t.resolvedAt} is null`),
    index('target_drift_rule').on(t.tenantId, t.ruleId),
    index('target_drift_deployment').on(t.deploymentId),
  ],
);
