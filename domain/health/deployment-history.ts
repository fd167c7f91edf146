import { and, eq, isNotNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { deployments, ruleVersions, targets, type Demotion, type TargetCostModel } from '../../db/schema';
import type { DeploymentStatus } from '../statuses';
import type { Actor } from '../tenants/actor';
import { inActorEnvironments } from '../tenants/scope';

/**
 * The deployments of a tenant that ever went live on a target the actor may see, with their rule
 * version's tags and their target's cost model: what the ROI report reads the history of changes
 * from. A tenant has a deployment per version and target it ever deployed (thousands, not millions),
 * so they are read whole, by the `deployments_rule_target` index's tenant prefix.
 */
export type DeploymentSpan = {
  id: string;
  ruleId: string;
  version: number;
  status: DeploymentStatus;
  targetId: string;
  targetName: string;
  environment: string;
  costModel: TargetCostModel;
  activatedAt: Date;
  endedAt: Date | null;
  demotion: Demotion | null;
  tags: string[];
};

export async function deploymentHistory(db: Db, actor: Actor): Promise<DeploymentSpan[]> {
  const rows = await db
    .select({
      id: deployments.id,
      ruleId: deployments.ruleId,
      version: deployments.version,
      status: deployments.status,
      targetId: deployments.targetId,
      targetName: targets.name,
      environment: targets.environment,
      costModel: targets.costModel,
      activatedAt: deployments.activatedAt,
      endedAt: deployments.endedAt,
      demotion: deployments.demotion,
      tags: ruleVersions.tags,
    })
    .from(deployments)
    .innerJoin(targets, and(eq(targets.id, deployments.targetId), eq(targets.tenantId, deployments.tenantId)))
    .innerJoin(ruleVersions, and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)))
    .where(and(eq(deployments.tenantId, actor.tenantId), isNotNull(deployments.activatedAt), inActorEnvironments(actor, targets.environment)));
  return rows.map((r) => ({ ...r, activatedAt: r.activatedAt!, demotion: r.demotion ?? null }));
}

/**
 * One change of what runs for a rule on a target: a new version that superseded the live one, a
 * rollback that restored an earlier version in place of the live one, or a rollback that took the
 * rule off its target (`removal`, no replacement). The change is in effect from `from` until
 * `until` (null: still in effect): the replacement's live span, or for a removal until the rule
 * next went live on that target.
 */
export type Replacement = {
  kind: 'new_version' | 'rollback' | 'removal';
  replaced: DeploymentSpan;
  replacement: DeploymentSpan | null;
  from: Date;
  until: Date | null;
};

/**
 * Pairs each ended deployment with the one that replaced it. Activation ends the previous live
 * deployment of the rule on the target in the same transaction, with the same `now()`
 * (domain/changes/deployment-records.ts): the replacement is the deployment of the same rule and
 * target activated at the very instant the replaced one ended. A deployment rolled back with none
 * activated then was taken off its target.
 */
export function replacementsOf(history: readonly DeploymentSpan[]): Replacement[] {
  const groups = new Map<string, DeploymentSpan[]>();
  for (const d of history) {
    const key = `${d.ruleId}\u0000${d.targetId}`;
    const group = groups.get(key);
    if (group) group.push(d);
    else groups.set(key, [d]);
  }
  const found: Replacement[] = [];
  for (const group of groups.values()) {
    group.sort((a, b) => a.activatedAt.getTime() - b.activatedAt.getTime());
    for (const d of group) {
      if (d.endedAt === null || (d.status !== 'superseded' && d.status !== 'rolled_back')) continue;
      const end = d.endedAt.getTime();
      const successor = group.find((s) => s.id !== d.id && s.activatedAt.getTime() === end);
      if (successor) {
        found.push({
          kind: d.status === 'rolled_back' ? 'rollback' : 'new_version',
          replaced: d,
          replacement: successor,
          from: successor.activatedAt,
          until: successor.endedAt,
        });
      } else if (d.status === 'rolled_back') {
        const next = group.find((s) => s.activatedAt.getTime() > end);
        found.push({ kind: 'removal', replaced: d, replacement: null, from: d.endedAt, until: next?.activatedAt ?? null });
      }
    }
  }
  return found;
}
