import { and, eq, gte, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { alerts, deployments, ruleVersions, targets, type TargetCostModel } from '../../db/schema';
import type { Actor } from '../tenants/actor';
import { inActorEnvironments } from '../tenants/scope';
import type { DispositionCounts } from './noise-ratio';
import type { WorkloadRow } from './team-workload';
import type { ResolutionRow } from './mttr';

/**
 * What the dashboard reads, each a single grouped query of the actor's tenant limited to the targets
 * of its environments: the store counts, the pure modules beside this one compute.
 */

/** A deployment that is on its target (active or demoted), with the rule version it runs. */
export type LiveDeployment = {
  ruleId: string;
  version: number;
  status: 'active' | 'demoted';
  targetId: string;
  title: string;
  level: string | null;
  tags: string[];
};

export async function liveDeployments(db: Db, actor: Actor): Promise<LiveDeployment[]> {
  const rows = await db
    .select({
      ruleId: deployments.ruleId,
      version: deployments.version,
      status: deployments.status,
      targetId: deployments.targetId,
      title: ruleVersions.title,
      level: ruleVersions.level,
      tags: ruleVersions.tags,
    })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .innerJoin(ruleVersions, and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)))
    .where(and(eq(deployments.tenantId, actor.tenantId), inArray(deployments.status, ['active', 'demoted']), inActorEnvironments(actor, targets.environment)));
  return rows.map((r) => ({ ...r, status: r.status as 'active' | 'demoted' }));
}

export type ScopedTarget = { id: string; name: string; costModel: TargetCostModel };

/** The tenant's targets in the actor's environments, with their cost models. */
export async function targetsInScope(db: Db, actor: Actor): Promise<ScopedTarget[]> {
  return db
    .select({ id: targets.id, name: targets.name, costModel: targets.costModel })
    .from(targets)
    .where(and(eq(targets.tenantId, actor.tenantId), inActorEnvironments(actor, targets.environment)));
}

/** Alerts raised since `from`, per rule, target and disposition: all of them, and those not suppressed. */
export type RaisedRow = { ruleId: string; targetId: string; disposition: keyof typeof DISPOSITION_KEY | null; alerts: number; triaged: number };

export const DISPOSITION_KEY = { true_positive: 'truePositive', false_positive: 'falsePositive', benign: 'benign', duplicate: 'duplicate' } as const satisfies Record<
  string,
  keyof DispositionCounts
>;

export async function alertsRaisedSince(db: Db, actor: Actor, from: Date): Promise<RaisedRow[]> {
  return db
    .select({
      ruleId: alerts.ruleId,
      targetId: alerts.targetId,
      disposition: alerts.disposition,
      alerts: sql<number>`count(*)::int`,
      triaged: sql<number>`(count(*) filter (where ${alerts.status} <> 'suppressed'))::int`,
    })
    .from(alerts)
    .innerJoin(targets, eq(targets.id, alerts.targetId))
    .where(and(eq(alerts.tenantId, actor.tenantId), gte(alerts.createdAt, from), inActorEnvironments(actor, targets.environment)))
    .groupBy(alerts.ruleId, alerts.targetId, alerts.disposition);
}

/** Per (team, assignee): alerts waiting (open or acknowledged, whenever raised) and alerts closed since `from`. */
export async function workloadSince(db: Db, actor: Actor, from: Date): Promise<WorkloadRow[]> {
  return db
    .select({
      team: alerts.team,
      assignee: alerts.assignee,
      open: sql<number>`(count(*) filter (where ${alerts.status} in ('open', 'acknowledged')))::int`,
      acknowledged: sql<number>`(count(*) filter (where ${alerts.status} = 'acknowledged'))::int`,
      handled: sql<number>`(count(*) filter (where ${alerts.status} = 'closed' and ${alerts.closedAt} >= ${from.toISOString()}::timestamptz))::int`,
    })
    .from(alerts)
    .innerJoin(targets, eq(targets.id, alerts.targetId))
    .where(
      and(
        eq(alerts.tenantId, actor.tenantId),
        sql`(${alerts.status} in ('open', 'acknowledged') or (${alerts.status} = 'closed' and ${alerts.closedAt} >= ${from.toISOString()}::timestamptz))`,
        inActorEnvironments(actor, targets.environment),
      ),
    )
    .groupBy(alerts.team, alerts.assignee);
}

/**
 * Per (team, level of the rule version that raised it): alerts closed since `from` and the sum of
 * their resolution times in seconds, each time taken at the millisecond (as the API shows them).
 */
export async function resolutionsSince(db: Db, actor: Actor, from: Date): Promise<ResolutionRow[]> {
  const seconds = sql<number>`coalesce(sum(extract(epoch from (date_trunc('milliseconds', ${alerts.closedAt}) - date_trunc('milliseconds', ${alerts.createdAt})))), 0)::float8`;
  return db
    .select({ team: alerts.team, level: ruleVersions.level, alerts: sql<number>`count(*)::int`, seconds })
    .from(alerts)
    .innerJoin(targets, eq(targets.id, alerts.targetId))
    .leftJoin(ruleVersions, and(eq(ruleVersions.tenantId, alerts.tenantId), eq(ruleVersions.ruleId, alerts.ruleId), eq(ruleVersions.version, alerts.version)))
    .where(and(eq(alerts.tenantId, actor.tenantId), eq(alerts.status, 'closed'), gte(alerts.closedAt, from), inActorEnvironments(actor, targets.environment)))
    .groupBy(alerts.team, ruleVersions.level);
}
