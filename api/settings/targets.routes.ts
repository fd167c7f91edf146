import type { z } from 'zod';
import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { createTarget, deleteTarget, findTarget, listTargets, replaceTarget, type TargetSettings } from '../../domain/targets/targets';
import { targetView } from './target.view';
import { NameParams, Target, TargetBody, TargetList } from './schemas';

function settingsOf(body: z.infer<typeof TargetBody>): TargetSettings {
  return {
    name: body.name,
    kind: body.kind,
    environment: body.environment,
    connection: body.connection,
    detectionInterval: body.detection_interval,
    costModel: body.cost_model,
  };
}

/** Targets: named SIEM instances of a kind, in one environment of the tenant (admin). */
export function targetRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'get',
      path: '/settings/targets',
      operationId: 'listTargets',
      summary: "The tenant's targets",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'list' },
      responses: { 200: { description: 'The targets, by name', schema: TargetList } },
      handler: async ({ auth }) => ({ status: 200, body: { items: (await listTargets(db, auth)).map(targetView) } }),
    }),
    defineRoute({
      method: 'post',
      path: '/settings/targets',
      operationId: 'createTarget',
      summary: 'Create a target',
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'environment', in: 'body', field: 'environment' },
      body: TargetBody,
      responses: { 201: { description: 'The target', schema: Target }, 409: { description: 'A target of that name exists', schema: ProblemSchema } },
      handler: async ({ body, auth }) => {
        const target = await createTarget(deps, auth, settingsOf(body));
        return { status: 201, headers: { Location: `/api/v1/settings/targets/${body.name}` }, body: targetView(target) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/settings/targets/{name}',
      operationId: 'getTarget',
      summary: 'One target',
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'object', object: 'target', param: 'name' },
      params: NameParams,
      responses: { 200: { description: 'The target', schema: Target }, 404: { description: 'No such target', schema: ProblemSchema } },
      handler: async ({ params, auth }) => ({ status: 200, body: targetView(await findTarget(db, auth, params.name)) }),
    }),
    defineRoute({
      method: 'put',
      path: '/settings/targets/{name}',
      operationId: 'updateTarget',
      summary: "Replace a target's settings (its name and kind stay)",
      tag: 'settings',
      permission: 'admin',
      scope: [
        { kind: 'object', object: 'target', param: 'name' },
        { kind: 'environment', in: 'body', field: 'environment' },
      ],
      params: NameParams,
      body: TargetBody,
      responses: {
        200: { description: 'The target', schema: Target },
        404: { description: 'No such target', schema: ProblemSchema },
        409: { description: 'The name or kind differs from the stored target', schema: ProblemSchema },
      },
      handler: async ({ params, body, auth }) => ({ status: 200, body: targetView(await replaceTarget(deps, auth, params.name, settingsOf(body))) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/settings/targets/{name}',
      operationId: 'deleteTarget',
      summary: 'Delete a target that was never deployed to',
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'object', object: 'target', param: 'name' },
      params: NameParams,
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'No such target', schema: ProblemSchema },
        409: { description: 'Built in, or it has deployments', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        await deleteTarget(db, auth, params.name);
        return { status: 204 };
      },
    }),
  ];
}
