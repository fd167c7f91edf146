import crypto from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ApiDeps } from '../context';
import { startOrJoin } from '../../domain/runs/start-or-join';
import { longPoll } from '../http/long-poll';
import { runLink } from '../context';
import { replays, targets } from '../../db/schema';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { invalidRequest, notFound, resourceLimit } from '../../domain/errors';
import { idempotencyKeyOf } from '../http/idempotency';
import { claimIdempotencyKey } from '../../domain/idempotency';
import { limitsOf } from '../../domain/tenants/resource-limits';
import { UuidParams } from '../settings/schemas';
import { IdempotencyHeaders, WaitQuery, WorkflowStarted } from '../deployments/schemas';
import { Replay, replayProgressQuery, type ReplayInput, type ReplayProgress } from '../../workflows/replay';
import { KIND, RULE_ID, STATUS, TARGET, TENANT, workflowIds } from '../../domain/contracts';
import { Replay as ReplaySchema, ReplayBody } from './schemas';
import { isoDurationToMs } from '../../config/iso-duration';
import { resolveRunRule, resolveRunTarget } from '../../domain/runs/run-request';
import { admitRun, settleEndedRunById } from '../../domain/runs/run-slots';

const DAY_MS = 86_400_000;
/** How long a GET waits for a running replay to answer its progress query before reporting none. */
const PROGRESS_QUERY_MS = 2_000;

