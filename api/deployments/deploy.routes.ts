import crypto from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { ApiDeps } from '../context';
import { runLink } from '../context';
import { deployments, rules, targets } from '../../db/schema';
import { defineRoute } from '../http/route';
import { ProblemSchema, badRequest, insufficientScope, notFound, notImplemented } from '../http/problem';
import { claimIdempotencyKey, idempotencyKeyOf } from '../http/idempotency';
import { mayUseEnvironment, type AuthContext } from '../auth/authenticate';
import { UuidParams } from '../settings/schemas';
import { DeployWithApproval, type DeployInput } from '../../workflows/deploy-with-approval';
import { KIND, RULE_ID, STATUS, TARGET, TENANT } from '../../workflows/search-attributes';
import { Deployment, DeployBody, IdempotencyHeaders, WaitQuery, WorkflowStarted } from './schemas';

const SETTLED = new Set(['active', 'superseded', 'rolled_back', 'rejected', 'changes_requested', 'expired', 'failed', 'pending_approval']);

export function deployRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const { temporal } = deps;

  /** A tenant's target by name, checked against the token's environments. */
  async function targetFor(auth: AuthContext, name: string) {
    const [target] = await db.select().from(targets).where(and(eq(targets.tenantId, auth.tenantId), eq(targets.name, name)));
    if (!target) throw notFound(`No target ${name} in this tenant`);
    if (!mayUseEnvironment(auth, target.environment)) {
      throw insufficientScope(`This token may not act on environment ${target.environment} (target ${name})`);
    }
    return target;
  }

  async function deploymentView(id: string, tenantId: string) {
    const [row] = await db
      .select({ d: deployments, targetName: targets.name, environment: targets.environment })
      .from(deployments)
      .innerJoin(targets, eq(targets.id, deployments.targetId))
      .where(and(eq(deployments.id, id), eq(deployments.tenantId, tenantId)));
    if (!row) return undefined;
    const d = row.d;
    return {
      id: d.id,
      rule_id: d.ruleId,
      version: d.version,
      target: row.targetName,
      environment: row.environment,
      status: d.status,
      approval_required: d.approvalRequired,
      noise_budget: d.noiseBudget ?? null,
      requested_by: d.requestedBy,
      error: d.error,
      workflow_id: d.workflowId,
      run_id: d.runId,
      created_at: d.createdAt.toISOString(),
      updated_at: d.updatedAt.toISOString(),
      activated_at: d.activatedAt?.toISOString() ?? null,
      ended_at: d.endedAt?.toISOString() ?? null,
      links: { self: `/api/v1/deployments/${d.id}`, ...optionalRun(d.workflowId, d.runId) },
    };
  }

  function optionalRun(workflowId: string, runId: string | null) {
    const run = runLink(temporal, workflowId, runId);
    return run ? { run } : {};
  }

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
        501: { description: 'Deploys with approval_required are not available yet', schema: ProblemSchema },
      },
      handler: async ({ body, auth, req }) => {
        const key = idempotencyKeyOf(req);
        const target = await targetFor(auth, body.target);
        if (body.approval_required) {
          throw notImplemented('Deploys that require approval arrive with the approvals feature; send approval_required: false for now');
        }
        const [rule] = await db.select().from(rules).where(and(eq(rules.tenantId, auth.tenantId), eq(rules.ruleId, body.rule_id.toLowerCase())));
        if (!rule) throw notFound(`No rule ${body.rule_id} in this tenant`);
        const version = body.version ?? rule.latestVersion;
        if (version > rule.latestVersion) {
          throw notFound(`Rule ${rule.ruleId} has no version ${version}; the latest is ${rule.latestVersion}`);
        }
        if (target.kind !== 'local') throw badRequest(`Targets of kind ${target.kind} are not supported yet`, [{ pointer: '/body/target', message: 'unsupported target kind' }]);

        const deploymentId = key ? await claimIdempotencyKey(db, auth.tenantId, 'deploy', key, body) : crypto.randomUUID();
        const workflowId = `deploy/${auth.tenantId}/${rule.ruleId}/${target.name}/${deploymentId}`;
        await db
          .insert(deployments)
          .values({
            id: deploymentId,
            tenantId: auth.tenantId,
            ruleId: rule.ruleId,
            version,
            targetId: target.id,
            status: 'deploying',
            approvalRequired: body.approval_required,
            noiseBudget: body.noise_budget ?? null,
            workflowId,
            requestedBy: auth.tokenId,
          })
          .onConflictDoNothing();

        const input: DeployInput = {
          deploymentId,
          tenantId: auth.tenantId,
          ruleId: rule.ruleId,
          version,
          targetId: target.id,
          targetName: target.name,
          approvalRequired: body.approval_required,
          noiseBudget: body.noise_budget ?? null,
        };
        let runId: string;
        try {
          const handle = await temporal.client.workflow.start(DeployWithApproval, {
            workflowId,
            taskQueue: temporal.taskQueue,
            args: [input],
            // A retried request joins the run the first one started instead of starting another.
            workflowIdConflictPolicy: 'USE_EXISTING',
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
            typedSearchAttributes: [
              { key: TENANT, value: auth.tenantId },
              { key: RULE_ID, value: rule.ruleId },
              { key: TARGET, value: target.name },
              { key: KIND, value: 'deploy' },
              { key: STATUS, value: 'deploying' },
            ],
          });
          runId = handle.firstExecutionRunId;
        } catch (err) {
          // The run already finished: the key still names it.
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          const described = await temporal.client.workflow.getHandle(workflowId).describe();
          runId = described.runId;
        }
        await db.update(deployments).set({ runId }).where(and(eq(deployments.id, deploymentId), eq(deployments.tenantId, auth.tenantId)));
        const view = (await deploymentView(deploymentId, auth.tenantId))!;
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
        const deadline = Date.now() + query.wait * 1000;
        let view = await deploymentView(params.id, auth.tenantId);
        while (view && !SETTLED.has(view.status) && Date.now() < deadline && !req.socket.destroyed) {
          await new Promise((r) => setTimeout(r, 100));
          view = await deploymentView(params.id, auth.tenantId);
        }
        if (!view) throw notFound(`No deployment ${params.id} in this tenant`);
        return { status: 200, body: view };
      },
    }),
  ];
}
