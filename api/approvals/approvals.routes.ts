import { and, desc, eq, sql } from 'drizzle-orm';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { ApiDeps } from '../context';
import { runLink } from '../context';
import { APPROVAL_STATUSES, approvals } from '../../db/schema';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { newestFirstAfter, newestFirstCursor } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { conflict, insufficientScope, notFound, unavailable } from '../../domain/errors';
import { idempotencyKeyOf } from '../http/idempotency';
import { UuidParams } from '../settings/schemas';
import { IdempotencyHeaders, NoiseBudget, approvalExpiry } from '../deployments/schemas';
import { submitChange } from '../../domain/changes/submit-change';
import { longPoll } from '../http/long-poll';
import { isoDurationMs } from '../../config/iso-duration';
import { decideUpdate } from '../../workflows/change-messages';
import { settleAbandonedChange } from '../../domain/changes/abandoned-change';
import { FailureType } from '../../domain/contracts';

const SubmitApprovalBody = openapi(
  z
    .object({
      rule_id: z.string().min(1).max(200),
      version: z.number().int().min(1).max(2_147_483_647).optional().describe('The latest when absent'),
      targets: z.array(z.string().min(1).max(63)).min(1).max(20),
      noise_budget: NoiseBudget.optional(),
      description: z.string().max(10_000).optional(),
      link: z.url({ protocol: /^https?$/ }).max(2048).optional().describe('The pull request or ticket of the change'),
      expires_in: approvalExpiry.default('P7D').describe('How long the approval waits for a decision'),
    })
    .strict(),
  'SubmitApproval',
);

const DecisionBody = openapi(
  z.object({ decision: z.enum(['approve', 'reject', 'request_changes']), comment: z.string().max(10_000).optional() }).strict(),
  'ApprovalDecision',
);

const Approval = openapi(
  z.object({
    id: z.string(),
    rule_id: z.string(),
    version: z.number().int(),
    targets: z.array(z.string()),
    status: z.enum(APPROVAL_STATUSES),
    description: z.string().nullable(),
    link: z.string().nullable(),
    noise_budget: NoiseBudget.nullable(),
    impact: z.record(z.string(), z.unknown()).nullable().describe('Affected targets, projected alerts, cost, noise delta and diff; null until computed'),
    requested_by: z.string().nullable(),
    decided_by: z.string().nullable(),
    decision: z.string().nullable(),
    comment: z.string().nullable(),
    deployment_ids: z.array(z.string()),
    workflow_id: z.string(),
    created_at: z.string(),
    decided_at: z.string().nullable(),
    expires_at: z.string().nullable(),
    links: z.object({ self: z.string(), deployments: z.array(z.string()), run: z.string().optional() }),
  }),
  'Approval',
);
const ApprovalList = openapi(z.object({ items: z.array(Approval), next_cursor: z.string().nullable() }), 'ApprovalList');
const ApprovalQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().max(512).optional(),
    status: z.enum(APPROVAL_STATUSES).optional(),
    rule_id: z.string().min(1).max(200).optional(),
    target: z.string().min(1).max(63).optional(),
  })
  .strict();
const WaitImpact = z.object({ wait: z.coerce.number().int().min(0).max(60).default(0).describe('Seconds to wait for the impact summary or a decision') }).strict();

