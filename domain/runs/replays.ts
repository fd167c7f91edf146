import crypto from 'node:crypto';
import { and, desc, eq } from 'drizzle-orm';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Db } from '../../db/client';
import { replays, targets } from '../../db/schema';
import type { Replay, ReplayInput, ReplayProgress } from '../../workflows/replay';
import type { DomainDeps } from '../deps';
import { notFound } from '../errors';
import { claimIdempotencyKey } from '../idempotency';
import { KIND, RULE_ID, STATUS, TARGET, TENANT, WorkflowType, workflowIds } from '../../workflows/contracts';
import type { NoiseBudgetPolicy, RunStatus } from '../statuses';
import { newestFirstAfter, type NewestFirstKey } from '../paging';
import { inActorEnvironments } from '../tenants/scope';
import type { Actor } from '../tenants/actor';
import { limitsOf } from '../tenants/resource-limits';
import { replayWindow, type WindowRequest } from './replay-window';
import { queryProgress, readOnce, type WaitForRun } from './run-progress';
import { RunQuery } from '../../workflows/contracts';
import { resolveRunRule, resolveRunTarget, type RunRuleChoice } from './run-request';
import { admitRun, settleEndedRunById, settleEndedRuns } from './run-slots';
import { startOrJoin } from './start-or-join';
import { replayRunMetadata, sigmaTitle } from '../../workflows/run-summaries';

export type ReplayRequest = {
  rule: RunRuleChoice;
  target: string;
  window: WindowRequest;
  noiseBudget: NoiseBudgetPolicy | null;
  chunkEvents: number;
  idempotencyKey: string | undefined;
  /** What the Idempotency-Key is checked against: the same key with another body is a conflict. */
  requestBody: unknown;
};

/** A replay as recorded, with its target's name and, while it runs and when asked for, what the run says of its progress. */
export type ReplayRecord = { replay: typeof replays.$inferSelect; targetName: string; progress: ReplayProgress | null };

async function findReplay(db: Db, client: Client, id: string, tenantId: string, withProgress: boolean): Promise<ReplayRecord | undefined> {
  const [row] = await db
    .select({ r: replays, targetName: targets.name })
    .from(replays)
    .innerJoin(targets, eq(targets.id, replays.targetId))
    .where(and(eq(replays.id, id), eq(replays.tenantId, tenantId)));
  if (!row) return undefined;
  const progress = withProgress && row.r.status === 'running' ? await queryProgress<ReplayProgress>(client, row.r.workflowId, RunQuery.replayProgress) : null;
  return { replay: row.r, targetName: row.targetName, progress };
}

/**
 * Replays a rule over a past window of a target: resolves the target and the rule (a stored version
 * or inline text), checks the window against the tier, admits the run against the tenant's
 * concurrent runs, records it and starts Replay. Idempotent under an Idempotency-Key.
 */
export async function startReplay(deps: DomainDeps, auth: Actor, request: ReplayRequest): Promise<ReplayRecord> {
  const { db } = deps.database;
  const { temporal } = deps;
  const now = deps.now ?? (() => new Date());
  const target = await resolveRunTarget(db, deps.siem, auth, request.target);
  const rule = await resolveRunRule(db, deps.siem, auth, request.rule, target);
  const window = replayWindow(request.window, now(), limitsOf(auth).replayWindowDays, auth.tier);
  const replayId = request.idempotencyKey ? await claimIdempotencyKey(db, auth.tenantId, 'replay', request.idempotencyKey, request.requestBody) : crypto.randomUUID();
  const workflowId = workflowIds.replay(auth.tenantId, rule.ruleId, target.name, replayId);

  const [existing] = await db
    .select({ id: replays.id })
    .from(replays)
    .where(and(eq(replays.id, replayId), eq(replays.tenantId, auth.tenantId)));
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
          noiseBudget: request.noiseBudget,
          chunkEvents: request.chunkEvents,
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
  const runId = await startOrJoin<typeof Replay>(temporal.client, WorkflowType.Replay, {
    workflowId: stored!.workflowId,
    taskQueue: temporal.taskQueue,
    args: [input],
    ...replayRunMetadata({ ...input, title: sigmaTitle(rule.content), version: rule.version, requestedBy: auth.principal }),
    typedSearchAttributes: [
      { key: TENANT, value: auth.tenantId },
      { key: RULE_ID, value: stored!.ruleId },
      { key: TARGET, value: target.name },
      { key: KIND, value: 'replay' },
      { key: STATUS, value: 'running' },
    ],
  });
  await db.update(replays).set({ runId }).where(eq(replays.id, replayId));
  return (await findReplay(db, temporal.client, replayId, auth.tenantId, false))!;
}

