import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { NameParams, UuidParams } from '../settings/schemas';
import { checkTargetDriftNow, restoreDeployment, targetDriftReport } from '../../domain/drift/drift-requests';
import { readDeployment } from '../../domain/changes/deployments';
import { deploymentView } from '../deployments/deployment.view';
import { Deployment } from '../deployments/schemas';
import { TargetDrift } from './schemas';

/** Drift: how a target departs from what detflow deployed there, and putting it back (domain/drift/). */
export function driftRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/settings/targets/{name}/drift',
      operationId: 'getTargetDrift',
      summary: "A target's open drift, as the last check found it",
      tag: 'deployments',
      permission: 'rules:read',
      scope: { kind: 'object', object: 'target', param: 'name' },
      params: NameParams,
      responses: { 200: { description: 'Open drift', schema: TargetDrift }, 404: { description: 'No such target', schema: ProblemSchema } },
      handler: async ({ params, auth }) => ({ status: 200, body: await targetDriftReport(deps, auth, params.name) }),
    }),
    defineRoute({
      method: 'post',
      path: '/settings/targets/{name}/drift-check',
      operationId: 'checkTargetDrift',
      summary: 'Check a target for drift now (new drift is notified as deployment.drifted)',
      tag: 'deployments',
      permission: 'deploy',
      scope: { kind: 'object', object: 'target', param: 'name' },
      params: NameParams,
      responses: {
        200: { description: 'Open drift after the check', schema: TargetDrift },
        404: { description: 'No such target', schema: ProblemSchema },
        502: { description: 'The SIEM refused the credentials', schema: ProblemSchema },
        503: { description: 'The SIEM is unavailable', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => ({ status: 200, body: await checkTargetDriftNow(deps, auth, params.name) }),
    }),
    defineRoute({
      method: 'post',
      path: '/deployments/{id}/restore',
      operationId: 'restoreDeployment',
      summary: 'Put a live deployment back on its target as detflow deployed it (undoes drift)',
      tag: 'deployments',
      permission: 'deploy',
      scope: { kind: 'object', object: 'deployment', param: 'id' },
      params: UuidParams,
      responses: {
        200: { description: 'The deployment, with the drift left after restoring it', schema: Deployment },
        404: { description: 'No such deployment in this tenant', schema: ProblemSchema },
        409: { description: 'The deployment is not live', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        await restoreDeployment(deps, auth, params.id);
        return { status: 200, body: deploymentView(deps.temporal, (await readDeployment(deps.database.db, auth.tenantId, params.id))!) };
      },
    }),
  ];
}
