import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { UuidParams } from '../settings/schemas';
import { promoteDeployment } from '../../domain/changes/promotion';
import { readDeployment } from '../../domain/changes/deployments';
import { deploymentView } from './deployment.view';
import { Deployment, PromoteBody } from './schemas';

/** Promotion of a demoted deployment (see domain/changes/promotion.ts). */
export function promoteRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/deployments/{id}/promote',
      operationId: 'promoteDeployment',
      summary: 'Put a demoted deployment back to alerting (optionally with a new noise budget)',
      tag: 'deployments',
      permission: 'deploy',
      scope: { kind: 'object', object: 'deployment', param: 'id' },
      params: UuidParams,
      body: PromoteBody,
      responses: {
        200: { description: 'The deployment, active again', schema: Deployment },
        404: { description: 'No such deployment in this tenant', schema: ProblemSchema },
        409: { description: 'The deployment is not demoted', schema: ProblemSchema },
      },
      handler: async ({ params, body, auth }) => {
        await promoteDeployment(deps, auth, params.id, { comment: body.comment ?? null, noiseBudget: body.noise_budget });
        return { status: 200, body: deploymentView(deps.temporal, (await readDeployment(deps.database.db, auth.tenantId, params.id))!) };
      },
    }),
  ];
}
