import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { targetDrift } from '../../db/schema';
import type { DriftRow } from './drift-check';

/** Open drift of a tenant, narrowed to a deployment, a rule or targets. */
export async function openDriftOf(
  db: Db,
  filter: { tenantId: string; deploymentIds?: readonly string[]; ruleId?: string; targetIds?: readonly string[] },
): Promise<DriftRow[]> {
  if (filter.targetIds && filter.targetIds.length === 0) return [];
  if (filter.deploymentIds && filter.deploymentIds.length === 0) return [];
  return db
    .select()
    .from(targetDrift)
    .where(
      and(
        eq(targetDrift.tenantId, filter.tenantId),
        isNull(targetDrift.resolvedAt),
        filter.deploymentIds ? inArray(targetDrift.deploymentId, [...filter.deploymentIds]) : undefined,
        filter.ruleId !== undefined ? eq(targetDrift.ruleId, filter.ruleId) : undefined,
        filter.targetIds ? inArray(targetDrift.targetId, [...filter.targetIds]) : undefined,
      ),
    )
    .orderBy(targetDrift.objectName, targetDrift.kind);
}