/**
 * The tenant's replay `id`: once it has ended (as long as `waitForEnd` waits), or while it runs
 * with what the run says of its progress. 404 when there is none.
 */
export async function readReplay(deps: DomainDeps, auth: Actor, id: string, waitForEnd: WaitForRun = readOnce): Promise<ReplayRecord> {
  const { db } = deps.database;
  const { client } = deps.temporal;
  // A run that ended without recording (see run-slots.ts) reads as it ended, and holds no long poll.
  await settleEndedRunById(db, client, replays, id, auth.tenantId);
  const settled = await waitForEnd(
    () => findReplay(db, client, id, auth.tenantId, false),
    (r) => r.replay.status !== 'running',
  );
  if (!settled) throw notFound(`No replay ${id} in this tenant`);
  if (settled.replay.status !== 'running') return settled;
  const running = await findReplay(db, client, id, auth.tenantId, true);
  if (!running) throw notFound(`No replay ${id} in this tenant`);
  return running;
}

/** What a cancel did: `cancelling` when the run was asked to stop; otherwise it had already ended and nothing changed. */
export type ReplayCancel = { record: ReplayRecord; cancelling: boolean };

/** Cancels the tenant's running replay `id`; it ends `cancelled` with the figures of the chunks done. 404 when there is none. */
export async function cancelReplay(deps: DomainDeps, auth: Actor, id: string): Promise<ReplayCancel> {
  const { db } = deps.database;
  const { client } = deps.temporal;
  const found = await findReplay(db, client, id, auth.tenantId, false);
  if (!found) throw notFound(`No replay ${id} in this tenant`);
  if (found.replay.status !== 'running') return { record: found, cancelling: false };
  try {
    await client.workflow.getHandle(found.replay.workflowId).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // It ended between the read and the request (its own record says how), or ended without
    // recording (see run-slots.ts): either way there is nothing left to cancel.
    await settleEndedRunById(db, client, replays, id, auth.tenantId);
    const ended = await findReplay(db, client, id, auth.tenantId, false);
    if (ended && ended.replay.status !== 'running') return { record: ended, cancelling: false };
  }
  return { record: found, cancelling: true };
}

/** What a list of runs may be narrowed to. */
export type RunFilter = { status?: RunStatus; ruleId?: string };

/**
 * The tenant's replays in the actor's environments, newest first, filtered by status and rule; the
 * running ones with what their run says of its progress. Runs that ended without recording are
 * settled first, so none reads `running` for ever.
 */
export async function listReplays(
  deps: DomainDeps,
  auth: Actor,
  filter: RunFilter,
  page: { limit: number; after: NewestFirstKey | undefined },
): Promise<{ items: ReplayRecord[]; next: NewestFirstKey | undefined }> {
  const { db } = deps.database;
  const { client } = deps.temporal;
  await settleEndedRuns(db, client, auth.tenantId);
  const rows = await db
    .select({ r: replays, targetName: targets.name })
    .from(replays)
    .innerJoin(targets, eq(targets.id, replays.targetId))
    .where(
      and(
        eq(replays.tenantId, auth.tenantId),
        inActorEnvironments(auth, targets.environment),
        newestFirstAfter(page.after, replays.createdAt, replays.id),
        filter.status ? eq(replays.status, filter.status) : undefined,
        filter.ruleId ? eq(replays.ruleId, filter.ruleId.toLowerCase()) : undefined,
      ),
    )
    .orderBy(desc(replays.createdAt), desc(replays.id))
    .limit(page.limit + 1);
  const items = await Promise.all(
    rows.slice(0, page.limit).map(async (row) => ({
      replay: row.r,
      targetName: row.targetName,
      progress: row.r.status === 'running' ? await queryProgress<ReplayProgress>(client, row.r.workflowId, RunQuery.replayProgress) : null,
    })),
  );
  const last = items.at(-1)?.replay;
  return { items, next: rows.length > page.limit && last ? { createdAt: last.createdAt, id: last.id } : undefined };
}
