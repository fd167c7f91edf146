import type { ApiDeps } from '../context';
import { longPoll } from '../http/long-poll';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { idempotencyKeyOf } from '../http/idempotency';
import { UuidParams } from '../settings/schemas';
import { IdempotencyHeaders, WaitQuery, WorkflowStarted } from '../deployments/schemas';
import { decodeNewestFirstCursor, newestFirstCursor } from '../http/pagination';
import { cancelReplay, listReplays, readReplay, startReplay } from '../../domain/runs/replays';
import { Replay as ReplaySchema, ReplayBody, ReplayList, RunListQuery } from './schemas';
import { replayView } from './replay.view';
import { runStartedView } from './run-started.view';

export function replayRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/rules/replay',
      operationId: 'replayRule',
      summary: 'Replay a rule over a past window of a target (starts Replay): alert volume, noise, latency, cost',
      tag: 'runs',
      permission: 'rules:read',
      scope: { kind: 'targets', in: 'body', field: 'target' },
      body: ReplayBody,
      headers: IdempotencyHeaders,
      responses: {
        202: { description: 'The replay started (or, for a repeated Idempotency-Key, the one it started before)', schema: WorkflowStarted },
        404: { description: 'No such rule, version or target in this tenant', schema: ProblemSchema },
        409: { description: 'The Idempotency-Key was used with a different request', schema: ProblemSchema },
      },
      handler: async ({ body, auth, req }) => {
        const idempotencyKey = idempotencyKeyOf(req);
        const started = await startReplay(deps, auth, {
          rule: { rule_id: body.rule_id, version: body.version, rule: body.rule },
          target: body.target,
          window: { from: body.from, to: body.to, lookback: body.lookback },
          noiseBudget: body.noise_budget ?? null,
          chunkEvents: body.chunk_events,
          idempotencyKey,
          requestBody: body,
        });
        const view = replayView(deps.temporal, started);
        return { status: 202, headers: { Location: view.links.self }, body: runStartedView(view) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/replays',
      operationId: 'listReplays',
      summary: 'Replays, newest first, filtered by status and rule; the running ones with their progress',
      tag: 'runs',
      permission: 'rules:read',
      scope: { kind: 'list' },
      query: RunListQuery,
      responses: { 200: { description: 'A page of replays', schema: ReplayList } },
      handler: async ({ query, auth }) => {
        const page = await listReplays(deps, auth, { status: query.status, ruleId: query.rule_id }, { limit: query.limit, after: decodeNewestFirstCursor(query.cursor) });
        const last = page.items.at(-1)?.replay;
        return { status: 200, body: { items: page.items.map((r) => replayView(deps.temporal, r)), next_cursor: newestFirstCursor(last, page.next !== undefined) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/replays/{id}',
      operationId: 'getReplay',
      summary: 'A replay: progress while running, then its figures; `?wait=N` long-polls until it ends',
      tag: 'runs',
      permission: 'rules:read',
      scope: { kind: 'object', object: 'replay', param: 'id' },
      params: UuidParams,
      query: WaitQuery,
      responses: {
        200: { description: 'The replay', schema: ReplaySchema },
        404: { description: 'No such replay in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth, req }) => {
        const replay = await readReplay(deps, auth, params.id, (read, ended) => longPoll(read, ended, query.wait, () => req.socket.destroyed));
        return { status: 200, body: replayView(deps.temporal, replay) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/replays/{id}/cancel',
      operationId: 'cancelReplay',
      summary: 'Cancel a running replay; it ends `cancelled` with the figures of the chunks done',
      tag: 'runs',
      permission: 'rules:write',
      scope: { kind: 'object', object: 'replay', param: 'id' },
      params: UuidParams,
      responses: {
        200: { description: 'The replay had already ended; nothing changed', schema: ReplaySchema },
        202: { description: 'Cancellation requested; read the replay back (`?wait=N`) for the partial result', schema: ReplaySchema },
        404: { description: 'No such replay in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const { record, cancelling } = await cancelReplay(deps, auth, params.id);
        const view = replayView(deps.temporal, record);
        return cancelling ? { status: 202, headers: { Location: view.links.self }, body: view } : { status: 200, body: view };
      },
    }),
  ];
}
