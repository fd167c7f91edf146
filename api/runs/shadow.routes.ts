import crypto from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ApiDeps } from '../context';
import { startOrJoin } from '../../domain/runs/start-or-join';
import { longPoll } from '../http/long-poll';
import { runLink } from '../context';
import { shadowRuns, targets } from '../../db/schema';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { invalidRequest, notFound } from '../../domain/errors';
import { idempotencyKeyOf } from '../http/idempotency';
import { claimIdempotencyKey } from '../../domain/idempotency';
import { UuidParams } from '../settings/schemas';
import { IdempotencyHeaders, WaitQuery, WorkflowStarted } from '../deployments/schemas';
import { ShadowEvaluation, shadowProgressQuery, stopShadowSignal, type ShadowInput, type ShadowProgress } from '../../workflows/shadow';
import { KIND, RULE_ID, STATUS, TARGET, TENANT, workflowIds } from '../../domain/contracts';
import { Shadow, ShadowBody } from './schemas';
import { isoDurationToMs } from '../../config/iso-duration';
import { resolveRunRule, resolveRunTarget } from '../../domain/runs/run-request';
import { admitRun, settleEndedRunById } from '../../domain/runs/run-slots';

/** Shadow evaluations are live; the longest one a request may start. */
const MAX_SHADOW_DAYS = 30;
const MIN_INTERVAL_MS = 1_000;
const PROGRESS_QUERY_MS = 2_000;

