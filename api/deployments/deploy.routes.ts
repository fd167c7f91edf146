import { and, desc, eq } from 'drizzle-orm';
import type { ApiDeps } from '../context';
import { deployments, targets } from '../../db/schema';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { notFound } from '../../domain/errors';
import { newestFirstAfter, newestFirstCursor } from '../http/pagination';
import { idempotencyKeyOf } from '../http/idempotency';
import { UuidParams } from '../settings/schemas';
import { isoDurationMs } from '../../config/iso-duration';
import { submitChange } from '../../domain/changes/submit-change';
import { longPoll } from '../http/long-poll';
import { deploymentViewer } from './deployment-view';
import { Deployment, DeployBody, DeploymentList, DeploymentListQuery, IdempotencyHeaders, WaitQuery, WorkflowStarted } from './schemas';
import { IN_PROGRESS, settleAbandonedChange } from '../../domain/changes/abandoned-change';

const SETTLED = new Set(['active', 'demoted', 'superseded', 'rolled_back', 'rejected', 'changes_requested', 'expired', 'failed', 'pending_approval']);

export function deployRoutes(deps: ApiDeps) {
  const { db } = deps.database;

  const deploymentView = deploymentViewer(deps);

  return [
    defineRoute({
      method: 'post',
      path: '/rules/deploy',
      operationId: 'deployRule',
      summary: 'Deploy a stored rule version to a target (starts DeployWithApproval)',
      tag: 'deployments',
      permission: 'deploy',
      body: DeployBody,
      headers: IdempotencyHeaders,
      responses: {
        202: { description: 'The deployment run started (or, for a repeated Idempotency-Key, the one it started before)', schema: WorkflowStarted },
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
        });
        const view = (await deploymentView(submitted.deploymentIds[0]!, auth.tenantId))!;
        return {
          status: 202,
          headers: { Location: view.links.self },
          body: { id: view.id, status: view.status, workflow_id: view.workflow_id, run_id: view.run_id, links: view.links },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/deployments/{id}',
      operationId: 'getDeployment',
      summary: 'A deployment: status, version, who, when; `?wait=N` long-polls until it settles',
      tag: 'deployments',
      permission: 'rules:read',
      params: UuidParams,
      query: WaitQuery,
      responses: {
        200: { description: 'The deployment', schema: Deployment },
        404: { description: 'No such deployment in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth, req }) => {
        // A change whose run ended without settling it would otherwise read in progress for ever.
        const current = await deploymentView(params.id, auth.tenantId);
        if (current && IN_PROGRESS.has(current.status)) {
          await settleAbandonedChange(db, deps.temporal.client, { workflowId: current.workflow_id, createdAt: new Date(current.created_at) });
        }
        const view = await longPoll(() => deploymentView(params.id, auth.tenantId), (v) => SETTLED.has(v.status), query.wait, () => req.socket.destroyed);
        if (!view) throw notFound(`No deployment ${params.id} in this tenant`);
        return { status: 200, body: view };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/deployments',
      operationId: 'listDeployments',
      summary: 'Deployments, newest first, filtered by rule, target and status',
      tag: 'deployments',
      permission: 'rules:read',
      query: DeploymentListQuery,
      responses: { 200: { description: 'A page of deployments', schema: DeploymentList } },
      handler: async ({ query, auth }) => {
        const rows = await db
          .select({ id: deployments.id, createdAt: deployments.createdAt })
          .from(deployments)
          .innerJoin(targets, eq(targets.id, deployments.targetId))
          .where(
            and(
              eq(deployments.tenantId, auth.tenantId),
              newestFirstAfter(query.cursor, deployments.createdAt, deployments.id),
              query.rule_id ? eq(deployments.ruleId, query.rule_id.toLowerCase()) : undefined,
              query.target ? eq(targets.name, query.target) : undefined,
              query.status ? eq(deployments.status, query.status) : undefined,
            ),
          )
          .orderBy(desc(deployments.createdAt), desc(deployments.id))
          .limit(query.limit + 1);
        const page = rows.slice(0, query.limit);
        const items = await Promise.all(page.map((r) => deploymentView(r.id, auth.tenantId)));
        const last = page.at(-1);
        return { status: 200, body: { items, next_cursor: newestFirstCursor(last, rows.length > query.limit) } };
      },
    }),
  ];
}
