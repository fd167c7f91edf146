import crypto from 'node:crypto';
import { and, desc, eq } from 'drizzle-orm';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Db } from '../../db/client';
import { shadowRuns, targets } from '../../db/schema';
import type { ShadowEvaluation, ShadowInput, ShadowProgress } from '../../workflows/shadow';
import type { DomainDeps } from '../deps';
import { invalidRequest, notFound } from '../errors';
import { claimIdempotencyKey } from '../idempotency';
import { KIND, RULE_ID, STATUS, TARGET, TENANT, WorkflowType, workflowIds } from '../../workflows/contracts';
import type { Actor } from '../tenants/actor';
import { inActorEnvironments } from '../tenants/scope';
import { newestFirstAfter, type NewestFirstKey } from '../paging';
import type { RunFilter } from './replays';
import { queryProgress, readOnce, type WaitForRun } from './run-progress';
import { RunQuery, RunSignal } from '../../workflows/contracts';
import { adapterForRequest } from '../targets/target-adapter';
import { resolveRunRule, resolveRunTarget, type RunRuleChoice } from './run-request';
import { admitRun, settleEndedRunById, settleEndedRuns } from './run-slots';
import { shadowTiming } from './shadow-timing';
import { startOrJoin } from './start-or-join';
import { shadowRunMetadata, sigmaTitle } from '../../workflows/run-summaries';

export type ShadowRequest = {
  rule: RunRuleChoice;
  target: string;
  /** ISO 8601 durations: how long it runs, how often it evaluates. */
  duration: string;
  interval: string;
  continueAsNewAfter: number;
  idempotencyKey: string | undefined;
  /** What the Idempotency-Key is checked against: the same key with another body is a conflict. */
  requestBody: unknown;
};

/** A shadow evaluation as recorded, with its target's name and, while it runs and when asked for, what the run says of its progress. */
export type ShadowRecord = { shadow: typeof shadowRuns.$inferSelect; targetName: string; progress: ShadowProgress | null };

async function findShadow(db: Db, client: Client, id: string, tenantId: string, withProgress: boolean): Promise<ShadowRecord | undefined> {
  const [row] = await db
    .select({ s: shadowRuns, targetName: targets.name })
    .from(shadowRuns)
    .innerJoin(targets, eq(targets.id, shadowRuns.targetId))
    .where(and(eq(shadowRuns.id, id), eq(shadowRuns.tenantId, tenantId)));
  if (!row) return undefined;
  const progress = withProgress && row.s.status === 'running' ? await queryProgress<ShadowProgress>(client, row.s.workflowId, RunQuery.shadowProgress) : null;
  return { shadow: row.s, targetName: row.targetName, progress };
}

/**
 * Shadow-evaluates a rule on a target's live data for a while (no alert is written): resolves the
 * target (local ones only: they have live data here) and the rule, checks the duration and the
 * interval, admits the run against the tenant's concurrent runs, records it and starts
 * ShadowEvaluation. Idempotent under an Idempotency-Key.
 */
export async function startShadow(deps: DomainDeps, auth: Actor, request: ShadowRequest): Promise<ShadowRecord> {
  const { db } = deps.database;
  const { temporal } = deps;
  const target = await resolveRunTarget(db, deps.siem, auth, request.target);
  if (!adapterForRequest(deps.siem, target, '/body/target').capabilities().liveEvaluation)
    throw invalidRequest(`Shadow evaluation reads live data; ${target.kind} targets such as ${request.target} cannot evaluate it`, [
      { pointer: '/body/target', message: 'no live evaluation on this kind' },
    ]);
  const rule = await resolveRunRule(db, deps.siem, auth, request.rule, target);
  const { durationMs, intervalMs } = shadowTiming(request.duration, request.interval);

  const shadowId = request.idempotencyKey ? await claimIdempotencyKey(db, auth.tenantId, 'shadow', request.idempotencyKey, request.requestBody) : crypto.randomUUID();
  const workflowId = workflowIds.shadow(auth.tenantId, rule.ruleId, target.name, shadowId);
  const [existing] = await db
    .select({ id: shadowRuns.id })
    .from(shadowRuns)
    .where(and(eq(shadowRuns.id, shadowId), eq(shadowRuns.tenantId, auth.tenantId)));
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
          duration: request.duration,
          interval: request.interval,
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
    continueAsNewAfter: request.continueAsNewAfter,
  };
  const runId = await startOrJoin<typeof ShadowEvaluation>(temporal.client, WorkflowType.ShadowEvaluation, {
    workflowId,
    taskQueue: temporal.taskQueue,
    args: [input],
    ...shadowRunMetadata({
      ...input,
      title: sigmaTitle(rule.content),
      version: rule.version,
      duration: request.duration,
      interval: request.interval,
      requestedBy: auth.principal,
    }),
    typedSearchAttributes: [
      { key: TENANT, value: auth.tenantId },
      { key: RULE_ID, value: rule.ruleId },
      { key: TARGET, value: target.name },
      { key: KIND, value: 'shadow' },
      { key: STATUS, value: 'running' },
    ],
  });
  // The first run's id: continue-as-new adds runs under the same workflow id.
  await db
    .update(shadowRuns)
    .set({ runId })
    .where(and(eq(shadowRuns.id, shadowId), eq(shadowRuns.tenantId, auth.tenantId)));
  return (await findShadow(db, temporal.client, shadowId, auth.tenantId, false))!;
}

