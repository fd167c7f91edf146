import { z } from 'zod';
import type { ApiDeps } from '../context';
import { runLink } from '../context';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { ProblemSchema } from '../http/problem';
import { idempotencyKeyOf } from '../http/idempotency';
import { requestRollback } from '../../domain/changes/rollback-request';
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
  return [
    defineRoute({
      method: 'post',
      path: '/rules/rollback',
      operationId: 'rollbackRule',
      summary: 'Roll a deployed rule back on a target (starts Rollback)',
      tag: 'deployments',
      permission: 'deploy',
      scope: { kind: 'targets', in: 'body', field: 'target' },
      body: RollbackBody,
      headers: IdempotencyHeaders,
      responses: {
        202: { description: 'The rollback run started', schema: RollbackStarted },
        404: { description: 'No such rule, version or target in this tenant', schema: ProblemSchema },
        409: { description: 'Nothing is deployed to roll back, or the version asked for is the live one', schema: ProblemSchema },
      },
      handler: async ({ body, auth, req }) => {
        const started = await requestRollback(deps, auth, {
          ruleId: body.rule_id,
          target: body.target,
          reason: body.reason,
          toVersion: body.to_version,
          remove: body.remove,
          idempotencyKey: idempotencyKeyOf(req),
          requestBody: body,
        });
        const { id, workflowId, runId, toVersion } = started;
        const run = runLink(deps.temporal, workflowId, runId);
        return {
          status: 202,
          headers: { Location: `/api/v1/deployments/${started.liveDeploymentId}` },
          body: {
            id,
            status: 'running',
            workflow_id: workflowId,
            run_id: runId,
            from_version: started.fromVersion,
            restores_version: toVersion,
            links: {
              self: `/api/v1/deployments/${started.liveDeploymentId}`,
              ...(toVersion !== null ? { restored: `/api/v1/deployments/${id}` } : {}),
              ...(run ? { run } : {}),
            },
          },
        };
      },
    }),
  ];
}
