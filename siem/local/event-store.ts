import { randomUUID } from 'node:crypto';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { RuleLogsource as Logsource, TimeWindow, WindowChunk } from '../adapter';
import { exec, rows as queryRows, transaction } from './duckdb';
import { requireText } from './event-sql';
import { chunksOf, countEvents, eventsSince, fieldPresence, hourlyEventCounts, readCommittedCursor, searchEvents, tenantStats, type FieldPresence } from './event-queries';
import { existsExpression, fieldExpression, PROMOTED_FIELDS } from './fields';
import { dropLeftoverFixtures, withFixtureTable } from './fixture-tables';
import { GroupCommitQueue, type GroupWriter } from './group-commit';
import { stageSource } from './ingest-stage';
import { batchLogsources, createStageSql, dropStageSql, stageTable, writeBatch, writeBatches, type BatchWrite, type IngestJob } from './ingest-write';
import { deleteEventsBefore, retentionCutoff } from './retention';
import { rulesetSince, type LocalRuleset, type RulesetScanOptions, type ScanMember } from './ruleset-scan';
import { adoptUntargetedEvents, backfillEventHours, createOrUpgradeTables, untargetedEventsPending } from './store-migrations';
import { DEFAULT_MAX_EVENT_BYTES, IngestBacklogFull, type IngestSource } from './sources';
import type { FixtureTable, IngestOptions, IngestResult, LineError, LocalEventStoreOptions, SinceResult, TenantStats, WindowCount, WindowSearch } from './store-types';

export { IngestBacklogFull, IngestSourceError, type IngestSource } from './sources';
export { EventStoreQueryError } from './duckdb';
export type { DayCount, RuleLogsource as Logsource, TimeWindow, WindowChunk } from '../adapter';
export type {
  FixtureTable,
  IngestOptions,
  IngestResult,
  LineError,
  LocalEventStoreOptions,
  LogsourceCount,
  LogsourceValue,
  SinceResult,
  StoredEvent,
  TenantStats,
  WindowCount,
  WindowSearch,
} from './store-types';

const DEFAULT_MAX_ERRORS = 1000;
/** Logsources an ingest result lists (most events first; the one without a logsource always). */
export const MAX_REPORTED_LOGSOURCES = 100;
/** Reader connections kept open between calls; more concurrent readers get fresh ones. */
const MAX_IDLE_READERS = 4;
/** DuckDB's row group: a transaction appending at least this many rows skips the write-ahead log. */
const ROW_GROUP_ROWS = 122_880;
const DEFAULT_GROUP_COMMIT_WAIT_MS = 1000;
/** Batches under way at once before more are refused (LocalEventStoreOptions.maxPendingBatches). */
export const DEFAULT_MAX_PENDING_BATCHES = 32;

/**
 * The `local` target kind's event store: one DuckDB database holding the events of every local
 * target of every tenant. An event belongs to the target it was sent to, and every read names the
 * tenant and the target (the service's target id): a rule on one target never sees another's events.
 *
 * Writes (ingestion, retention) go through one connection, one at a time, so that cursor values
 * (`seq`) are assigned and committed in the same order: a reader that has seen cursor N has seen
 * every event with seq ≤ N. Reads open their own connection and run in parallel with writes
 * (DuckDB's MVCC gives each a consistent snapshot).
 *
 * WHERE expressions passed to count/search/since/matching are SQL produced by the rule compiler
 * over `fieldExpression`; they are trusted code, never user text.
 */
