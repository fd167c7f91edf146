import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { deployments, targets } from '../../db/schema';
import type { ImpactSummary } from './impact-summary';

/**
 * Each deployment of a change keeps what the change's impact summary projected for its target, so
 * forecast accuracy can compare every deployment with what detection then observed, whether or not
 * a reviewer saw the summary. Idempotent: a retried attempt writes the same projection again.
 */
export async function recordDeploymentProjections(db: Db, input: { tenantId: string; workflowId: string; impact: ImpactSummary }): Promise<void> {
  const names = input.impact.targets.map((t) => t.target);
  if (names.length === 0) return;
  const ids = new Map(
    (
      await db
        .select({ id: targets.id, name: targets.name })
        .from(targets)
        .where(and(eq(targets.tenantId, input.tenantId), inArray(targets.name, names)))
    ).map((t) => [t.name, t.id]),
  );
  for (const { diff: _diff, ...projection } of input.impact.targets) {
    const targetId = ids.get(projection.target);
    if (!targetId) continue; // deleted since: its deployment cannot go live either
    await db
      .update(deployments)
      .set({ projection: { ...projection, computed_at: input.impact.computed_at } })
      .where(and(eq(deployments.tenantId, input.tenantId), eq(deployments.workflowId, input.workflowId), eq(deployments.targetId, targetId)));
  }
}
