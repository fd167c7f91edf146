import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { decodeNewestFirstCursor, newestFirstCursor } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { idempotencyKeyOf } from '../http/idempotency';
import { longPoll } from '../http/long-poll';
import { UuidParams } from '../settings/schemas';
import { IdempotencyHeaders } from '../deployments/schemas';
import { isoDurationMs } from '../../config/iso-duration';
import { submitChange } from '../../domain/changes/submit-change';
import { findApproval, listApprovals, settleIfAbandoned, type ApprovalRecord } from '../../domain/approvals/approvals';
import { decideApproval } from '../../domain/approvals/decide';
import { approvalView } from './approval.view';
import { Approval, ApprovalList, ApprovalQuery, DecisionBody, SubmitApprovalBody, WaitImpact } from './schemas';

/** Approvals: a change waits for a reviewer's decision, which reaches its workflow as an update. */
export function approvalRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const view = (a: ApprovalRecord) => approvalView(deps.temporal, a);
  /** Polls the record until `ready` holds or the seconds run out (long-poll for CI). */
  async function waitFor(tenantId: string, id: string, seconds: number, ready: (a: ApprovalRecord) => boolean) {
    return (await longPoll(() => findApproval(db, tenantId, id), ready, seconds))!;
  }

  return [
    defineRoute({
      method: 'post',
      path: '/approvals',
      operationId: 'submitApproval',
      summary: 'Submit a change for approval; answers with its impact summary once computed',
      tag: 'approvals',
      permission: 'deploy',
      scope: { kind: 'targets', in: 'body', field: 'targets' },
      body: SubmitApprovalBody,
      headers: IdempotencyHeaders,
      responses: {
        200: {
          description: 'An equal change (same rule, version, targets and noise budget) already waits for a decision: that approval, and no second one was made',
          schema: Approval,
        },
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
          noopWhenLive: false,
        });
        const row = await waitFor(auth.tenantId, submitted.approvalId!, 15, (a) => a.impact !== null);
        return { status: submitted.outcome === 'reused' ? 200 : 202, headers: { Location: `/api/v1/approvals/${row.id}` }, body: view(row) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/approvals',
      operationId: 'listApprovals',
      summary: 'Approvals, newest first, filtered by status, rule and target',
      tag: 'approvals',
      permission: 'rules:read',
      scope: { kind: 'list' },
      query: ApprovalQuery,
      responses: { 200: { description: 'A page of approvals', schema: ApprovalList } },
      handler: async ({ query, auth }) => {
        const filter = { status: query.status, ruleId: query.rule_id, target: query.target };
        const page = await listApprovals(db, auth, filter, { limit: query.limit, after: decodeNewestFirstCursor(query.cursor) });
        return { status: 200, body: { items: page.items.map(view), next_cursor: newestFirstCursor(page.next, page.next !== undefined) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/approvals/{id}',
      operationId: 'getApproval',
      summary: 'An approval with its impact summary and diff; `?wait=N` long-polls for a decision',
      tag: 'approvals',
      permission: 'rules:read',
      scope: { kind: 'object', object: 'approval', param: 'id' },
      params: UuidParams,
      query: WaitImpact,
      responses: { 200: { description: 'The approval', schema: Approval }, 404: { description: 'No such approval', schema: ProblemSchema } },
      handler: async ({ params, query, auth }) => {
        await settleIfAbandoned(deps, auth.tenantId, params.id);
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
      scope: { kind: 'object', object: 'approval', param: 'id' },
      params: UuidParams,
      body: DecisionBody,
      responses: {
        200: { description: 'The decided approval', schema: Approval },
        404: { description: 'No such approval in this tenant', schema: ProblemSchema },
        409: { description: 'The approval is already decided or expired', schema: ProblemSchema },
        503: { description: 'The run did not take the decision in time; retry after Retry-After', schema: ProblemSchema },
      },
      handler: async ({ params, body, auth }) => {
        const decided = await decideApproval(deps, auth, params.id, { decision: body.decision, comment: body.comment ?? null });
        return { status: 200, body: view(decided) };
      },
    }),
  ];
}