export class LocalEventStore {
  /** The writer's queue: exclusive writes, and ingest batches committed in groups. */
  private readonly writes: GroupCommitQueue<IngestJob, BatchWrite>;
  private closed = false;
  /** Reader connections between calls: a replay makes one count call per chunk. */
  private readonly idleReaders: DuckDBConnection[] = [];
  /** Store-wide cursor after the last batch this writer committed (see cursor()). */
  private committedCursor: number | undefined;
  /** Ingest calls under way (reading their batch, or writing it): close() lets them finish. */
  private readonly ingesting = new Set<Promise<unknown>>();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    groupCommitWaitMs: number,
    private readonly maxPendingBatches: number,
  ) {
    this.writes = new GroupCommitQueue(this.groupWriter(), { fullGroupRows: ROW_GROUP_ROWS, maxWaitMs: groupCommitWaitMs });
  }

  static async open(options: LocalEventStoreOptions): Promise<LocalEventStore> {
    const config: Record<string, string> = {};
    if (options.memoryLimit) config.memory_limit = options.memoryLimit;
    if (options.threads !== undefined) config.threads = String(options.threads);
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(options.path, config);
    } catch (e) {
      throw new Error(`cannot open the local event store at ${options.path}: ${(e as Error).message}`, { cause: e });
    }
    const writer = await instance.connect();
    // Event times are UTC; TIMESTAMPTZ → TIMESTAMP casts follow the session time zone.
    await writer.run(`SET GLOBAL TimeZone = 'UTC'`);
    await createOrUpgradeTables(writer);
    const store = new LocalEventStore(instance, writer, options.groupCommitWaitMs ?? DEFAULT_GROUP_COMMIT_WAIT_MS, options.maxPendingBatches ?? DEFAULT_MAX_PENDING_BATCHES);
    await dropLeftoverFixtures(writer);
    await backfillEventHours(writer);
    return store;
  }

  /** Closes the database; pending writes finish first. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.ingesting]);
    await this.writes.exclusive(async () => undefined);
    for (const con of this.idleReaders.splice(0)) con.closeSync();
    this.writer.closeSync();
    this.instance.closeSync();
  }

  /**
   * Copies the whole store into a new DuckDB file while it runs (backups): between writes, in one
   * statement, so the copy holds whole batches only. The file must not exist yet.
   */
  async backupTo(file: string): Promise<void> {
    await this.exclusive(async () => {
      const [current] = await queryRows(this.writer, 'SELECT current_database() AS name');
      await exec(this.writer, `ATTACH '${file.replaceAll("'", "''")}' AS detflow_backup`);
      try {
        await exec(this.writer, `COPY FROM DATABASE "${String(current!.name).replaceAll('"', '""')}" TO detflow_backup`);
      } finally {
        await exec(this.writer, 'DETACH detflow_backup');
      }
    });
  }

  /** Sigma field name → SQL expression of its text value over the events (or a fixture) table. */
  fieldExpression(field: string): string {
    return fieldExpression(field);
  }

  /** Sigma field name → SQL that is true when the field is present (even as JSON null). */
  existsExpression(field: string): string {
    return existsExpression(field);
  }

  // ---------------------------------------------------------------------------------------------
  // Ingestion

  /**
   * Stores one batch. Every line is checked (strict JSON object, parseable timestamp); bad lines
   * are reported with their line numbers and the good ones are committed in one transaction, so a
   * failure (a stream error, a full disk) stores nothing of the batch and a success stores all its
   * good lines. A source that is unusable as a whole (a JSON array document that does not parse, a
   * missing Parquet file) throws IngestSourceError.
   *
   * Batches that are ready together may share that transaction (see group-commit.ts); the call
   * returns once the transaction holding its batch has committed. A batch that fails in a shared
   * transaction is written again alone, so it fails alone.
   */
  async ingest(tenantId: string, targetId: string, source: IngestSource, options: IngestOptions): Promise<IngestResult> {
    requireText(tenantId, 'tenantId');
    requireText(targetId, 'targetId');
    requireText(options.timestampField, 'timestampField');
    if (this.maxPendingBatches > 0 && this.ingesting.size >= this.maxPendingBatches) throw new IngestBacklogFull(this.ingesting.size, this.maxPendingBatches);
    const cap = options.maxReportedErrors ?? DEFAULT_MAX_ERRORS;
    const started = performance.now();
    // Announced before the first await, so a group being formed now may wait for this batch.
    const staged = this.writes.announce();
    // A connection of the batch's own: its lines are read, split and checked into a stage table
    // while other batches are being written, and only the write waits for the writer's turn.
    // Registered before the first await, so a close() called from now on waits for this batch.
    const done = this.connect()
      .then((con) => this.ingestOn(con, tenantId, targetId, source, options, cap, started, staged))
      .finally(staged);
    this.ingesting.add(done);
    try {
      return await done;
    } finally {
      this.ingesting.delete(done);
    }
  }

  /** ingest() on the batch's connection, which it closes after dropping the stage table. */
  private async ingestOn(
    con: DuckDBConnection,
    tenantId: string,
    targetId: string,
    source: IngestSource,
    options: IngestOptions,
    cap: number,
    started: number,
    staged: () => void,
  ): Promise<IngestResult> {
    const id = randomUUID();
    const stage = stageTable(id);
    try {
      // Rejections arrive in line order per check, not overall; the list is cut back to the first
      // `cap` by line whenever it doubles, so it stays small and exact.
      let lineErrors: LineError[] = [];
      let rejected = 0;
      const firstErrors = () => lineErrors.sort((a, b) => a.line - b.line).slice(0, cap);
      const reject = (line: number, error: string) => {
        rejected++;
        lineErrors.push({ line, error });
        if (lineErrors.length >= 2 * cap) lineErrors = firstErrors();
      };
      for (const sql of createStageSql(stage)) await con.run(sql);
      await stageSource(con, stage, source, options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES, reject);
      const counted = (await queryRows(con, `SELECT count(*) AS n, coalesce(max(line), 0) AS last_line FROM ${stage.qualified}`))[0]!;
      const rows = Number(counted.n);
      const lastLine = Number(counted.last_line);
      // Queued even when close() has begun since: a batch already read is written, as before.
      const written = this.writes.submit({ id, tenantId, targetId, stage: stage.qualified, rows, lastLine, options, cap, rejectedBefore: rejected }, rows);
      staged();
      const w = await written;
      rejected += w.timeRejected;
      lineErrors.push(...w.timeErrors);
      const errors = firstErrors();
      const stored = await batchLogsources(con, w.first, w.last, MAX_REPORTED_LOGSOURCES);
      return {
        batchId: id,
        accepted: w.accepted,
        rejected,
        logsources: stored.logsources,
        logsourcesTruncated: stored.truncated,
        withoutLogsource: stored.withoutLogsource,
        errors,
        errorsTruncated: rejected > errors.length,
        firstSeq: w.first,
        lastSeq: w.last,
        cursor: w.cursor,
        durationMs: performance.now() - started,
      };
    } finally {
      try {
        await con.run(dropStageSql(stage));
      } finally {
        con.closeSync();
      }
    }
  }

  /** The writer's side of group commits (see group-commit.ts): batches written in the writer's transaction. */
  private groupWriter(): GroupWriter<IngestJob, BatchWrite> {
    // Cursor inside the open group: each batch's seq values start after the previous batch's.
    let groupCursor = 0;
    return {
      begin: async () => {
        groupCursor = await this.cursor();
        await exec(this.writer, 'BEGIN TRANSACTION');
      },
      add: async (jobs) => {
        const written = await writeBatches(this.writer, jobs, groupCursor);
        groupCursor = Math.max(groupCursor, ...written.map((w) => w.cursor));
        return written;
      },
      commit: async () => {
        await exec(this.writer, 'COMMIT');
        this.committedCursor = groupCursor;
      },
      rollback: async () => {
        // Fails harmlessly when the failed statement or COMMIT already ended the transaction.
        await this.writer.run('ROLLBACK').catch(() => undefined);
        this.committedCursor = undefined;
      },
      alone: async (job) => {
        const base = await this.cursor();
        try {
          const w = await transaction(this.writer, () => writeBatch(this.writer, job, base));
          this.committedCursor = w.cursor;
          return w;
        } catch (e) {
          await this.writer.run('ROLLBACK').catch(() => undefined);
          this.committedCursor = undefined;
          throw e;
        }
      },
    };
  }

  /**
   * The store-wide cursor as the writer sees it. Read from ingest_batches once, then kept in
   * memory: only this object's writer (one at a time) commits batches, and DuckDB lets a single
   * process open the file for writing.
   */
  private async cursor(): Promise<number> {
    if (this.committedCursor === undefined) {
      this.committedCursor = await readCommittedCursor(this.writer);
    }
    return this.committedCursor;
  }

  // ---------------------------------------------------------------------------------------------
  // Retention

  /**
   * Deletes the tenant's events older than `days` days before `now`, on every target of the tenant
   * (the retention period is the tenant's, and events of a target deleted since are covered too);
   * returns how many.
   */
  async applyRetention(tenantId: string, days: number, now: Date = new Date()): Promise<{ deleted: number; cutoff: Date }> {
    requireText(tenantId, 'tenantId');
    const cutoff = retentionCutoff(days, now);
    return this.exclusive(async () => transaction(this.writer, async () => ({ deleted: await deleteEventsBefore(this.writer, tenantId, cutoff), cutoff })));
  }

  // ---------------------------------------------------------------------------------------------
  // Queries

  /** Counts the target's events of the window matching `where`, with per-day figures. */
  async count(tenantId: string, targetId: string, where: string, window: TimeWindow, logsource?: Logsource): Promise<WindowCount> {
    return this.read((con) => countEvents(con, tenantId, targetId, where, window, logsource));
  }

  /** Like count, plus the matched events themselves (at most `limit`, in time order). */
  async search(tenantId: string, targetId: string, where: string, window: TimeWindow, options: { limit?: number; logsource?: Logsource } = {}): Promise<WindowSearch> {
    return this.read((con) => searchEvents(con, tenantId, targetId, where, window, options));
  }

  /**
   * Splits a window of the target's events into contiguous chunks of about `targetEvents` events
   * each (whole UTC hours), for replay progress and heartbeats. Always at least one chunk. Each
   * chunk's `events` is exact.
   */
  async planChunks(tenantId: string, targetId: string, window: TimeWindow, targetEvents: number): Promise<WindowChunk[]> {
    if (!(targetEvents > 0)) throw new RangeError(`targetEvents must be positive, got ${targetEvents}`);
    return chunksOf(window, await this.read((con) => hourlyEventCounts(con, tenantId, targetId, window)), targetEvents);
  }

  /**
   * Store-wide cursor: the seq of the last committed event (0 when empty). One commit order for
   * every target, so it serves as the starting cursor of any target's live evaluation.
   */
  async latestCursor(): Promise<number> {
    return this.read(readCommittedCursor);
  }

  /** Ingest batches under way (being read, or waiting for the writer): what maxPendingBatches limits. */
  get pendingBatches(): number {
    return this.ingesting.size;
  }

  /** The memory DuckDB holds (its buffer pool and other allocations), by its own count. */
  async memoryBytes(): Promise<number> {
    const [row] = await this.read((con) => queryRows(con, `SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT AS bytes FROM duckdb_memory()`));
    return Number(row?.bytes ?? 0);
  }

  /**
   * The target's events committed after `cursor` that match `where` (scheduled detection, shadow),
   * up to the store-wide cursor at the start of the call (see eventsSince).
   */
  async since(tenantId: string, targetId: string, where: string, cursor: number, options: { limit?: number; logsource?: Logsource } = {}): Promise<SinceResult> {
    return this.read((con) => eventsSince(con, tenantId, targetId, where, cursor, options));
  }

  /** Many rules' `since` over one scan of the target's new events (ruleset-scan.ts). */
  async rulesetSince(
    tenantId: string,
    targetId: string,
    ruleset: LocalRuleset,
    members: readonly ScanMember[],
    options: RulesetScanOptions,
  ): Promise<Array<SinceResult | null>> {
    return this.read((con) => rulesetSince(con, tenantId, targetId, ruleset, members, options));
  }

  /**
   * Volume and freshness of the events of one target of a tenant, or of all the tenant's targets
   * when `targetId` is left out (data-quality and health reports).
   */
  /** Which of `fields` the target's events of a logsource since `since` carry, and its newest event time (one query). */
  async fieldPresence(tenantId: string, targetId: string, logsource: Logsource, fields: readonly string[], since: Date): Promise<FieldPresence> {
    return this.read((con) => fieldPresence(con, tenantId, targetId, logsource, fields, since));
  }

  async tenantStats(tenantId: string, targetId?: string): Promise<TenantStats> {
    return this.read((con) => tenantStats(con, tenantId, targetId));
  }

  // ---------------------------------------------------------------------------------------------
  // Events written before targets (see store-migrations.ts)

  /** Whether the file holds events written before events had a target, not yet adopted. */
  async hasUntargetedEvents(): Promise<boolean> {
    return this.read((con) => untargetedEventsPending(con));
  }

  /** Gives the events written before events had a target to their tenant's target in `owners`; once per file. */
  async adoptUntargetedEvents(owners: ReadonlyArray<{ tenantId: string; targetId: string }>): Promise<number> {
    for (const o of owners) {
      requireText(o.tenantId, 'tenantId');
      requireText(o.targetId, 'targetId');
    }
    return this.exclusive(() => transaction(this.writer, () => adoptUntargetedEvents(this.writer, owners)));
  }

  // ---------------------------------------------------------------------------------------------
  // Fixture tables

  /** Runs fn on a fixture table holding `events`, apart from real data (see fixture-tables.ts). */
  async withFixtureTable<T>(events: readonly Record<string, unknown>[], fn: (table: FixtureTable) => Promise<T>): Promise<T> {
    const con = await this.connect();
    try {
      return await withFixtureTable(con, events, fn);
    } finally {
      con.closeSync();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Plumbing

  private async connect(): Promise<DuckDBConnection> {
    if (this.closed) throw new Error('the local event store is closed');
    return this.instance.connect();
  }

  /**
   * Runs fn on a connection of its own (a consistent snapshot). For the local target's own modules
   * (deployments) that keep their tables in the same database.
   */
  async read<T>(fn: (con: DuckDBConnection) => Promise<T>): Promise<T> {
    const con = this.idleReaders.pop() ?? (await this.connect());
    let reusable = false;
    try {
      const result = await fn(con);
      // Only after a clean return: a failed fn may have left state (a transaction, a temp table)
      // that the next caller must not inherit. Readers never open transactions themselves.
      reusable = !this.closed;
      return result;
    } finally {
      if (reusable && this.idleReaders.length < MAX_IDLE_READERS) this.idleReaders.push(con);
      else con.closeSync();
    }
  }

  /** Runs fn on the writer connection, after and before every other write (see read). */
  write<T>(fn: (con: DuckDBConnection) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      try {
        return await fn(this.writer);
      } finally {
        // fn may have written ingest_batches (a bulk load); the cursor is read again next time.
        this.committedCursor = undefined;
      }
    });
  }

  /** Runs write operations one after another (and between ingest groups), whatever the outcome of the previous one. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the local event store is closed'));
    return this.writes.exclusive(fn);
  }
}

/** Promoted field names, in column order (exported for documentation and tests). */
export const PROMOTED_COLUMNS: readonly string[] = PROMOTED_FIELDS;
