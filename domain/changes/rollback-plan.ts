import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { and, desc, eq, inArray, ne } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { deployments, targets, type Deployment } from '../../db/schema';
import type { RollbackInput } from '../../workflows/rollback';
import { sameRuleOnTarget } from './deployment-scope';
import { FailureType, workflowIds } from '../../workflows/contracts';
import { LIVE_DEPLOYMENT_STATUSES } from '../statuses';

/**
 * What a Rollback run is given, decided the same way whether a person asked for it (the API) or a
 * noise budget did (scheduled detection under `on_exceed: rollback`).
 */

/** The version live before `live` on its target (the last one it replaced), or null when there is none. */
export async function versionBefore(db: Db, live: Deployment): Promise<number | null> {
  const [before] = await db
    .select({ version: deployments.version })
    .from(deployments)
    .where(and(sameRuleOnTarget(live), ne(deployments.id, live.id), ne(deployments.version, live.version), inArray(deployments.status, ['superseded', 'rolled_back'])))
    .orderBy(desc(deployments.activatedAt))
    .limit(1);
  return before?.version ?? null;
}

/**
 * Records the deployment that restores `toVersion` (none when the rule is to come off the target)
 * and returns the Rollback run's input. The restoring deployment is keyed by the run's workflow id,
 * so preparing the same rollback again records nothing new and returns the same input.
 */
export async function prepareRollback(
  db: Db,
  input: {
    live: Deployment;
    targetName: string;
    toVersion: number | null;
    restoreId: string;
    workflowId: string;
    requestedBy: string | null;
    /** The requesting token's principal; absent when the service itself rolls back. */
    requestedByPrincipal?: string;
    reason: string;
    /** The restored deployment's budget: the live one's unless given. */
    noiseBudget?: Deployment['noiseBudget'];
  },
): Promise<RollbackInput> {
  const { live } = input;
  let to: RollbackInput['to'] = null;
  if (input.toVersion !== null) {
    await db
      .insert(deployments)
      .values({
        id: input.restoreId,
        tenantId: live.tenantId,
        ruleId: live.ruleId,
        version: input.toVersion,
        targetId: live.targetId,
        status: 'deploying',
        approvalRequired: false,
        noiseBudget: input.noiseBudget === undefined ? live.noiseBudget : input.noiseBudget,
        workflowId: input.workflowId,
        requestedBy: input.requestedBy,
        requestedByPrincipal: input.requestedByPrincipal ?? null,
      })
      .onConflictDoNothing();
    const [restore] = await db.select({ id: deployments.id }).from(deployments).where(eq(deployments.workflowId, input.workflowId));
    to = { deploymentId: restore!.id, version: input.toVersion };
  }
  return {
    tenantId: live.tenantId,
    ruleId: live.ruleId,
    targetName: input.targetName,
    fromDeploymentId: live.id,
    fromVersion: live.version,
    to,
    reason: input.reason,
  };
}

/**
 * What `on_exceed: rollback` starts by itself: the rollback of a deployment that went over its noise budget, keyed by that
 * deployment: preparing it again returns the same run. Null when the deployment is no longer
 * live (a person rolled it back or deployed another version first).
 */
export async function planBudgetRollback(
  db: Db,
  { deploymentId, reason }: { deploymentId: string; reason: string },
): Promise<{ workflowId: string; input: RollbackInput } | null> {
  const [row] = await db
    .select({ d: deployments, targetName: targets.name })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .where(eq(deployments.id, deploymentId));
  if (!row) throw ApplicationFailure.nonRetryable(`No deployment ${deploymentId}`, FailureType.DeploymentNotFound);
  if (!(LIVE_DEPLOYMENT_STATUSES as readonly string[]).includes(row.d.status)) return null;
  const workflowId = workflowIds.rollback(row.d.tenantId, row.d.ruleId, row.targetName, `noise-budget-${deploymentId}`);
  const toVersion = await versionBefore(db, row.d);
  // The restored version keeps the budget but only suppresses beyond it: a policy that rolled
  // back once must not walk the rule back through every earlier version by itself.
  const noiseBudget = row.d.noiseBudget ? { ...row.d.noiseBudget, on_exceed: 'suppress' as const } : null;
  const input = await prepareRollback(db, { live: row.d, targetName: row.targetName, toVersion, restoreId: randomUUID(), workflowId, requestedBy: null, reason, noiseBudget });
  return { workflowId, input };
}
