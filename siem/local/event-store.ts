import { randomUUID } from 'node:crypto';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import type { DayCount, RuleLogsource as Logsource, TimeWindow, WindowChunk } from '../adapter';
import { exec, rows as queryRows, transaction } from './duckdb';
import { existsExpression, fieldExpression, PROMOTED_FIELDS, promotedExtraction, promotedItems, quoteIdentifier, sqlLiteral } from './fields';
import { GroupCommitQueue, type GroupWriter } from './group-commit';
import { createStageSql, dropStageSql, stageTable, writeBatch, type BatchWrite, type IngestJob, type StageTable } from './ingest-write';
import { EVENT_HOURS_TABLE, EVENTS_TABLE, eventsTableDdl, FIXTURE_SCHEMA, STORE_DDL } from './schema';
import { checkLine, checkValue, IngestSourceError, jsonArrayElements, jsonlFileLines, ndjsonLines, type IngestSource } from './sources';

export { IngestSourceError, type IngestSource } from './sources';
export { EventStoreQueryError } from './duckdb';
export type { DayCount, RuleLogsource as Logsource, TimeWindow, WindowChunk } from '../adapter';

/** A logsource attribute: a fixed value for the whole batch, or the name of a field of each event. */
export type LogsourceValue = string | { readonly field: string };

export interface IngestOptions {
  /** Field holding the event time (see event-time.ts for accepted forms). */
  readonly timestampField: string;
  readonly logsource?: { readonly product?: LogsourceValue; readonly category?: LogsourceValue; readonly service?: LogsourceValue };
  /** Field holding the event id; events without it (or without this option) get a generated UUID. */
  readonly eventIdField?: string;
  /** How many line errors are listed (all are counted); default 1000. */
  readonly maxReportedErrors?: number;
}

export interface LineError {
  readonly line: number;
  readonly error: string;
}

export interface IngestResult {
  readonly batchId: string;
  readonly accepted: number;
  readonly rejected: number;
  /** Rejected lines in line order, at most `maxReportedErrors` of them. */
  readonly errors: LineError[];
  readonly errorsTruncated: boolean;
  /** Cursor range the accepted events received; null when none was accepted. */
  readonly firstSeq: number | null;
  readonly lastSeq: number | null;
  /** Store-wide cursor after this batch. */
  readonly cursor: number;
  readonly durationMs: number;
}

export interface StoredEvent {
  readonly seq: number;
  readonly eventId: string;
  readonly time: Date;
  readonly logsource: Logsource;
  readonly event: Record<string, unknown>;
}

export interface WindowCount {
  readonly matched: number;
  /** Events of the tenant in the window (and logsource, when given): what the rule was evaluated on. */
  readonly scanned: number;
  /** Sum of the raw JSON sizes of the scanned events: what a SIEM billing by data scanned would count. */
  readonly bytesScanned: number;
  /** Days of the window with at least one scanned event, in order. */
  readonly perDay: DayCount[];
  readonly durationMs: number;
}

export interface WindowSearch extends WindowCount {
  /** Matched events in time order, at most `limit`. */
  readonly events: StoredEvent[];
  readonly truncated: boolean;
}

export interface SinceResult {
  /** Pass this back as `cursor` next time; it covers every event committed before the call. */
  readonly cursor: number;
  readonly scanned: number;
  /** Sum of the raw JSON sizes of the scanned events (see WindowCount). */
  readonly bytesScanned: number;
  readonly matched: number;
  readonly durationMs: number;
  /** Matched events in cursor order, at most `limit`. */
  readonly events: StoredEvent[];
  readonly truncated: boolean;
}

export interface TenantStats {
  readonly events: number;
  readonly bytes: number;
  readonly firstEventTime: Date | null;
  readonly lastEventTime: Date | null;
  readonly lastIngestedAt: Date | null;
}

/** What a rule's detection sees of a fixture table. */
export interface FixtureTable {
  /** Qualified table name, same shape as the events table. */
  readonly name: string;
  /** 1-based positions of the fixture events the WHERE expression matches, ascending. */
  matching(where: string): Promise<number[]>;
}