export function shadowRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const { temporal } = deps;

  async function shadowView(id: string, tenantId: string, withProgress: boolean) {
    const [row] = await db
      .select({ s: shadowRuns, targetName: targets.name })
      .from(shadowRuns)
      .innerJoin(targets, eq(targets.id, shadowRuns.targetId))
      .where(and(eq(shadowRuns.id, id), eq(shadowRuns.tenantId, tenantId)));
    if (!row) return undefined;
    const s = row.s;
    let progress: ShadowProgress | null = null;
    if (withProgress && s.status === 'running') {
      progress = await temporal.client
        .withDeadline(Date.now() + PROGRESS_QUERY_MS, () => temporal.client.workflow.getHandle(s.workflowId).query(shadowProgressQuery))
        .catch(() => null);
    }
    const run = runLink(temporal, s.workflowId, s.runId);
    return {
      id: s.id,
      rule_id: s.ruleId,
      version: s.version,
      target: row.targetName,
      duration: s.duration,
      interval: s.interval,
      status: s.status,
      progress: progress
        ? {
            started_at: progress.startedAt,
            ends_at: progress.endsAt,
            evaluations: progress.evaluations,
            workflow_runs: progress.workflowRuns,
            events_scanned: progress.eventsScanned,
            alerts: progress.matches,
            bytes_scanned: progress.bytesScanned,
          }
        : null,
      result: s.result ?? null,
      error: s.error,
      workflow_id: s.workflowId,
      run_id: s.runId,
      created_at: s.createdAt.toISOString(),
      ended_at: s.endedAt?.toISOString() ?? null,
      links: { self: `/api/v1/shadows/${s.id}`, stop: `/api/v1/shadows/${s.id}/stop`, ...(run ? { run } : {}) },
    };
  }

  return [
    defineRoute({
      method: 'post',
      path: '/rules/shadow',
      operationId: 'shadowRule',
      summary: 'Shadow-evaluate a rule on live data for a duration (starts ShadowEvaluation): projected alerts, latency, cost; no alert is written',
      tag: 'runs',
      permission: 'rules:read',
      body: ShadowBody,
      headers: IdempotencyHeaders,
      responses: {
        202: { description: 'The shadow evaluation started (or, for a repeated Idempotency-Key, the one it started before)', schema: WorkflowStarted },
        404: { description: 'No such rule, version or target in this tenant', schema: ProblemSchema },
        409: { description: 'The Idempotency-Key was used with a different request', schema: ProblemSchema },
      },
      handler: async ({ body, auth, req }) => {
        const key = idempotencyKeyOf(req);
        const target = await resolveRunTarget(db, deps.siem, auth, body.target);
        if (target.kind !== 'local') throw invalidRequest(`Shadow evaluation reads live data from local targets only; ${body.target} is ${target.kind}`, [{ pointer: '/body/target', message: 'unsupported target kind' }]);
        const rule = await resolveRunRule(db, deps.siem, auth, body, target.kind);
        const durationMs = isoDurationToMs(body.duration)!;
        const intervalMs = isoDurationToMs(body.interval)!;
        if (durationMs > MAX_SHADOW_DAYS * 86_400_000) throw invalidRequest(`A shadow evaluation runs at most ${MAX_SHADOW_DAYS} days`, [{ pointer: '/body/duration', message: 'too long' }]);
        if (intervalMs < MIN_INTERVAL_MS) throw invalidRequest('The interval is at least PT1S', [{ pointer: '/body/interval', message: 'too short' }]);
        if (intervalMs > durationMs) throw invalidRequest('The interval may not be longer than the duration', [{ pointer: '/body/interval', message: 'longer than duration' }]);

        const shadowId = key ? await claimIdempotencyKey(db, auth.tenantId, 'shadow', key, body) : crypto.randomUUID();
        const workflowId = workflowIds.shadow(auth.tenantId, rule.ruleId, target.name, shadowId);
        const [existing] = await db.select({ id: shadowRuns.id }).from(shadowRuns).where(and(eq(shadowRuns.id, shadowId), eq(shadowRuns.tenantId, auth.tenantId)));
        if (!existing) {
          await admitRun(db, temporal.client, auth, (tx) =>
            tx
              .insert(shadowRuns)
              .values({
                id: shadowId,
                tenantId: auth.tenantId,
                ruleId: rule.ruleId,
                version: rule.version,
                ruleContent: rule.content,
                targetId: target.id,
                duration: body.duration,
                interval: body.interval,
                status: 'running',
                workflowId,
                requestedBy: auth.tokenId,
              })
              .onConflictDoNothing(),
          );
        }
        const input: ShadowInput = {
          shadowId,
          tenantId: auth.tenantId,
          ruleId: rule.ruleId,
          targetName: target.name,
          durationMs,
          intervalMs,
          continueAsNewAfter: body.continue_as_new_after,
        };
        const runId = await startOrJoin(temporal.client, ShadowEvaluation, {
          workflowId,
          taskQueue: temporal.taskQueue,
          args: [input],
          typedSearchAttributes: [
            { key: TENANT, value: auth.tenantId },
            { key: RULE_ID, value: rule.ruleId },
            { key: TARGET, value: target.name },
            { key: KIND, value: 'shadow' },
            { key: STATUS, value: 'running' },
          ],
        });
        // The first run's id: continue-as-new adds runs under the same workflow id.
        await db.update(shadowRuns).set({ runId }).where(and(eq(shadowRuns.id, shadowId), eq(shadowRuns.tenantId, auth.tenantId)));
        const view = (await shadowView(shadowId, auth.tenantId, false))!;
        return {
          status: 202,
          headers: { Location: view.links.self },
          body: { id: view.id, status: view.status, workflow_id: view.workflow_id, run_id: view.run_id, links: view.links },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/shadows/{id}',
      operationId: 'getShadow',
      summary: 'A shadow evaluation: progress while running, then its figures; `?wait=N` long-polls until it ends',
      tag: 'runs',
      permission: 'rules:read',
      params: UuidParams,
      query: WaitQuery,
      responses: {
        200: { description: 'The shadow evaluation', schema: Shadow },
        404: { description: 'No such shadow evaluation in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth, req }) => {
        // A run that ended without recording (see run-slots.ts) reads as it ended, and holds no long poll.
        await settleEndedRunById(db, temporal.client, shadowRuns, params.id, auth.tenantId);
        const settled = await longPoll(() => shadowView(params.id, auth.tenantId, false), (v) => v.status !== 'running', query.wait, () => req.socket.destroyed);
        if (!settled) throw notFound(`No shadow evaluation ${params.id} in this tenant`);
        const view = settled.status === 'running' ? await shadowView(params.id, auth.tenantId, true) : settled;
        return { status: 200, body: view };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/shadows/{id}/stop',
      operationId: 'stopShadow',
      summary: 'Stop a shadow evaluation early; it evaluates what was ingested up to now and ends `completed` with `stopped_early`',
      tag: 'runs',
      permission: 'rules:read',
      params: UuidParams,
      responses: {
        200: { description: 'The shadow evaluation had already ended; nothing changed', schema: Shadow },
        202: { description: 'Stop requested; read it back (`?wait=N`) for the result', schema: Shadow },
        404: { description: 'No such shadow evaluation in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const view = await shadowView(params.id, auth.tenantId, false);
        if (!view) throw notFound(`No shadow evaluation ${params.id} in this tenant`);
        if (view.status !== 'running') return { status: 200, body: view };
        try {
          await temporal.client.workflow.getHandle(view.workflow_id).signal(stopShadowSignal);
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
          // It ended between the read and the request (its own record says how), or ended without
          // recording (see run-slots.ts): either way there is nothing left to stop.
          await settleEndedRunById(db, temporal.client, shadowRuns, params.id, auth.tenantId);
          const ended = await shadowView(params.id, auth.tenantId, false);
          if (ended && ended.status !== 'running') return { status: 200, body: ended };
        }
        return { status: 202, headers: { Location: view.links.self }, body: view };
      },
    }),
  ];
}