/**
 * The tenant's shadow evaluation `id`: once it has ended (as long as `waitForEnd` waits), or while
 * it runs with what the run says of its progress. 404 when there is none.
 */
export async function readShadow(deps: DomainDeps, auth: Actor, id: string, waitForEnd: WaitForRun = readOnce): Promise<ShadowRecord> {
  const { db } = deps.database;
  const { client } = deps.temporal;
  // A run that ended without recording (see run-slots.ts) reads as it ended, and holds no long poll.
  await settleEndedRunById(db, client, shadowRuns, id, auth.tenantId);
  const settled = await waitForEnd(
    () => findShadow(db, client, id, auth.tenantId, false),
    (s) => s.shadow.status !== 'running',
  );
  if (!settled) throw notFound(`No shadow evaluation ${id} in this tenant`);
  if (settled.shadow.status !== 'running') return settled;
  const running = await findShadow(db, client, id, auth.tenantId, true);
  if (!running) throw notFound(`No shadow evaluation ${id} in this tenant`);
  return running;
}

/** What a stop did: `stopping` when the run was asked to stop; otherwise it had already ended and nothing changed. */
export type ShadowStop = { record: ShadowRecord; stopping: boolean };

/**
 * Stops the tenant's running shadow evaluation `id` early; it evaluates what was ingested up to now
 * and ends `completed` with `stopped_early`. 404 when there is none.
 */
export async function stopShadow(deps: DomainDeps, auth: Actor, id: string): Promise<ShadowStop> {
  const { db } = deps.database;
  const { client } = deps.temporal;
  const found = await findShadow(db, client, id, auth.tenantId, false);
  if (!found) throw notFound(`No shadow evaluation ${id} in this tenant`);
  if (found.shadow.status !== 'running') return { record: found, stopping: false };
  try {
    await client.workflow.getHandle(found.shadow.workflowId).signal(RunSignal.stopShadow);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // It ended between the read and the request (its own record says how), or ended without
    // recording (see run-slots.ts): either way there is nothing left to stop.
    await settleEndedRunById(db, client, shadowRuns, id, auth.tenantId);
    const ended = await findShadow(db, client, id, auth.tenantId, false);
    if (ended && ended.shadow.status !== 'running') return { record: ended, stopping: false };
  }
  return { record: found, stopping: true };
}

/**
 * The tenant's shadow evaluations in the actor's environments, newest first, filtered by status and
 * rule; the running ones with what their run says of its progress (see listReplays).
 */
export async function listShadows(
  deps: DomainDeps,
  auth: Actor,
  filter: RunFilter,
  page: { limit: number; after: NewestFirstKey | undefined },
): Promise<{ items: ShadowRecord[]; next: NewestFirstKey | undefined }> {
  const { db } = deps.database;
  const { client } = deps.temporal;
  await settleEndedRuns(db, client, auth.tenantId);
  const rows = await db
    .select({ s: shadowRuns, targetName: targets.name })
    .from(shadowRuns)
    .innerJoin(targets, eq(targets.id, shadowRuns.targetId))
    .where(
      and(
        eq(shadowRuns.tenantId, auth.tenantId),
        inActorEnvironments(auth, targets.environment),
        newestFirstAfter(page.after, shadowRuns.createdAt, shadowRuns.id),
        filter.status ? eq(shadowRuns.status, filter.status) : undefined,
        filter.ruleId ? eq(shadowRuns.ruleId, filter.ruleId.toLowerCase()) : undefined,
      ),
    )
    .orderBy(desc(shadowRuns.createdAt), desc(shadowRuns.id))
    .limit(page.limit + 1);
  const items = await Promise.all(
    rows.slice(0, page.limit).map(async (row) => ({
      shadow: row.s,
      targetName: row.targetName,
      progress: row.s.status === 'running' ? await queryProgress<ShadowProgress>(client, row.s.workflowId, RunQuery.shadowProgress) : null,
    })),
  );
  const last = items.at(-1)?.shadow;
  return { items, next: rows.length > page.limit && last ? { createdAt: last.createdAt, id: last.id } : undefined };
}
