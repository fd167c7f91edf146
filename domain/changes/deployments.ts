import { and, desc, eq, gte, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { approvals, deployments, detectionRuns, targets, type Demotion, type Deployment } from '../../db/schema';
import type { DeploymentStatus } from '../statuses';
import type { DomainDeps } from '../deps';
import { newestFirstAfter, type NewestFirstKey } from '../paging';
import { IN_PROGRESS, settleAbandonedChange } from './abandoned-change';
import { inActorEnvironments } from '../tenants/scope';
import { openDriftOf } from '../drift/drift-queries';
import { driftView, type DriftView } from '../drift/drift-view';
import type { Actor } from '../tenants/actor';

/** A deployment as people read it: the record, its target, its approval and its last demotion. */
export type DeploymentRecord = {
  deployment: Deployment;
  targetName: string;
  environment: string;
  approvalId: string | null;
  /** The demotion with what the rule matched in shadow since: what it would have raised. */
  demotion: (Demotion & { shadow_runs: number; shadow_matches: number }) | null;
  /** Open drift of the target from this deployment. */
  drift: DriftView[];
};

export async function readDeployment(db: Db, tenantId: string, id: string): Promise<DeploymentRecord | undefined> {
  return (await readDeployments(db, tenantId, [id]))[0];
}

/**
 * The tenant's deployments of `ids` (in that order; unknown ids left out) in three queries however
 * many there are, plus one per demoted deployment. A page of the deployment list read each one
 * alone, two or three queries a deployment; with pages of 20 that became most of the service's
 * work in the soak once deployments had piled up.
 */
export async function readDeployments(db: Db, tenantId: string, ids: readonly string[]): Promise<DeploymentRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ d: deployments, targetName: targets.name, environment: targets.environment, approvalId: approvals.id })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .leftJoin(approvals, eq(approvals.workflowId, deployments.workflowId))
    .where(and(inArray(deployments.id, [...ids]), eq(deployments.tenantId, tenantId)));
  const drift = await openDriftOf(db, { tenantId, deploymentIds: rows.map((r) => r.d.id) });
  const byId = new Map(rows.map((r) => [r.d.id, r]));
  const records: DeploymentRecord[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (!row) continue;
    records.push({
      deployment: row.d,
      targetName: row.targetName,
      environment: row.environment,
      approvalId: row.approvalId,
      demotion: await demotionWithShadowFigures(db, row.d.id, row.d.demotion),
      drift: drift.filter((x) => x.deploymentId === id).map(driftView),
    });
  }
  return records;
}

async function demotionWithShadowFigures(db: Db, deploymentId: string, demotion: Demotion | null): Promise<DeploymentRecord['demotion']> {
  if (!demotion) return null;
  const [shadow] = await db
    .select({ runs: sql<number>`count(*)::int`, matches: sql<number>`coalesce(sum(${detectionRuns.matches}), 0)::int` })
    .from(detectionRuns)
    .where(and(eq(detectionRuns.deploymentId, deploymentId), eq(detectionRuns.mode, 'shadow'), gte(detectionRuns.startedAt, new Date(demotion.demoted_at))));
  return { ...demotion, shadow_runs: shadow?.runs ?? 0, shadow_matches: shadow?.matches ?? 0 };
}

/** A change whose run ended without settling its deployment would otherwise read in progress for ever. */
export async function settleIfAbandoned(deps: Pick<DomainDeps, 'database' | 'temporal'>, record: DeploymentRecord | undefined): Promise<void> {
  if (record && IN_PROGRESS.has(record.deployment.status)) {
    await settleAbandonedChange(deps.database.db, deps.temporal.client, { workflowId: record.deployment.workflowId, createdAt: record.deployment.createdAt });
  }
}

export type DeploymentFilter = { ruleId?: string | undefined; target?: string | undefined; status?: DeploymentStatus | undefined };

/** A page of the deployments the actor may see (its tenant's, in its environments), newest first; `more` when another page follows. */
export async function listDeployments(db: Db, actor: Actor, filter: DeploymentFilter, page: { after: NewestFirstKey | undefined; limit: number }) {
  const tenantId = actor.tenantId;
  const rows = await db
    .select({ id: deployments.id, createdAt: deployments.createdAt })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .where(
      and(
        eq(deployments.tenantId, tenantId),
        inActorEnvironments(actor, targets.environment),
        newestFirstAfter(page.after, deployments.createdAt, deployments.id),
        filter.ruleId ? eq(deployments.ruleId, filter.ruleId.toLowerCase()) : undefined,
        filter.target ? eq(targets.name, filter.target) : undefined,
        filter.status ? eq(deployments.status, filter.status) : undefined,
      ),
    )
    .orderBy(desc(deployments.createdAt), desc(deployments.id))
    .limit(page.limit + 1);
  const keys = rows.slice(0, page.limit);
  const records = await readDeployments(
    db,
    tenantId,
    keys.map((r) => r.id),
  );
  return { records, last: keys.at(-1), more: rows.length > page.limit };
}
