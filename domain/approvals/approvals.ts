import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { approvals, targets } from '../../db/schema';
import type { DomainDeps } from '../deps';
import type { ApprovalStatus } from '../statuses';
import { notFound } from '../errors';
import { settleAbandonedChange } from '../changes/abandoned-change';
import { newestFirstAfter, type NewestFirstKey } from '../paging';
import { inActorEnvironments } from '../tenants/scope';
import type { Actor } from '../tenants/actor';

/** Approvals: a change waits for a reviewer's decision, which reaches its workflow as an update (see decide.ts). */

export type ApprovalRecord = typeof approvals.$inferSelect;

export type ApprovalFilter = { status?: ApprovalStatus | undefined; ruleId?: string | undefined; target?: string | undefined };

export async function findApproval(db: Db, tenantId: string, id: string): Promise<ApprovalRecord> {
  const [row] = await db
    .select()
    .from(approvals)
    .where(and(eq(approvals.id, id), eq(approvals.tenantId, tenantId)));
  if (!row) throw notFound(`No approval ${id} in this tenant`);
  return row;
}

/**
 * Settles a pending approval whose change's run ended without settling it (see abandoned-change.ts).
 * A change whose run ended without settling it would otherwise wait for a decision for ever.
 */
export async function settleIfAbandoned(deps: DomainDeps, tenantId: string, id: string): Promise<void> {
  const current = await findApproval(deps.database.db, tenantId, id);
  if (current.status === 'pending') await settleAbandonedChange(deps.database.db, deps.temporal.client, current);
}

/** Approvals newest first (see domain/paging.ts). */
export async function listApprovals(
  db: Db,
  actor: Actor,
  filter: ApprovalFilter,
  page: { limit: number; after: NewestFirstKey | undefined },
): Promise<{ items: ApprovalRecord[]; next: NewestFirstKey | undefined }> {
  const { after, limit } = page;
  const tenantId = actor.tenantId;
  const rows = await db
    .select()
    .from(approvals)
    .where(
      and(
        eq(approvals.tenantId, tenantId),
        // Only approvals all of whose targets lie in the actor's environments.
        actor.environments === null
          ? undefined
          : sql`not exists (select 1 from ${targets} where ${targets.tenantId} = ${approvals.tenantId} and ${approvals.targets} ? ${targets.name} and not (${inActorEnvironments(actor, targets.environment)}))`,
        newestFirstAfter(after, approvals.createdAt, approvals.id),
        filter.status ? eq(approvals.status, filter.status) : undefined,
        filter.ruleId ? eq(approvals.ruleId, filter.ruleId.toLowerCase()) : undefined,
        filter.target ? sql`${approvals.targets} @> ${JSON.stringify([filter.target])}::jsonb` : undefined,
      ),
    )
    .orderBy(desc(approvals.createdAt), desc(approvals.id))
    .limit(limit + 1);
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : undefined };
}
