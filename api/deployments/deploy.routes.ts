import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { notFound } from '../../domain/errors';
import { decodeNewestFirstCursor, newestFirstCursor } from '../http/pagination';
import { idempotencyKeyOf } from '../http/idempotency';
import { UuidParams } from '../settings/schemas';
import { isoDurationMs } from '../../config/iso-duration';
import { submitChange } from '../../domain/changes/submit-change';
import { listDeployments, readDeployment, settleIfAbandoned } from '../../domain/changes/deployments';
import { longPoll } from '../http/long-poll';
import { deploymentView } from './deployment.view';
import { waitIsOver } from './wait-until';
import { Deployment, DeployAnswered, DeployBody, DeploymentList, DeploymentListQuery, DeploymentWaitQuery, DeployStarted, IdempotencyHeaders } from './schemas';

export function deployRoutes(deps: ApiDeps) {
  const { db } = deps.database;

  const view = async (id: string, tenantId: string) => {
    const record = await readDeployment(db, tenantId, id);
    return record && deploymentView(deps.temporal, record);
  };
  const flags = (outcome: 'started' | 'reused' | 'unchanged') => ({ unchanged: outcome === 'unchanged', reused: outcome === 'reused' });

  return [
    defineRoute({
      method: 'post',
      path: '/rules/deploy',
      operationId: 'deployRule',
      summary: 'Deploy a stored rule version to a target (starts DeployWithApproval)',
      tag: 'deployments',
      permission: 'deploy',
      scope: { kind: 'targets', in: 'body', field: 'target' },
      body: DeployBody,
      headers: IdempotencyHeaders,
      responses: {
        200: {
          description:
            'Nothing new was started: the version is already active on the target with the same noise budget (`unchanged: true`, the active deployment), ' +
            'or an equal change already waits for approval (`reused: true`, its deployment and `approval_id`)',
          schema: DeployAnswered,
        },
        202: {
          description: 'The deployment run started (or, for a repeated Idempotency-Key, the one it started before); `approval_id` names the approval it waits for',
          schema: DeployStarted,
        },
        404: { description: 'No such rule, version or target in this tenant', schema: ProblemSchema },
        409: { description: 'The Idempotency-Key was used with a different request', schema: ProblemSchema },
      },
      handler: async ({ body, auth, req }) => {
        const submitted = await submitChange(deps, auth, {
          ruleId: body.rule_id,
          version: body.version,
          targets: [body.target],
          approvalRequired: body.approval_required,
          noiseBudget: body.noise_budget ?? null,
          description: null,
          link: null,
          expiresInMs: isoDurationMs(body.approval_expires_in),
          idempotencyKey: idempotencyKeyOf(req),
          requestBody: body,
          noopWhenLive: true,
        });
        const current = (await view(submitted.deploymentIds[0]!, auth.tenantId))!;
        if (submitted.outcome !== 'started') return { status: 200, headers: { Location: current.links.self }, body: { ...current, ...flags(submitted.outcome) } };
        const { id, status, workflow_id, run_id, approval_id, links } = current;
        return { status: 202, headers: { Location: links.self }, body: { id, status, workflow_id, run_id, approval_id, links, ...flags('started') } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/deployments/{id}',
      operationId: 'getDeployment',
      summary: 'A deployment: status, version, who, when; `?wait=N` long-polls (`until=decided`, the default: through a pending approval and deploying; `until=any_change`)',
      tag: 'deployments',
      permission: 'rules:read',
      scope: { kind: 'object', object: 'deployment', param: 'id' },
      params: UuidParams,
      query: DeploymentWaitQuery,
      responses: {
        200: { description: 'The deployment', schema: Deployment },
        404: { description: 'No such deployment in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth, req }) => {
        const first = await readDeployment(db, auth.tenantId, params.id);
        if (!first) throw notFound(`No deployment ${params.id} in this tenant`);
        await settleIfAbandoned(deps, first);
        const initial = query.from ?? first.deployment.status;
        const settled = await longPoll(
          () => readDeployment(db, auth.tenantId, params.id),
          (r) => waitIsOver(query.until, initial, r.deployment.status),
          query.wait,
          () => req.socket.destroyed,
        );
        if (!settled) throw notFound(`No deployment ${params.id} in this tenant`);
        return { status: 200, body: deploymentView(deps.temporal, settled) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/deployments',
      operationId: 'listDeployments',
      summary: 'Deployments, newest first, filtered by rule, target and status',
      tag: 'deployments',
      permission: 'rules:read',
      scope: { kind: 'list' },
      query: DeploymentListQuery,
      responses: { 200: { description: 'A page of deployments', schema: DeploymentList } },
      handler: async ({ query, auth }) => {
        const page = await listDeployments(
          db,
          auth,
          { ruleId: query.rule_id, target: query.target, status: query.status },
          { after: decodeNewestFirstCursor(query.cursor), limit: query.limit },
        );
        const items = page.records.map((record) => deploymentView(deps.temporal, record));
        return { status: 200, body: { items, next_cursor: newestFirstCursor(page.last, page.more) } };
      },
    }),
  ];
}