export interface LocalEventStoreOptions {
  /** DuckDB database file (created when missing), or ':memory:'. */
  readonly path: string;
  /** DuckDB memory_limit, e.g. '1GB'; DuckDB's default (80% of RAM) when absent. */
  readonly memoryLimit?: string;
  /** DuckDB worker threads; DuckDB's default (all cores) when absent. */
  readonly threads?: number;
  /**
   * Longest time an open group commit waits, with nothing to write, for ingest batches still
   * being read, to share their transaction (see group-commit.ts); default 1000 ms, 0 to never wait.
   * A batch is acknowledged when its group commits.
   */
  readonly groupCommitWaitMs?: number;
}

const DEFAULT_MAX_ERRORS = 1000;
/**
 * Text of the extensions DuckDB's JSON reader accepts beyond JSON: a comma before a closing
 * bracket, and NaN/Inf/Infinity literals (any case, signed). It matches inside strings too, which
 * only costs a JSON.parse of that line.
 */
const LENIENT_JSON_TEXT = /,[ \t\r\n]*[\]}]|[:,[][ \t\r\n]*[-+]?(?:[iI][nN][fF]|[nN][aA][nN])/;
/** Reader connections kept open between calls; more concurrent readers get fresh ones. */
const MAX_IDLE_READERS = 4;
const DAY_MS = 86_400_000;
/** DuckDB's row group: a transaction appending at least this many rows skips the write-ahead log. */
const ROW_GROUP_ROWS = 122_880;
const DEFAULT_GROUP_COMMIT_WAIT_MS = 1000;

/**
 * The `local` target's event store: one DuckDB database holding every tenant's events.
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
    for (const ddl of STORE_DDL) await writer.run(ddl);
    const store = new LocalEventStore(instance, writer, options.groupCommitWaitMs ?? DEFAULT_GROUP_COMMIT_WAIT_MS);
    await store.dropLeftoverFixtures();
    await store.backfillEventHours();
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
  async ingest(tenantId: string, source: IngestSource, options: IngestOptions): Promise<IngestResult> {
    requireText(tenantId, 'tenantId');
    requireText(options.timestampField, 'timestampField');
    const cap = options.maxReportedErrors ?? DEFAULT_MAX_ERRORS;
    const started = performance.now();
    // Announced before the first await, so a group being formed now may wait for this batch.
    const staged = this.writes.announce();
    // A connection of the batch's own: its lines are read, split and checked into a stage table
    // while other batches are being written, and only the write waits for the writer's turn.
    // Registered before the first await, so a close() called from now on waits for this batch.
    const done = this.connect()
      .then((con) => this.ingestOn(con, tenantId, source, options, cap, started, staged))
      .finally(staged);
    this.ingesting.add(done);
    try {
      return await done;
    } finally {
      this.ingesting.delete(done);
    }
  }

  /** ingest() on the batch's connection, which it closes after dropping the stage table. */
  private async ingestOn(con: DuckDBConnection, tenantId: string, source: IngestSource, options: IngestOptions, cap: number, started: number, staged: () => void): Promise<IngestResult> {
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
      await this.stage(con, stage, source, reject);
      const rows = Number((await queryRows(con, `SELECT count(*) AS n FROM ${stage.qualified}`))[0]!.n);
      // Queued even when close() has begun since: a batch already read is written, as before.
      const written = this.writes.submit({ id, tenantId, stage: stage.qualified, rows, options, cap, rejectedBefore: rejected }, rows);
      staged();
      const w = await written;
      rejected += w.timeRejected;
      lineErrors.push(...w.timeErrors);
      const errors = firstErrors();
      return {
        batchId: id,
        accepted: w.accepted,
        rejected,
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
      add: async (job) => {
        const w = await writeBatch(this.writer, job, groupCursor);
        groupCursor = w.cursor;
        return w;
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
      this.committedCursor = Number((await queryRows(this.writer, `SELECT coalesce(max(high_water_seq), 0) AS base FROM ingest_batches`))[0]!.base);
    }
    return this.committedCursor;
  }

  /** Loads the candidate lines of a source into the stage table; rejects what is not a JSON object. */
  private async stage(con: DuckDBConnection, stage: StageTable, source: IngestSource, reject: (line: number, error: string) => void): Promise<void> {
    if (source.kind === 'parquet-file') {
      // DuckDB reads Parquet natively; each row becomes a JSON object keyed by column name.
      const sql = `INSERT INTO ${stage.qualified} SELECT file_row_number + 1, to_json(struct_pack(*COLUMNS(* EXCLUDE (file_row_number))))
                   FROM read_parquet(${sqlLiteral(source.path)}, file_row_number = true)`;
      try {
        await con.run(sql);
      } catch (e) {
        throw new IngestSourceError(`cannot read Parquet file ${source.path}: ${(e as Error).message}`, { cause: e });
      }
      return;
    }
    if (source.kind === 'ndjson' || source.kind === 'jsonl-file') return this.stageNdjson(con, stage, source, reject);
    // JSON arrays: elements are serialised by JSON.stringify, strict JSON by construction.
    const appender = await con.createAppender(stage.table, 'main', stage.catalog);
    try {
      for (const { line, value } of jsonArrayElements(source.input)) {
        const c = checkValue(value);
        if (!c.ok) reject(line, c.error);
        else {
          appender.appendBigInt(BigInt(line));
          appender.appendVarchar(c.raw);
          appender.endRow();
        }
      }
    } finally {
      appender.closeSync();
    }
  }

  /**
   * NDJSON: each line is checked with a regular expression and a look at its first character, and
   * DuckDB checks all of them at once (json_valid); only a line one of them flags is parsed in
   * JavaScript, for its error. JSON.parse of every line was the largest cost of reading a batch.
   *
   * Stored events must be strict JSON objects (JSON.parse must read `raw` anywhere downstream), and
   * DuckDB's reader is lenient: it accepts trailing commas and NaN/Infinity literals (a test pins
   * both down), which LENIENT_JSON_TEXT finds before DuckDB sees the line.
   */
  private async stageNdjson(con: DuckDBConnection, stage: StageTable, source: IngestSource & { kind: 'ndjson' | 'jsonl-file' }, reject: (line: number, error: string) => void): Promise<void> {
    const appender = await con.createAppender(stage.table, 'main', stage.catalog);
    try {
      for await (const { line, text } of source.kind === 'ndjson' ? ndjsonLines(source.input) : jsonlFileLines(source.path)) {
        const raw = text.trim();
        // `\u0000` escapes: only an actual U+0000 (not an escaped backslash before "u0000") is refused.
        if (raw.charCodeAt(0) !== 0x7b /* { */ || LENIENT_JSON_TEXT.test(raw) || raw.includes('\\u0000')) {
          const c = checkLine(text);
          if (!c.ok) {
            reject(line, c.error);
            continue;
          }
        }
        appender.appendBigInt(BigInt(line));
        appender.appendVarchar(raw);
        appender.endRow();
      }
    } catch (e) {
      if (e instanceof IngestSourceError) throw e;
      const where = source.kind === 'jsonl-file' ? `JSONL file ${source.path}` : 'NDJSON stream';
      throw new IngestSourceError(`cannot read ${where}: ${(e as Error).message}`, { cause: e });
    } finally {
      appender.closeSync();
    }
    const unreadable = await queryRows(con, `SELECT line, raw FROM ${stage.qualified} WHERE NOT json_valid(raw) ORDER BY line`);
    if (unreadable.length === 0) return;
    for (const r of unreadable) {
      const c = checkLine(String(r.raw));
      // Strict JSON that DuckDB cannot read (an unpaired UTF-16 surrogate escape, "\ud800"): no
      // query could read its fields.
      reject(Number(r.line), c.ok ? 'invalid JSON: the event store cannot read this line (an unpaired \\uD800-\\uDFFF escape?)' : c.error);
    }
    await exec(con, `DELETE FROM ${stage.qualified} WHERE NOT json_valid(raw)`);
  }

  // ---------------------------------------------------------------------------------------------
  // Retention

  /** Deletes the tenant's events older than `days` days before `now`; returns how many. */
  async applyRetention(tenantId: string, days: number, now: Date = new Date()): Promise<{ deleted: number; cutoff: Date }> {
    requireText(tenantId, 'tenantId');
    if (!Number.isFinite(days) || days <= 0) throw new RangeError(`retention days must be a positive number, got ${days}`);
    const cutoff = new Date(now.getTime() - days * DAY_MS);
    return this.exclusive(async () =>
      transaction(this.writer, async () => {
        const con = this.writer;
        const params = [tenantId, cutoff.toISOString()];
        const deleted = Number((await queryRows(con, `DELETE FROM ${EVENTS_TABLE} WHERE tenant_id = $1 AND event_time < $2::TIMESTAMP`, params))[0]?.Count ?? 0);
        // Hours wholly before the cutoff are gone; the cutoff's own hour is recounted from what is left.
        await exec(con, `DELETE FROM ${EVENT_HOURS_TABLE} WHERE tenant_id = $1 AND hour <= date_trunc('hour', $2::TIMESTAMP)`, params);
        await exec(
          con,
          `INSERT INTO ${EVENT_HOURS_TABLE} SELECT tenant_id, date_trunc('hour', event_time), count(*) FROM ${EVENTS_TABLE}
           WHERE tenant_id = $1 AND event_time >= date_trunc('hour', $2::TIMESTAMP) AND event_time < date_trunc('hour', $2::TIMESTAMP) + INTERVAL 1 HOUR GROUP BY ALL`,
          params,
        );
        return { deleted, cutoff };
      }),
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Queries

  /** Counts the events of the window matching `where`, with per-day figures. */
  async count(tenantId: string, where: string, window: TimeWindow, logsource?: Logsource): Promise<WindowCount> {
    return this.read(async (con) => this.countOn(con, tenantId, where, window, logsource));
  }

  /** Like count, plus the matched events themselves (at most `limit`, in time order). */
  async search(tenantId: string, where: string, window: TimeWindow, options: { limit?: number; logsource?: Logsource } = {}): Promise<WindowSearch> {
    const limit = options.limit ?? 100;
    return this.read(async (con) => {
      const started = performance.now();
      const counted = await this.countOn(con, tenantId, where, window, options.logsource);
      const rows = await queryRows(
        con,
        `SELECT ${EVENT_COLUMNS} FROM ${EVENTS_TABLE} WHERE ${scope(tenantId, window, options.logsource)} AND ${guard(where)} ORDER BY event_time, seq LIMIT ${limit}`,
      );
      return { ...counted, events: rows.map(toStoredEvent), truncated: counted.matched > rows.length, durationMs: performance.now() - started };
    });
  }

  /**
   * Splits a window into contiguous chunks of about `targetEvents` events each (whole UTC hours),
   * for replay progress and heartbeats. Always at least one chunk. Each chunk's `events` is exact.
   *
   * Whole hours come from the hourly summary (a few hundred rows, not a scan of the events); only
   * an hour the window cuts (a `from`/`to` not on the hour) is counted on the events table, a
   * time-range scan the row groups' min/max statistics keep short.
   */
  async planChunks(tenantId: string, window: TimeWindow, targetEvents: number): Promise<WindowChunk[]> {
    if (!(targetEvents > 0)) throw new RangeError(`targetEvents must be positive, got ${targetEvents}`);
    const within = scope(tenantId, window);
    const from = timeLiteral(window.from, 'from');
    const to = timeLiteral(window.to, 'to');
    const hours = await this.read(async (con) => {
      const whole = `SELECT hour, sum(events) AS n FROM ${EVENT_HOURS_TABLE}
                     WHERE tenant_id = ${sqlLiteral(tenantId)} AND hour >= ${from} AND hour + INTERVAL 1 HOUR <= ${to} GROUP BY hour`;
      // The hours the window only partly covers: at most two, counted exactly.
      const cut = `SELECT date_trunc('hour', event_time) AS hour, count(*) AS n FROM ${EVENTS_TABLE}
                   WHERE ${within} AND (event_time < date_trunc('hour', ${from}) + INTERVAL 1 HOUR OR event_time >= date_trunc('hour', ${to}))
                     AND NOT (date_trunc('hour', event_time) >= ${from} AND date_trunc('hour', event_time) + INTERVAL 1 HOUR <= ${to})
                   GROUP BY 1`;
      const partial = isWholeHour(window.from) && isWholeHour(window.to) ? '' : ` UNION ALL ${cut}`;
      return queryRows(con, `SELECT epoch_ms(hour) AS h, n FROM (${whole}${partial}) ORDER BY 1`);
    });
    const chunks: WindowChunk[] = [];
    let chunkFrom = window.from;
    let n = 0;
    for (const r of hours) {
      n += Number(r.n);
      if (n >= targetEvents) {
        const end = new Date(Math.min(Number(r.h) + 3_600_000, window.to.getTime()));
        chunks.push({ from: chunkFrom, to: end, events: n });
        chunkFrom = end;
        n = 0;
      }
    }
    if (chunkFrom.getTime() < window.to.getTime() || chunks.length === 0) chunks.push({ from: chunkFrom, to: window.to, events: n });
    else if (n > 0) {
      const lastChunk = chunks.pop()!;
      chunks.push({ ...lastChunk, events: lastChunk.events + n });
    }
    return chunks;
  }

  /** Store-wide cursor: the seq of the last committed event (0 when empty). */
  async latestCursor(): Promise<number> {
    return this.read(async (con) => Number((await queryRows(con, `SELECT coalesce(max(high_water_seq), 0) AS c FROM ingest_batches`))[0]!.c));
  }

  /**
   * The tenant's events committed after `cursor` that match `where` (scheduled detection, shadow).
   * The returned cursor is the store-wide cursor read at the start of the call, so events committed
   * during the call are left for the next one and none is seen twice or skipped.
   */
  async since(tenantId: string, where: string, cursor: number, options: { limit?: number; logsource?: Logsource } = {}): Promise<SinceResult> {
    requireText(tenantId, 'tenantId');
    const limit = options.limit ?? 1000;
    return this.read(async (con) => {
      const started = performance.now();
      const upTo = Number((await queryRows(con, `SELECT coalesce(max(high_water_seq), 0) AS c FROM ingest_batches`))[0]!.c);
      const filter = `tenant_id = ${sqlLiteral(tenantId)} AND seq > ${Math.trunc(cursor)} AND seq <= ${upTo}${logsourceScope(options.logsource)}`;
      const agg = (await queryRows(
        con,
        `SELECT count(*) AS scanned, coalesce(sum(raw_bytes), 0) AS bytes, count(*) FILTER (WHERE ${guard(where)}) AS matched FROM ${EVENTS_TABLE} WHERE ${filter}`,
      ))[0]!;
      const matched = Number(agg.matched);
      const rows = matched === 0 || limit === 0 ? [] : await queryRows(con, `SELECT ${EVENT_COLUMNS} FROM ${EVENTS_TABLE} WHERE ${filter} AND ${guard(where)} ORDER BY seq LIMIT ${limit}`);
      return {
        cursor: Math.max(upTo, Math.trunc(cursor)),
        scanned: Number(agg.scanned),
        bytesScanned: Number(agg.bytes),
        matched,
        durationMs: performance.now() - started,
        events: rows.map(toStoredEvent),
        truncated: matched > rows.length,
      };
    });
  }

  /** Volume and freshness of a tenant's events (data-quality and health reports). */
  async tenantStats(tenantId: string): Promise<TenantStats> {
    return this.read(async (con) => {
      const r = (await queryRows(
        con,
        `SELECT count(*) AS n, coalesce(sum(raw_bytes), 0) AS bytes, epoch_ms(min(event_time)) AS lo, epoch_ms(max(event_time)) AS hi, epoch_ms(max(ingested_at)) AS ing
         FROM ${EVENTS_TABLE} WHERE tenant_id = ${sqlLiteral(tenantId)}`,
      ))[0]!;
      const date = (v: unknown) => (v === null ? null : new Date(Number(v)));
      return { events: Number(r.n), bytes: Number(r.bytes), firstEventTime: date(r.lo), lastEventTime: date(r.hi), lastIngestedAt: date(r.ing) };
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Fixture tables

  /**
   * Loads `events` into a new table of the events table's shape, runs fn on it and drops it, so rule
   * tests never see real data and real data never sees fixtures. Fixture events need no timestamp;
   * their event_time is the time of the call.
   */
  async withFixtureTable<T>(events: readonly Record<string, unknown>[], fn: (table: FixtureTable) => Promise<T>): Promise<T> {
    const con = await this.connect();
    const id = randomUUID().replace(/-/g, '');
    const name = `${quoteIdentifier(FIXTURE_SCHEMA)}.fixture_${id}`;
    const stage = `fixture_stage_${id}`;
    try {
      await con.run(eventsTableDdl(name));
      await con.run(`CREATE TEMP TABLE ${stage} (line BIGINT NOT NULL, raw VARCHAR NOT NULL)`);
      const appender = await con.createAppender(stage);
      try {
        events.forEach((event, i) => {
          const c = checkValue(event);
          if (!c.ok) throw new RangeError(`fixture event ${i + 1}: ${c.error}`);
          appender.appendBigInt(BigInt(i + 1));
          appender.appendVarchar(c.raw);
          appender.endRow();
        });
      } finally {
        appender.closeSync();
      }
      await exec(
        con,
        `INSERT INTO ${name} SELECT line, 'fixture', 'fixture-' || line, now()::TIMESTAMP, now()::TIMESTAMP, NULL, NULL, NULL, strlen(raw), raw, ${promotedItems('__p')}
         FROM (SELECT line, raw, ${promotedExtraction('raw')} AS __p FROM ${stage})`,
      );
      return await fn({
        name,
        matching: async (where) => (await queryRows(con, `SELECT seq FROM ${name} WHERE ${guard(where)} ORDER BY seq`)).map((r) => Number(r.seq)),
      });
    } finally {
      try {
        await con.run(`DROP TABLE IF EXISTS ${name}`);
        await con.run(`DROP TABLE IF EXISTS ${stage}`);
      } finally {
        con.closeSync();
      }
    }
  }

  /** Fixture tables outlive a crash of the process that made them; they are never needed later. */
  private async dropLeftoverFixtures(): Promise<void> {
    const rows = await queryRows(this.writer, `SELECT table_name FROM duckdb_tables() WHERE schema_name = ${sqlLiteral(FIXTURE_SCHEMA)} AND NOT temporary`);
    for (const r of rows) await this.writer.run(`DROP TABLE IF EXISTS ${quoteIdentifier(FIXTURE_SCHEMA)}.${quoteIdentifier(String(r.table_name))}`);
  }

  // ---------------------------------------------------------------------------------------------
  // Plumbing

  private async countOn(con: DuckDBConnection, tenantId: string, where: string, window: TimeWindow, logsource?: Logsource): Promise<WindowCount> {
    const started = performance.now();
    // One scan: volume and matches together, the rule in a FILTER clause. Grouping on the DATE
    // cast (whose range DuckDB knows from the column statistics, so it aggregates into a small
    // array instead of a hash table) and formatting only the ~30 result rows keep the query within
    // a few percent of a bare `count(*) WHERE rule`; formatting every row's day with strftime, or
    // a second scan for the volume, cost more than the rule itself.
    const days = await queryRows(
      con,
      `SELECT strftime(day, '%Y-%m-%d') AS day, scanned, bytes, matched FROM (
         SELECT event_time::DATE AS day, count(*) AS scanned, sum(raw_bytes) AS bytes, count(*) FILTER (WHERE ${guard(where)}) AS matched
         FROM ${EVENTS_TABLE} WHERE ${scope(tenantId, window, logsource)} GROUP BY 1
       ) ORDER BY 1`,
    );
    const perDay = days.map((r) => ({ day: String(r.day), scanned: Number(r.scanned), matched: Number(r.matched) }));
    return {
      matched: perDay.reduce((s, d) => s + d.matched, 0),
      scanned: perDay.reduce((s, d) => s + d.scanned, 0),
      bytesScanned: days.reduce((s, r) => s + Number(r.bytes), 0),
      perDay,
      durationMs: performance.now() - started,
    };
  }

  /** Fills the hourly summary of a store whose events were written without it (older files). */
  private async backfillEventHours(): Promise<void> {
    const state = (await queryRows(this.writer, `SELECT EXISTS (FROM ${EVENTS_TABLE}) AS events, EXISTS (FROM ${EVENT_HOURS_TABLE}) AS hours`))[0]!;
    if (state.events !== true || state.hours === true) return;
    await exec(this.writer, `INSERT INTO ${EVENT_HOURS_TABLE} SELECT tenant_id, date_trunc('hour', event_time), count(*) FROM ${EVENTS_TABLE} GROUP BY ALL`);
  }

  private async connect(): Promise<DuckDBConnection> {
    if (this.closed) throw new Error('the local event store is closed');
    return this.instance.connect();
  }

  /**
   * Runs fn on a connection of its own (a consistent snapshot). For the local target's own modules
   * (deployments, scheduled detection) that keep their tables in the same database.
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

const EVENT_COLUMNS = `seq, event_id, epoch_us(event_time) AS t_us, ls_product, ls_category, ls_service, raw`;

function toStoredEvent(r: Record<string, unknown>): StoredEvent {
  const logsource: { product?: string; category?: string; service?: string } = {};
  if (r.ls_product !== null) logsource.product = String(r.ls_product);
  if (r.ls_category !== null) logsource.category = String(r.ls_category);
  if (r.ls_service !== null) logsource.service = String(r.ls_service);
  return {
    seq: Number(r.seq),
    eventId: String(r.event_id),
    time: new Date(Number(r.t_us) / 1000),
    logsource,
    event: JSON.parse(String(r.raw)) as Record<string, unknown>,
  };
}

/** A NULL from the rule (a missing field) counts as no match. */
function guard(where: string): string {
  return `coalesce((${where}), false)`;
}

function isWholeHour(d: Date): boolean {
  return d.getTime() % 3_600_000 === 0;
}

function timeLiteral(d: Date, name: string): string {
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw new RangeError(`window ${name} is not a valid date`);
  return `TIMESTAMP '${d.toISOString().replace('T', ' ').replace('Z', '')}'`;
}

/**
 * Tenant + window (+ logsource) filter. Bounds are inlined as literals (built from Date values, so
 * nothing user-supplied reaches the SQL text) so DuckDB can skip row groups by their min/max.
 */
function scope(tenantId: string, window: TimeWindow, logsource?: Logsource): string {
  requireText(tenantId, 'tenantId');
  const from = timeLiteral(window.from, 'from');
  const to = timeLiteral(window.to, 'to');
  if (window.from.getTime() >= window.to.getTime()) throw new RangeError(`window from (${window.from.toISOString()}) must be before to (${window.to.toISOString()})`);
  return `tenant_id = ${sqlLiteral(tenantId)} AND event_time >= ${from} AND event_time < ${to}${logsourceScope(logsource)}`;
}

function logsourceScope(logsource?: Logsource): string {
  if (!logsource) return '';
  let sql = '';
  if (logsource.product !== undefined) sql += ` AND ls_product = ${sqlLiteral(logsource.product.toLowerCase())}`;
  if (logsource.category !== undefined) sql += ` AND ls_category = ${sqlLiteral(logsource.category.toLowerCase())}`;
  if (logsource.service !== undefined) sql += ` AND ls_service = ${sqlLiteral(logsource.service.toLowerCase())}`;
  return sql;
}

function requireText(value: string, name: string): void {
  if (typeof value !== 'string' || value.trim() === '') throw new RangeError(`${name} must be a non-empty string`);
}

/** Promoted field names, in column order (exported for documentation and tests). */
export const PROMOTED_COLUMNS: readonly string[] = PROMOTED_FIELDS;
