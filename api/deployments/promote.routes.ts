import { and, eq, sql } from 'drizzle-orm';
import type { ApiDeps } from '../context';
import { deployments, targets, type Demotion } from '../../db/schema';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { conflict, insufficientScope, notFound } from '../../domain/errors';
import { mayUseEnvironment } from '../../domain/tenants/actor';
import { UuidParams } from '../settings/schemas';
import { Notify } from '../../workflows/notify';
import { KIND, TENANT, workflowIds } from '../../domain/contracts';
import { deploymentViewer } from './deployment-view';
import { Deployment, PromoteBody } from './schemas';

/**
 * Promotion: a person puts a deployment that its noise budget demoted (`on_exceed: demote`) back to
 * alerting. Detection carries on from where the shadow runs stopped, so an event evaluated in shadow
 * never raises a late alert, and the day's budget counts again from the promotion.
 */
export function promoteRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const deploymentView = deploymentViewer(deps);
  return [
    defineRoute({
      method: 'post',
      path: '/deployments/{id}/promote',
      operationId: 'promoteDeployment',
      summary: 'Put a demoted deployment back to alerting (optionally with a new noise budget)',
      tag: 'deployments',
      permission: 'deploy',
      params: UuidParams,
      body: PromoteBody,
      responses: {
        200: { description: 'The deployment, active again', schema: Deployment },
        404: { description: 'No such deployment in this tenant', schema: ProblemSchema },
        409: { description: 'The deployment is not demoted', schema: ProblemSchema },
      },
      handler: async ({ params, body, auth }) => {
        const [row] = await db
          .select({ d: deployments, environment: targets.environment, targetName: targets.name })
          .from(deployments)
          .innerJoin(targets, eq(targets.id, deployments.targetId))
          .where(and(eq(deployments.id, params.id), eq(deployments.tenantId, auth.tenantId)));
        if (!row) throw notFound(`No deployment ${params.id} in this tenant`);
        if (!mayUseEnvironment(auth, row.environment)) throw insufficientScope(`This token may not act on environment ${row.environment} (target ${row.targetName})`);
        if (row.d.status !== 'demoted' || !row.d.demotion) throw conflict(`Deployment ${params.id} is ${row.d.status}; only a demoted deployment can be promoted`);

        const promotedAt = new Date();
        const demotion: Demotion = { ...row.d.demotion, promoted_at: promotedAt.toISOString(), promoted_by: auth.tokenId, comment: body.comment ?? null };
        const updated = await db
          .update(deployments)
          .set({ status: 'active', demotion, ...(body.noise_budget ? { noiseBudget: body.noise_budget } : {}), updatedAt: sql`now()` })
          .where(and(eq(deployments.id, params.id), eq(deployments.status, 'demoted')))
          .returning({ id: deployments.id });
        if (updated.length === 0) throw conflict(`Deployment ${params.id} changed while it was being promoted; read it again`);

        const workflowId = workflowIds.notify(auth.tenantId, 'deployment.promoted', params.id, String(promotedAt.getTime()));
        await deps.temporal.client.workflow.start(Notify, {
          workflowId,
          taskQueue: deps.temporal.taskQueue,
          args: [
            {
              tenantId: auth.tenantId,
              event: 'deployment.promoted',
              sourceKey: workflowId,
              data: { deployment_id: params.id, rule_id: row.d.ruleId, version: row.d.version, target: row.targetName, promoted_by: auth.tokenId, comment: body.comment ?? null },
            },
          ],
          typedSearchAttributes: [
            { key: TENANT, value: auth.tenantId },
            { key: KIND, value: 'notify' },
          ],
        });
        return { status: 200, body: (await deploymentView(params.id, auth.tenantId))! };
      },
    }),
  ];
}
