import crypto from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import type { ApiDeps } from '../context';
import { startOrJoin } from '../../domain/runs/start-or-join';
import { runLink } from '../context';
import { LIVE_DEPLOYMENT_STATUSES, deployments, rules, targets } from '../../db/schema';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { ProblemSchema } from '../http/problem';
import { conflict, insufficientScope, notFound } from '../../domain/errors';
import { idempotencyKeyOf } from '../http/idempotency';
import { claimIdempotencyKey } from '../../domain/idempotency';
import { mayUseEnvironment } from '../../domain/tenants/actor';
import { Rollback, rollbackSearchAttributes } from '../../workflows/rollback';
import { workflowIds } from '../../domain/contracts';
import { prepareRollback, versionBefore } from '../../domain/changes/rollback-plan';
import { IdempotencyHeaders } from './schemas';

const RollbackBody = openapi(
  z
    .object({
      rule_id: z.string().min(1).max(200),
      target: z.string().min(1).max(63),
      reason: z.string().min(1).max(2000),
      to_version: z.number().int().min(1).max(2_147_483_647).optional().describe('The version to restore; the one deployed before the live one when absent'),
      remove: z.boolean().default(false).describe('Take the rule off the target whatever was deployed before (GitOps sync deletes this way); not with to_version'),
    })
    .strict()
    .refine((b) => !(b.remove && b.to_version !== undefined), { message: 'remove and to_version exclude each other', path: ['remove'] }),
  'RollbackRequest',
);

const RollbackStarted = openapi(
  z.object({
    id: z.string(),
    status: z.literal('running'),
    workflow_id: z.string(),
    run_id: z.string(),
    from_version: z.number().int(),
    restores_version: z.number().int().nullable().describe('null: no earlier version, the rule is removed from the target'),
    links: z.object({ self: z.string(), restored: z.string().optional(), run: z.string().optional() }),
  }),
  'RollbackStarted',
);

/** Rollback: back to the previous (or a named) version on a target, or off the target when there is none. */
export function rollbackRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'post',
      path: '/rules/rollback',
      operationId: 'rollbackRule',
      summary: 'Roll a deployed rule back on a target (starts Rollback)',
      tag: 'deployments',
      permission: 'deploy',
      body: RollbackBody,
      headers: IdempotencyHeaders,
      responses: {
        202: { description: 'The rollback run started', schema: RollbackStarted },
        404: { description: 'No such rule, version or target in this tenant', schema: ProblemSchema },
        409: { description: 'Nothing is deployed to roll back, or the version asked for is the live one', schema: ProblemSchema },
      },
      handler: async ({ body, auth, req }) => {
        const ruleId = body.rule_id.toLowerCase();
        const [rule] = await db.select().from(rules).where(and(eq(rules.tenantId, auth.tenantId), eq(rules.ruleId, ruleId)));
        if (!rule) throw notFound(`No rule ${body.rule_id} in this tenant`);
        const [target] = await db.select().from(targets).where(and(eq(targets.tenantId, auth.tenantId), eq(targets.name, body.target)));
        if (!target) throw notFound(`No target ${body.target} in this tenant`);
        if (!mayUseEnvironment(auth, target.environment)) throw insufficientScope(`This token may not act on environment ${target.environment} (target ${target.name})`);
        const scope = and(eq(deployments.tenantId, auth.tenantId), eq(deployments.ruleId, ruleId), eq(deployments.targetId, target.id));
        const [live] = await db.select().from(deployments).where(and(scope, inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES)));
        if (!live) throw conflict(`Rule ${ruleId} is not deployed on ${target.name}; there is nothing to roll back`);

        let toVersion: number | null;
        if (body.remove) {
          toVersion = null;
        } else if (body.to_version !== undefined) {
          if (body.to_version > rule.latestVersion) throw notFound(`Rule ${ruleId} has no version ${body.to_version}`);
          if (body.to_version === live.version) throw conflict(`Version ${live.version} is the one live on ${target.name}`);
          toVersion = body.to_version;
        } else {
          toVersion = await versionBefore(db, live);
        }

        const key = idempotencyKeyOf(req);
        const id = key ? await claimIdempotencyKey(db, auth.tenantId, 'rollback', key, body) : crypto.randomUUID();
        const workflowId = workflowIds.rollback(auth.tenantId, ruleId, target.name, id);
        const input = await prepareRollback(db, { live, targetName: target.name, toVersion, restoreId: id, workflowId, requestedBy: auth.tokenId, reason: body.reason });
        const runId = await startOrJoin(deps.temporal.client, Rollback, {
          workflowId,
          taskQueue: deps.temporal.taskQueue,
          args: [input],
          typedSearchAttributes: rollbackSearchAttributes({ tenantId: auth.tenantId, ruleId, targetName: target.name }),
        });
        const run = runLink(deps.temporal, workflowId, runId);
        return {
          status: 202,
          headers: { Location: `/api/v1/deployments/${live.id}` },
          body: {
            id,
            status: 'running',
            workflow_id: workflowId,
            run_id: runId,
            from_version: live.version,
            restores_version: toVersion,
            links: { self: `/api/v1/deployments/${live.id}`, ...(toVersion !== null ? { restored: `/api/v1/deployments/${id}` } : {}), ...(run ? { run } : {}) },
          },
        };
      },
    }),
  ];
}