export function replayRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const { temporal } = deps;
  const now = deps.now ?? (() => new Date());

  async function replayView(id: string, tenantId: string, withProgress: boolean) {
    const [row] = await db
      .select({ r: replays, targetName: targets.name })
      .from(replays)
      .innerJoin(targets, eq(targets.id, replays.targetId))
      .where(and(eq(replays.id, id), eq(replays.tenantId, tenantId)));
    if (!row) return undefined;
    const r = row.r;
    let progress: ReplayProgress | null = null;
    if (withProgress && r.status === 'running') {
      progress = await temporal.client
        .withDeadline(Date.now() + PROGRESS_QUERY_MS, () => temporal.client.workflow.getHandle(r.workflowId).query(replayProgressQuery))
        .catch(() => null);
    }
    const result = r.result as { chunks?: { done: number; total: number }; events_scanned?: number; alerts?: { total: number }; window_processed?: { to: string } } | null;
    const run = runLink(temporal, r.workflowId, r.runId);
    return {
      id: r.id,
      rule_id: r.ruleId,
      version: r.version,
      target: row.targetName,
      window: { from: r.windowFrom.toISOString(), to: r.windowTo.toISOString() },
      noise_budget: r.noiseBudget ?? null,
      chunk_events: r.chunkEvents,
      status: r.status,
      progress: progress
        ? { chunks_done: progress.chunksDone, chunks_total: progress.chunksTotal, events_scanned: progress.eventsScanned, alerts: progress.alerts, processed_until: progress.processedUntil }
        : result?.chunks
          ? { chunks_done: result.chunks.done, chunks_total: result.chunks.total, events_scanned: result.events_scanned ?? 0, alerts: result.alerts?.total ?? 0, processed_until: result.window_processed?.to ?? r.windowFrom.toISOString() }
          : null,
      result: r.result ?? null,
      error: r.error,
      workflow_id: r.workflowId,
      run_id: r.runId,
      created_at: r.createdAt.toISOString(),
      ended_at: r.endedAt?.toISOString() ?? null,
      links: { self: `/api/v1/replays/${r.id}`, cancel: `/api/v1/replays/${r.id}/cancel`, ...(run ? { run } : {}) },
    };
  }

  /** The window asked for: from/to, or lookback ending now; 400 when malformed, 403 beyond the tier. */
  function windowOf(body: { from?: string | undefined; to?: string | undefined; lookback?: string | undefined }, tierDays: number, tier: string) {
    const at = now();
    let from: Date;
    let to: Date;
    if (body.lookback !== undefined) {
      if (body.from !== undefined || body.to !== undefined) throw invalidRequest('Give from/to or lookback, not both', [{ pointer: '/body/lookback', message: 'conflicts with from/to' }]);
      to = at;
      from = new Date(at.getTime() - isoDurationToMs(body.lookback)!);
    } else {
      if (body.from === undefined || body.to === undefined) {
        throw invalidRequest('A replay needs a window: from and to (RFC 3339), or lookback (ISO 8601 duration)', [{ pointer: body.from === undefined ? '/body/from' : '/body/to', message: 'required unless lookback is given' }]);
      }
      from = new Date(body.from);
      to = new Date(body.to);
      if (from.getTime() >= to.getTime()) throw invalidRequest('from must be before to', [{ pointer: '/body/from', message: 'not before to' }]);
      if (to.getTime() > at.getTime()) throw invalidRequest('A replay covers the past: to may not be in the future (use a shadow evaluation for live data)', [{ pointer: '/body/to', message: 'in the future' }]);
    }
    const days = (to.getTime() - from.getTime()) / DAY_MS;
    if (days > tierDays) throw resourceLimit(`The window is ${Math.round(days * 100) / 100} days; the ${tier} tier replays up to ${tierDays} days`);
    return { from, to };
  }

  return [
    defineRoute({
      method: 'post',
      path: '/rules/replay',
      operationId: 'replayRule',
      summary: 'Replay a rule over a past window of a target (starts Replay): alert volume, noise, latency, cost',
      tag: 'runs',
      permission: 'rules:read',
      body: ReplayBody,
      headers: IdempotencyHeaders,
      responses: {
        202: { description: 'The replay started (or, for a repeated Idempotency-Key, the one it started before)', schema: WorkflowStarted },
        404: { description: 'No such rule, version or target in this tenant', schema: ProblemSchema },
        409: { description: 'The Idempotency-Key was used with a different request', schema: ProblemSchema },
      },
      handler: async ({ body, auth, req }) => {
        const key = idempotencyKeyOf(req);
        const target = await resolveRunTarget(db, deps.siem, auth, body.target);
        const rule = await resolveRunRule(db, deps.siem, auth, body, target.kind);
        const window = windowOf(body, limitsOf(auth).replayWindowDays, auth.tier);
        const replayId = key ? await claimIdempotencyKey(db, auth.tenantId, 'replay', key, body) : crypto.randomUUID();
        const workflowId = workflowIds.replay(auth.tenantId, rule.ruleId, target.name, replayId);

        const [existing] = await db.select({ id: replays.id }).from(replays).where(and(eq(replays.id, replayId), eq(replays.tenantId, auth.tenantId)));
        if (!existing) {
          await admitRun(db, temporal.client, auth, (tx) =>
            tx
              .insert(replays)
              .values({
                id: replayId,
                tenantId: auth.tenantId,
                ruleId: rule.ruleId,
                version: rule.version,
                ruleContent: rule.content,
                targetId: target.id,
                windowFrom: window.from,
                windowTo: window.to,
                noiseBudget: body.noise_budget ?? null,
                chunkEvents: body.chunk_events,
                status: 'running',
                workflowId,
                requestedBy: auth.tokenId,
              })
              .onConflictDoNothing(),
          );
        }
        const [stored] = await db.select().from(replays).where(eq(replays.id, replayId));
        const input: ReplayInput = {
          replayId,
          tenantId: auth.tenantId,
          ruleId: stored!.ruleId,
          targetName: target.name,
          windowFrom: stored!.windowFrom.toISOString(),
          windowTo: stored!.windowTo.toISOString(),
        };
        const runId = await startOrJoin(temporal.client, Replay, {
          workflowId: stored!.workflowId,
          taskQueue: temporal.taskQueue,
          args: [input],
          typedSearchAttributes: [
            { key: TENANT, value: auth.tenantId },
            { key: RULE_ID, value: stored!.ruleId },
            { key: TARGET, value: target.name },
            { key: KIND, value: 'replay' },
            { key: STATUS, value: 'running' },
          ],
        });
        await db.update(replays).set({ runId }).where(eq(replays.id, replayId));
        const view = (await replayView(replayId, auth.tenantId, false))!;
        return {
          status: 202,
          headers: { Location: view.links.self },
          body: { id: view.id, status: view.status, workflow_id: view.workflow_id, run_id: view.run_id, links: view.links },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/replays/{id}',
      operationId: 'getReplay',
      summary: 'A replay: progress while running, then its figures; `?wait=N` long-polls until it ends',
      tag: 'runs',
      permission: 'rules:read',
      params: UuidParams,
      query: WaitQuery,
      responses: {
        200: { description: 'The replay', schema: ReplaySchema },
        404: { description: 'No such replay in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth, req }) => {
        // A run that ended without recording (see run-slots.ts) reads as it ended, and holds no long poll.
        await settleEndedRunById(db, temporal.client, replays, params.id, auth.tenantId);
        const settled = await longPoll(() => replayView(params.id, auth.tenantId, false), (v) => v.status !== 'running', query.wait, () => req.socket.destroyed);
        if (!settled) throw notFound(`No replay ${params.id} in this tenant`);
        const view = settled.status === 'running' ? await replayView(params.id, auth.tenantId, true) : settled;
        return { status: 200, body: view };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/replays/{id}/cancel',
      operationId: 'cancelReplay',
      summary: 'Cancel a running replay; it ends `cancelled` with the figures of the chunks done',
      tag: 'runs',
      permission: 'rules:read',
      params: UuidParams,
      responses: {
        200: { description: 'The replay had already ended; nothing changed', schema: ReplaySchema },
        202: { description: 'Cancellation requested; read the replay back (`?wait=N`) for the partial result', schema: ReplaySchema },
        404: { description: 'No such replay in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const view = await replayView(params.id, auth.tenantId, false);
        if (!view) throw notFound(`No replay ${params.id} in this tenant`);
        if (view.status !== 'running') return { status: 200, body: view };
        try {
          await temporal.client.workflow.getHandle(view.workflow_id).cancel();
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
          // It ended between the read and the request (its own record says how), or ended without
          // recording (see run-slots.ts): either way there is nothing left to cancel.
          await settleEndedRunById(db, temporal.client, replays, params.id, auth.tenantId);
          const ended = await replayView(params.id, auth.tenantId, false);
          if (ended && ended.status !== 'running') return { status: 200, body: ended };
        }
        return { status: 202, headers: { Location: view.links.self }, body: view };
      },
    }),
  ];
}
