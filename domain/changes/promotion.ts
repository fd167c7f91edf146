import { and, eq, sql } from 'drizzle-orm';
import { deployments, targets, type Demotion } from '../../db/schema';
import type { Notify } from '../../workflows/notify';
import { KIND, TENANT, WorkflowType, workflowIds } from '../../workflows/contracts';
import type { NoiseBudgetPolicy } from '../statuses';
import type { DomainDeps } from '../deps';
import { conflict, insufficientScope, notFound } from '../errors';
import { notifyRunMetadata } from '../../workflows/run-summaries';
import { mayUseEnvironment, type Actor } from '../tenants/actor';

/**
 * Promotion: a person puts a deployment that its noise budget demoted (`on_exceed: demote`) back to
 * alerting. Detection carries on from where the shadow runs stopped, so an event evaluated in shadow
 * never raises a late alert, and the day's budget counts again from the promotion.
 */
export async function promoteDeployment(
  deps: DomainDeps,
  actor: Actor,
  id: string,
  request: { comment: string | null; noiseBudget: NoiseBudgetPolicy | undefined },
): Promise<void> {
  const { db } = deps.database;
  const [row] = await db
    .select({ d: deployments, environment: targets.environment, targetName: targets.name })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .where(and(eq(deployments.id, id), eq(deployments.tenantId, actor.tenantId)));
  if (!row) throw notFound(`No deployment ${id} in this tenant`);
  if (!mayUseEnvironment(actor, row.environment)) throw insufficientScope(`This token may not act on environment ${row.environment} (target ${row.targetName})`);
  if (row.d.status !== 'demoted' || !row.d.demotion) throw conflict(`Deployment ${id} is ${row.d.status}; only a demoted deployment can be promoted`);

  const promotedAt = new Date();
  const demotion: Demotion = { ...row.d.demotion, promoted_at: promotedAt.toISOString(), promoted_by: actor.tokenId, comment: request.comment };
  const updated = await db
    .update(deployments)
    .set({ status: 'active', demotion, ...(request.noiseBudget ? { noiseBudget: request.noiseBudget } : {}), updatedAt: sql`now()` })
    .where(and(eq(deployments.id, id), eq(deployments.status, 'demoted')))
    .returning({ id: deployments.id });
  if (updated.length === 0) throw conflict(`Deployment ${id} changed while it was being promoted; read it again`);

  const workflowId = workflowIds.notify(actor.tenantId, 'deployment.promoted', id, String(promotedAt.getTime()));
  const notice = {
    tenantId: actor.tenantId,
    event: 'deployment.promoted' as const,
    sourceKey: workflowId,
    data: { deployment_id: id, rule_id: row.d.ruleId, version: row.d.version, target: row.targetName, promoted_by: actor.tokenId, comment: request.comment },
  };
  await deps.temporal.client.workflow.start<typeof Notify>(WorkflowType.Notify, {
    workflowId,
    taskQueue: deps.temporal.taskQueue,
    args: [notice],
    ...notifyRunMetadata(notice),
    typedSearchAttributes: [
      { key: TENANT, value: actor.tenantId },
      { key: KIND, value: 'notify' },
    ],
  });
}
