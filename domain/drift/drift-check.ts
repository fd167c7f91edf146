import { and, eq, inArray, isNotNull, isNull, notInArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { deployments, targetDrift, targets } from '../../db/schema';
import type { SiemAdapters } from '../../siem/adapters';
import { objectName } from '../../siem/remote/deployed-marker';
import { targetAdapter } from '../rules/rule-compilation';
import { LIVE_DEPLOYMENT_STATUSES } from '../statuses';
import { compareInventory } from './compare-inventory';

export type DriftRow = typeof targetDrift.$inferSelect;

export type DriftCheckResult = {
  tenantId: string;
  targetId: string;
  target: string;
  checkedAt: string;
  /** Every departure open after this check. */
  open: DriftRow[];
  /** The departures this check found first: the ones to notify. */
  found: DriftRow[];
};

/** The name a rule's object has on a target of this kind. */
export function objectNameOn(kind: string, ruleId: string): string {
  return kind === 'local' ? ruleId : objectName(ruleId);
}

/**
 * Compares what the target holds with the deployments detflow recorded as live there, and keeps
 * the open departures up to date: new ones are recorded as found by this check (`key`), ones seen
 * again are refreshed, ones gone are resolved. Run again with the same key (a retried activity),
 * it answers the same `found`.
 */
export async function checkTargetDrift(deps: { db: Db; siem: SiemAdapters; now: () => Date }, input: { targetId: string; key: string }): Promise<DriftCheckResult> {
  const { db, siem } = deps;
  const [target] = await db.select().from(targets).where(eq(targets.id, input.targetId));
  if (!target) throw new Error(`No target ${input.targetId}`);
  const onTarget = and(eq(deployments.tenantId, target.tenantId), eq(deployments.targetId, target.id));
  const live = await db
    .select({ deploymentId: deployments.id, ruleId: deployments.ruleId, version: deployments.version })
    .from(deployments)
    .where(and(onTarget, inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES)));
  const inFlight = await db
    .select({ ruleId: deployments.ruleId })
    .from(deployments)
    .where(and(onTarget, eq(deployments.status, 'deploying')));
  const inventory = await targetAdapter(siem, target).inventory(target.tenantId, target.id);
  const findings = compareInventory({
    live,
    inventory,
    objectNameOf: (ruleId) => objectNameOn(target.kind, ruleId),
    settling: new Set(inFlight.map((d) => d.ruleId)),
  });
  const now = deps.now();
  return db.transaction(async (tx) => {
    const seen: string[] = [];
    for (const f of findings) {
      const [row] = await tx
        .insert(targetDrift)
        .values({
          tenantId: target.tenantId,
          targetId: target.id,
          objectName: f.objectName,
          ruleId: f.ruleId,
          deploymentId: f.deploymentId,
          kind: f.kind,
          detail: f.detail,
          firstSeenAt: now,
          lastSeenAt: now,
          foundBy: input.key,
        })
        .onConflictDoUpdate({
          target: [targetDrift.targetId, targetDrift.objectName, targetDrift.kind],
          targetWhere: sql`${targetDrift.resolvedAt} is null`,
          set: { lastSeenAt: now, detail: f.detail, deploymentId: f.deploymentId, ruleId: f.ruleId },
        })
        .returning({ id: targetDrift.id });
      seen.push(row!.id);
    }
    const stillOpen = and(eq(targetDrift.targetId, target.id), isNull(targetDrift.resolvedAt));
    await tx
      .update(targetDrift)
      .set({ resolvedAt: now })
      .where(seen.length ? and(stillOpen, notInArray(targetDrift.id, seen)) : stillOpen);
    await tx.update(targets).set({ driftCheckedAt: now }).where(eq(targets.id, target.id));
    const open = await tx.select().from(targetDrift).where(stillOpen).orderBy(targetDrift.objectName, targetDrift.kind);
    return {
      tenantId: target.tenantId,
      targetId: target.id,
      target: target.name,
      checkedAt: now.toISOString(),
      open,
      found: open.filter((r) => r.foundBy === input.key),
    };
  });
}

/** The targets a scheduled check visits: those with a live deployment or open drift. */
export async function targetsToCheck(db: Db): Promise<Array<{ tenantId: string; targetId: string }>> {
  const withLive = await db
    .selectDistinct({ tenantId: deployments.tenantId, targetId: deployments.targetId })
    .from(deployments)
    .where(and(inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES), isNotNull(deployments.targetId)));
  const withDrift = await db.selectDistinct({ tenantId: targetDrift.tenantId, targetId: targetDrift.targetId }).from(targetDrift).where(isNull(targetDrift.resolvedAt));
  const byId = new Map<string, { tenantId: string; targetId: string }>();
  for (const t of [...withLive, ...withDrift]) if (t.targetId) byId.set(t.targetId, { tenantId: t.tenantId, targetId: t.targetId });
  return [...byId.values()].sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.targetId.localeCompare(b.targetId));
}
