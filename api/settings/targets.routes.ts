import type { z } from 'zod';
import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { createTarget, deleteTarget, findTarget, listTargets, type TargetSettings } from '../../domain/targets/targets';
import { targetView } from './target.view';
import { EnvironmentPlaceholders, NameParams, PlaceholdersBody, SettingsChangePending, Target, TargetBody, TargetList, TargetPlaceholders } from './schemas';
import { environmentPlaceholders, targetPlaceholders } from '../../domain/targets/target-settings';
import { changeEnvironmentPlaceholders, changeTargetPlaceholders, replaceTargetSettings, type SubmittedSettings } from '../../domain/targets/settings-change';

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

/** A settings change waiting for approval, as the API answers it. */
export function settingsChangeView(target: string, change: Extract<SubmittedSettings, { outcome: 'pending' }>) {
  return {
    status: 'pending_approval' as const,
    target,
    approval_id: change.approvalId,
    proposed_version: change.proposedVersion,
    affected: change.affected,
    links: { approval: `/api/v1/approvals/${change.approvalId}` },
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
        202: {
          description: 'A new field mapping under live rules: the other settings applied, the mapping a proposed settings version waiting for approval',
          schema: SettingsChangePending,
        },
        404: { description: 'No such target', schema: ProblemSchema },
        409: { description: 'The name or kind differs from the stored target, or a settings change of it waits for approval already', schema: ProblemSchema },
      },
      handler: async ({ params, body, auth }) => {
        const replaced = await replaceTargetSettings(deps, auth, params.name, settingsOf(body));
        if (replaced.outcome === 'applied') return { status: 200, body: targetView(replaced.target) };
        return { status: 202, headers: { Location: `/api/v1/approvals/${replaced.change.approvalId}` }, body: settingsChangeView(params.name, replaced.change) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/settings/targets/{name}/placeholders',
      operationId: 'getTargetPlaceholders',
      summary: "A target's placeholder values: its own, its environment's defaults, the resolved ones, and the settings version",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'object', object: 'target', param: 'name' },
      params: NameParams,
      responses: { 200: { description: 'The values', schema: TargetPlaceholders }, 404: { description: 'No such target', schema: ProblemSchema } },
      handler: async ({ params, auth }) => ({ status: 200, body: await targetPlaceholders(db, auth, params.name) }),
    }),
    defineRoute({
      method: 'put',
      path: '/settings/targets/{name}/placeholders',
      operationId: 'putTargetPlaceholders',
      summary: "Replace a target's own placeholder values (`|expand` `%name%`); a new settings version",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'object', object: 'target', param: 'name' },
      params: NameParams,
      body: PlaceholdersBody,
      responses: {
        200: { description: 'Applied: no live rule on the target uses a changed value. The values now in force', schema: TargetPlaceholders },
        202: { description: 'Live rules use a changed value: a proposed settings version waits for approval', schema: SettingsChangePending },
        404: { description: 'No such target', schema: ProblemSchema },
        409: { description: 'A settings change of this target waits for approval already', schema: ProblemSchema },
      },
      handler: async ({ params, body, auth }) => {
        const change = await changeTargetPlaceholders(deps, auth, params.name, body.placeholders);
        if (change.outcome === 'applied') return { status: 200, body: change.settings };
        return { status: 202, headers: { Location: `/api/v1/approvals/${change.approvalId}` }, body: settingsChangeView(params.name, change) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/settings/environments/{name}/placeholders',
      operationId: 'getEnvironmentPlaceholders',
      summary: "An environment's default placeholder values and their version",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'object', object: 'environment', param: 'name' },
      params: NameParams,
      responses: { 200: { description: 'The defaults', schema: EnvironmentPlaceholders }, 404: { description: 'No such environment', schema: ProblemSchema } },
      handler: async ({ params, auth }) => ({ status: 200, body: await environmentPlaceholders(db, auth, params.name) }),
    }),
    defineRoute({
      method: 'put',
      path: '/settings/environments/{name}/placeholders',
      operationId: 'putEnvironmentPlaceholders',
      summary: "Replace an environment's default placeholder values (each target's own win)",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'object', object: 'environment', param: 'name' },
      params: NameParams,
      body: PlaceholdersBody,
      responses: {
        200: { description: 'The defaults now in force', schema: EnvironmentPlaceholders },
        404: { description: 'No such environment', schema: ProblemSchema },
        409: { description: 'Live rules use a default this change alters: change it per target, with approval', schema: ProblemSchema },
      },
      handler: async ({ params, body, auth }) => ({ status: 200, body: await changeEnvironmentPlaceholders(deps, auth, params.name, body.placeholders) }),
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
