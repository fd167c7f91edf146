import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { APPROVAL_STATUSES, DEPLOYMENT_STATUSES, type NoiseBudgetPolicy } from '../../domain/statuses';
import { createdAt, tstz } from './columns';
import { tenants, targets } from './tenants';

/** Changes: deployments of rule versions to targets, and the approvals they wait on. */

/** The last demotion of a deployment and, once a person promoted it back, who did and when. */
export type Demotion = {
  demoted_at: string;
  reason: string;
  alerts: number;
  budget: number;
  promoted_at?: string;
  promoted_by?: string;
  comment?: string | null;
};

export const deployments = pgTable(
  'deployments',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    version: integer('version').notNull(),
    targetId: uuid('target_id')
      .notNull()
      .references(() => targets.id),
    status: text('status', { enum: DEPLOYMENT_STATUSES }).notNull(),
    approvalRequired: boolean('approval_required').notNull(),
    noiseBudget: jsonb('noise_budget').$type<NoiseBudgetPolicy | null>(),
    workflowId: text('workflow_id').notNull(),
    runId: text('run_id'),
    demotion: jsonb('demotion').$type<Demotion>(),
    requestedBy: uuid('requested_by'),
    /** The principal of the requesting token; null when the service itself requested it (a budget rollback). */
    requestedByPrincipal: text('requested_by_principal'),
    error: text('error'),
    /**
     * What the change's impact summary projected for this deployment's target (its entry without the
     * diff), recorded when the impact was computed, approval or not: forecast accuracy compares it
     * with what detection then observed. Null for a restore by rollback, which computes no impact.
     */
    projection: jsonb('projection').$type<Record<string, unknown>>(),
    /**
     * Remote targets: the field mapping the rule was compiled with when it was put on the target
     * (built-in data model and overrides, and their version); null for local targets.
     */
    mapping: jsonb('mapping').$type<{ name: string; version: string }>(),
    /** The version of the target's settings (placeholder values, mapping) the rule was put on the target with; null before settings were versioned. */
    settingsVersion: integer('settings_version'),
    /** Local targets: the event-store cursor up to which scheduled detection has evaluated. */
    detectionCursor: bigint('detection_cursor', { mode: 'number' }),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
    activatedAt: tstz('activated_at'),
    endedAt: tstz('ended_at'),
  },
  // One change deploys to each of its targets once: an approval's run carries one deployment per target.
  (t) => [uniqueIndex('deployments_workflow_target').on(t.workflowId, t.targetId), index('deployments_rule_target').on(t.tenantId, t.ruleId, t.targetId)],
);

export type Deployment = typeof deployments.$inferSelect;

export const approvals = pgTable(
  'approvals',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    version: integer('version').notNull(),
    targets: jsonb('targets').$type<string[]>().notNull(),
    /** One deployment per target, all decided by this approval. */
    deploymentIds: jsonb('deployment_ids').$type<string[]>().notNull(),
    noiseBudget: jsonb('noise_budget').$type<NoiseBudgetPolicy | null>(),
    status: text('status', { enum: APPROVAL_STATUSES }).notNull(),
    description: text('description'),
    link: text('link'),
    impact: jsonb('impact').$type<Record<string, unknown>>(),
    requestedBy: uuid('requested_by'),
    requestedByPrincipal: text('requested_by_principal'),
    decidedBy: uuid('decided_by'),
    /** The principal of the deciding token: never the requester's (four-eyes by person). */
    decidedByPrincipal: text('decided_by_principal'),
    decision: text('decision'),
    comment: text('comment'),
    workflowId: text('workflow_id').notNull(),
    /**
     * What makes two changes equal (domain/changes/change-key.ts): rule, version, targets and noise
     * budget. Null for approvals recorded before changes were compared.
     */
    changeKey: text('change_key'),
    createdAt: createdAt(),
    decidedAt: tstz('decided_at'),
    expiresAt: tstz('expires_at'),
  },
  (t) => [
    index('approvals_tenant_status').on(t.tenantId, t.status),
    // At most one pending approval per equal change: two identical submissions at once still make one.
    uniqueIndex('approvals_pending_change')
      .on(t.tenantId, t.changeKey)
      .where(sql`${t.status} = 'pending'`),
  ],
);