/** Approvals: a change waits for a reviewer's decision, which reaches its workflow as an update. */
export function approvalRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  type Row = typeof approvals.$inferSelect;
  const view = (a: Row) => {
    const run = runLink(deps.temporal, a.workflowId, null);
    return {
      id: a.id,
      rule_id: a.ruleId,
      version: a.version,
      targets: a.targets,
      status: a.status,
      description: a.description,
      link: a.link,
      noise_budget: a.noiseBudget ?? null,
      impact: a.impact ?? null,
      requested_by: a.requestedBy,
      decided_by: a.decidedBy,
      decision: a.decision,
      comment: a.comment,
      deployment_ids: a.deploymentIds,
      workflow_id: a.workflowId,
      created_at: a.createdAt.toISOString(),
      decided_at: a.decidedAt?.toISOString() ?? null,
      expires_at: a.expiresAt?.toISOString() ?? null,
      links: { self: `/api/v1/approvals/${a.id}`, deployments: a.deploymentIds.map((d) => `/api/v1/deployments/${d}`), ...(run ? { run } : {}) },
    };
  };
  async function find(tenantId: string, id: string) {
    const [row] = await db.select().from(approvals).where(and(eq(approvals.id, id), eq(approvals.tenantId, tenantId)));
    if (!row) throw notFound(`No approval ${id} in this tenant`);
    return row;
  }
  /** Polls the record until `ready` holds or the seconds run out (long-poll for CI). */
  async function waitFor(tenantId: string, id: string, seconds: number, ready: (a: Row) => boolean) {
    return (await longPoll(() => find(tenantId, id), ready, seconds))!;
  }

  return [
    defineRoute({
      method: 'post',
      path: '/approvals',
      operationId: 'submitApproval',
      summary: 'Submit a change for approval; answers with its impact summary once computed',
      tag: 'approvals',
      permission: 'deploy',
      body: SubmitApprovalBody,
      headers: IdempotencyHeaders,
      responses: {
        202: { description: 'The approval, waiting for a decision (impact included when ready within 15 s)', schema: Approval },
        404: { description: 'No such rule, version or target', schema: ProblemSchema },
        409: { description: 'The Idempotency-Key was used with a different request', schema: ProblemSchema },
      },
      handler: async ({ body, auth, req }) => {
        const submitted = await submitChange(deps, auth, {
          ruleId: body.rule_id,
          version: body.version,
          targets: body.targets,
          approvalRequired: true,
          noiseBudget: body.noise_budget ?? null,
          description: body.description ?? null,
          link: body.link ?? null,
          expiresInMs: isoDurationMs(body.expires_in),
          idempotencyKey: idempotencyKeyOf(req),
          requestBody: body,
        });
        const row = await waitFor(auth.tenantId, submitted.approvalId!, 15, (a) => a.impact !== null);
        return { status: 202, headers: { Location: `/api/v1/approvals/${row.id}` }, body: view(row) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/approvals',
      operationId: 'listApprovals',
      summary: 'Approvals, newest first, filtered by status, rule and target',
      tag: 'approvals',
      permission: 'rules:read',
      query: ApprovalQuery,
      responses: { 200: { description: 'A page of approvals', schema: ApprovalList } },
      handler: async ({ query, auth }) => {
        const rows = await db
          .select()
          .from(approvals)
          .where(
            and(
              eq(approvals.tenantId, auth.tenantId),
              newestFirstAfter(query.cursor, approvals.createdAt, approvals.id),
              query.status ? eq(approvals.status, query.status) : undefined,
              query.rule_id ? eq(approvals.ruleId, query.rule_id.toLowerCase()) : undefined,
              query.target ? sql`${approvals.targets} @> ${JSON.stringify([query.target])}::jsonb` : undefined,
            ),
          )
          .orderBy(desc(approvals.createdAt), desc(approvals.id))
          .limit(query.limit + 1);
        const page = rows.slice(0, query.limit);
        const last = page.at(-1);
        return { status: 200, body: { items: page.map(view), next_cursor: newestFirstCursor(last, rows.length > query.limit) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/approvals/{id}',
      operationId: 'getApproval',
      summary: 'An approval with its impact summary and diff; `?wait=N` long-polls for a decision',
      tag: 'approvals',
      permission: 'rules:read',
      params: UuidParams,
      query: WaitImpact,
      responses: { 200: { description: 'The approval', schema: Approval }, 404: { description: 'No such approval', schema: ProblemSchema } },
      handler: async ({ params, query, auth }) => {
        // A change whose run ended without settling it would otherwise wait for a decision for ever.
        const current = await find(auth.tenantId, params.id);
        if (current.status === 'pending') await settleAbandonedChange(db, deps.temporal.client, current);
        return { status: 200, body: view(await waitFor(auth.tenantId, params.id, query.wait, (a) => a.status !== 'pending')) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/approvals/{id}/decision',
      operationId: 'decideApproval',
      summary: 'Record a decision: approve, reject or request_changes (not by the requester; once)',
      tag: 'approvals',
      permission: 'approve',
      params: UuidParams,
      body: DecisionBody,
      responses: {
        200: { description: 'The decided approval', schema: Approval },
        404: { description: 'No such approval in this tenant', schema: ProblemSchema },
        409: { description: 'The approval is already decided or expired', schema: ProblemSchema },
        503: { description: 'The run did not take the decision in time; retry after Retry-After', schema: ProblemSchema },
      },
      handler: async ({ params, body, auth }) => {
        const row = await find(auth.tenantId, params.id);
        if (row.status !== 'pending') throw conflict(`This approval is already ${row.status}`);
        try {
          await deps.temporal.client.workflow
            .getHandle(row.workflowId)
            .executeUpdate(decideUpdate, { args: [{ decision: body.decision, comment: body.comment ?? null, decidedBy: auth.tokenId }] });
        } catch (err) {
          if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
            if (err.cause.type === FailureType.SelfApproval) throw insufficientScope(err.cause.message);
            if (err.cause.type === FailureType.AlreadyDecided) throw conflict(err.cause.message);
          }
          // The run could not record the decision (its database did not answer): nothing was decided.
          if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ActivityFailure) {
            throw unavailable(`The decision could not be recorded (${err.cause.cause?.message ?? err.cause.message}); nothing was decided, retry`, 5);
          }
          // The run ended (expired) between our read and the update.
          if (err instanceof WorkflowNotFoundError) throw conflict('This approval is no longer waiting for a decision');
          // The run did not take the decision in time (its worker is busy or down). The update may
          // still be applied: a retry then answers 409 and GET shows the decision.
          if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
            throw unavailable('The approval run has not taken the decision yet; retry, or read the approval: a decision it took since shows there', 5);
          }
          throw err;
        }
        return { status: 200, body: view(await find(auth.tenantId, params.id)) };
      },
    }),
  ];
}
