import { and, eq, type SQL } from 'drizzle-orm';
import { deployments } from '../../db/schema';

/** The deployments of the same rule on the same target as `d` (`d` itself included). */
export function sameRuleOnTarget(d: { tenantId: string; ruleId: string; targetId: string }): SQL {
  return and(eq(deployments.tenantId, d.tenantId), eq(deployments.ruleId, d.ruleId), eq(deployments.targetId, d.targetId))!;
}
