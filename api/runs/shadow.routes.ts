import type { ApiDeps } from '../context';
import { longPoll } from '../http/long-poll';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { idempotencyKeyOf } from '../http/idempotency';
import { UuidParams } from '../settings/schemas';
import { IdempotencyHeaders, WaitQuery, WorkflowStarted } from '../deployments/schemas';
import { decodeNewestFirstCursor, newestFirstCursor } from '../http/pagination';
import { listShadows, readShadow, startShadow, stopShadow } from '../../domain/runs/shadows';
import { RunListQuery, Shadow, ShadowBody, ShadowList } from './schemas';
import { shadowView } from './shadow.view';
import { runStartedView } from './run-started.view';

export function shadowRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/rules/shadow',
      operationId: 'shadowRule',
      summary: 'Shadow-evaluate a rule on live data for a duration (starts ShadowEvaluation): projected alerts, latency, cost; no alert is written',
      tag: 'runs',
      permission: 'rules:read',
      scope: { kind: 'targets', in: 'body', field: 'target' },
      body: ShadowBody,
      headers: IdempotencyHeaders,
      responses: {
        202: { description: 'The shadow evaluation started (or, for a repeated Idempotency-Key, the one it started before)', schema: WorkflowStarted },
        404: { description: 'No such rule, version or target in this tenant', schema: ProblemSchema },
        409: { description: 'The Idempotency-Key was used with a different request', schema: ProblemSchema },
      },
      handler: async ({ body, auth, req }) => {
        const idempotencyKey = idempotencyKeyOf(req);
        const started = await startShadow(deps, auth, {
          rule: { rule_id: body.rule_id, version: body.version, rule: body.rule },
          target: body.target,
          duration: body.duration,
          interval: body.interval,
          continueAsNewAfter: body.continue_as_new_after,
          idempotencyKey,
          requestBody: body,
        });
        const view = shadowView(deps.temporal, started);
        return { status: 202, headers: { Location: view.links.self }, body: runStartedView(view) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/shadows',
      operationId: 'listShadows',
      summary: 'Shadow evaluations, newest first, filtered by status and rule; the running ones with their progress',
      tag: 'runs',
      permission: 'rules:read',
      scope: { kind: 'list' },
      query: RunListQuery,
      responses: { 200: { description: 'A page of shadow evaluations', schema: ShadowList } },
      handler: async ({ query, auth }) => {
        const page = await listShadows(deps, auth, { status: query.status, ruleId: query.rule_id }, { limit: query.limit, after: decodeNewestFirstCursor(query.cursor) });
        const last = page.items.at(-1)?.shadow;
        return { status: 200, body: { items: page.items.map((s) => shadowView(deps.temporal, s)), next_cursor: newestFirstCursor(last, page.next !== undefined) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/shadows/{id}',
      operationId: 'getShadow',
      summary: 'A shadow evaluation: progress while running, then its figures; `?wait=N` long-polls until it ends',
      tag: 'runs',
      permission: 'rules:read',
      scope: { kind: 'object', object: 'shadow', param: 'id' },
      params: UuidParams,
      query: WaitQuery,
      responses: {
        200: { description: 'The shadow evaluation', schema: Shadow },
        404: { description: 'No such shadow evaluation in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth, req }) => {
        const shadow = await readShadow(deps, auth, params.id, (read, ended) => longPoll(read, ended, query.wait, () => req.socket.destroyed));
        return { status: 200, body: shadowView(deps.temporal, shadow) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/shadows/{id}/stop',
      operationId: 'stopShadow',
      summary: 'Stop a shadow evaluation early; it evaluates what was ingested up to now and ends `completed` with `stopped_early`',
      tag: 'runs',
      permission: 'rules:write',
      scope: { kind: 'object', object: 'shadow', param: 'id' },
      params: UuidParams,
      responses: {
        200: { description: 'The shadow evaluation had already ended; nothing changed', schema: Shadow },
        202: { description: 'Stop requested; read it back (`?wait=N`) for the result', schema: Shadow },
        404: { description: 'No such shadow evaluation in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const { record, stopping } = await stopShadow(deps, auth, params.id);
        const view = shadowView(deps.temporal, record);
        return stopping ? { status: 202, headers: { Location: view.links.self }, body: view } : { status: 200, body: view };
      },
    }),
  ];
}
