import { and, count, eq } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import { unrecordedEnd } from './unrecorded-end';
import type { Db } from '../../db/client';
import { replays, shadowRuns, tenants } from '../../db/schema';
import { type Actor } from '../tenants/actor';
import { resourceLimit } from '../errors';
import { limitsOf } from '../tenants/resource-limits';

/**
 * The slots of a tenant's concurrent replays and shadow evaluations.
 *
 * A run's row reads `running` until its workflow records how it ended. Two things keep that honest:
 * - admission is serialised per tenant (the tenant row is locked while the running rows are counted
 *   and the new row is inserted), so requests arriving together cannot all take the last slot;
 * - a run that ended without recording — terminated or timed out in Temporal (an operator's
 *   Terminate in the Web UI), or never started because Temporal did not answer the start — would
 *   read `running` forever and hold a slot for good, so such rows are settled from Temporal's own
 *   view of the workflow: whenever the tenant is at its limit, and whenever a running run is read.
 */

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
type RunTable = typeof replays | typeof shadowRuns;

export interface RunRow {
  readonly id: string;
  readonly workflowId: string;
  readonly createdAt: Date;
}

/**
 * Settles one `running` row whose workflow can no longer record how it ended: `failed`, with the
 * reason in `error`. Returns whether it changed the row. A row that has meanwhile been recorded
 * is left alone (the update only takes `running` rows).
 */
async function settleEndedRun(db: Db, client: Client, table: RunTable, row: RunRow, now: Date = new Date()): Promise<boolean> {
  const ended = await unrecordedEnd(client, row.workflowId, row.createdAt, now);
  if (ended === undefined) return false;
  const error = `${ended}; its figures are lost`;
  const settled = await db
    .update(table)
    .set({ status: 'failed', error, endedAt: now, updatedAt: now })
    .where(and(eq(table.id, row.id), eq(table.status, 'running')))
    .returning({ id: table.id });
  return settled.length > 0;
}

/** settleEndedRun for the tenant's run `id`, when its row reads `running`. */
export async function settleEndedRunById(db: Db, client: Client, table: RunTable, id: string, tenantId: string): Promise<void> {
  const [row] = await db
    .select({ id: table.id, workflowId: table.workflowId, createdAt: table.createdAt, status: table.status })
    .from(table)
    .where(and(eq(table.id, id), eq(table.tenantId, tenantId)));
  if (row?.status === 'running') await settleEndedRun(db, client, table, row);
}

/** The tenant's running replays and shadow evaluations, together. */
async function runningCount(db: Db | Tx, tenantId: string): Promise<number> {
  // One after the other: inside a transaction both go to the same connection anyway.
  const [r] = await db
    .select({ n: count() })
    .from(replays)
    .where(and(eq(replays.tenantId, tenantId), eq(replays.status, 'running')));
  const [s] = await db
    .select({ n: count() })
    .from(shadowRuns)
    .where(and(eq(shadowRuns.tenantId, tenantId), eq(shadowRuns.status, 'running')));
  return Number(r!.n) + Number(s!.n);
}

/** Settles every running run of the tenant that ended without recording; returns how many. */
export async function settleEndedRuns(db: Db, client: Client, tenantId: string, now: Date = new Date()): Promise<number> {
  const columns = (t: RunTable) => ({ id: t.id, workflowId: t.workflowId, createdAt: t.createdAt });
  const [rs, ss] = await Promise.all([
    db
      .select(columns(replays))
      .from(replays)
      .where(and(eq(replays.tenantId, tenantId), eq(replays.status, 'running'))),
    db
      .select(columns(shadowRuns))
      .from(shadowRuns)
      .where(and(eq(shadowRuns.tenantId, tenantId), eq(shadowRuns.status, 'running'))),
  ]);
  const settled = await Promise.all([...rs.map((row) => settleEndedRun(db, client, replays, row, now)), ...ss.map((row) => settleEndedRun(db, client, shadowRuns, row, now))]);
  return settled.filter(Boolean).length;
}

/**
 * Inserts a new run's row (through `insert`, inside the admission transaction) if the tenant's
 * tier has a free slot; 403 `resource-limit` otherwise. Rows of runs that ended unrecorded are
 * settled first when the tenant looks full.
 */
export async function admitRun(db: Db, client: Client, auth: Pick<Actor, 'tenantId' | 'tier'>, insert: (tx: Tx) => Promise<unknown>): Promise<void> {
  const max = limitsOf(auth).concurrentRuns;
  if (max === null) {
    await db.transaction(async (tx) => {
      await insert(tx);
    });
    return;
  }
  if ((await runningCount(db, auth.tenantId)) >= max) await settleEndedRuns(db, client, auth.tenantId);
  await db.transaction(async (tx) => {
    // Serialises admissions of one tenant: the count below and the insert see no concurrent admission.
    // NO KEY UPDATE: compatible with the KEY SHARE locks other inserts' foreign keys take on the row.
    await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, auth.tenantId)).for('no key update');
    const running = await runningCount(tx, auth.tenantId);
    if (running >= max) throw resourceLimit(`${running} replays and shadow evaluations are running; the ${auth.tier} tier allows ${max} at once`);
    await insert(tx);
  });
}
