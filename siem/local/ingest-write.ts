import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { exec, rows as queryRows } from './duckdb';
import { eventTimeFromText, eventTimeRejection, timestampJson, timestampJsonValue } from './event-time';
import { extraKeyText, promotedExtraction, promotedItems, quoteIdentifier, sqlLiteral } from './fields';
import { EVENT_HOURS_TABLE, EVENTS_TABLE } from './schema';
import type { IngestOptions, LineError, LogsourceCount, LogsourceValue } from './store-types';

/**
 * The write of one staged ingest batch into the events table, inside a transaction the caller
 * owns (one batch alone, or several in a group commit).
 */

/** A batch's stage table: its checked candidate lines (`line`, `raw`), in a database of its own. */
export interface StageTable {
  /** The batch's in-memory database, attached to the store's instance. */
  readonly catalog: string;
  readonly table: string;
  readonly qualified: string;
}

/**
 * Each batch stages into an in-memory database of its own, attached to the store's instance,
 * rather than a TEMP table (visible to its own connection only) or a table in one shared stage
 * database: a group commit's transaction reads a batch staged on another connection, possibly
 * after the transaction began, and DuckDB takes a transaction's snapshot of each database on the
 * transaction's first use of that database, so only a database first read after the batch was
 * staged shows the transaction its lines.
 */
export function stageTable(batchId: string): StageTable {
  const catalog = `stage_${batchId.replace(/-/g, '')}`;
  return { catalog, table: 'lines', qualified: `${quoteIdentifier(catalog)}.main.lines` };
}

/** SQL creating a batch's stage database and table. */
export function createStageSql(stage: StageTable): string[] {
  return [`ATTACH ':memory:' AS ${quoteIdentifier(stage.catalog)}`, `CREATE TABLE ${stage.qualified} (line BIGINT NOT NULL, raw VARCHAR NOT NULL)`];
}

/** SQL dropping a batch's stage database (and its table with it). */
export function dropStageSql(stage: StageTable): string {
  return `DETACH DATABASE IF EXISTS ${quoteIdentifier(stage.catalog)}`;
}

/** A staged batch waiting for the writer. */
export interface IngestJob {
  readonly id: string;
  readonly tenantId: string;
  /** The target the batch was sent to: its events belong to it. */
  readonly targetId: string;
  /** Qualified stage table name. */
  readonly stage: string;
  /** Lines in the stage table. */
  readonly rows: number;
  /** The highest line number in the stage table (lines rejected while staging leave gaps); 0 when empty. */
  readonly lastLine: number;
  readonly options: IngestOptions;
  /** How many timestamp errors to list. */
  readonly cap: number;
  /** Lines rejected while staging (for the batch record). */
  readonly rejectedBefore: number;
}

/** What writing a batch gave. */
export interface BatchWrite {
  readonly accepted: number;
  readonly first: number | null;
  readonly last: number | null;
  /** Store-wide cursor after this batch: its last seq, or the cursor before it when nothing was accepted. */
  readonly cursor: number;
  /** Staged lines rejected for their timestamp, the first `cap` of them listed. */
  readonly timeRejected: number;
  readonly timeErrors: LineError[];
}

/**
 * Inserts a staged batch with seq = base + line, then its hourly counts and batch record. Must run
 * inside a transaction on the writer, with `base` the store-wide cursor at that point of the
 * transaction.
 */
export async function writeBatch(con: DuckDBConnection, job: IngestJob, base: number): Promise<BatchWrite> {
  const { stage } = job;
  const insert = insertEventsSql(job, `SELECT ${base} + line AS seq, raw FROM ${stage}`);
  const accepted = Number((await queryRows(con, insert))[0]!.Count);
  const timeErrors: LineError[] = [];
  const timeRejected = job.rows - accepted;
  if (timeRejected > 0) timeErrors.push(...(await timestampErrors(con, job, base)));
  let first: number | null = null;
  let last: number | null = null;
  if (accepted > 0) {
    // seq > base reads only the row groups of this batch (min/max statistics).
    const range = (await queryRows(con, `SELECT min(seq) AS lo, max(seq) AS hi FROM ${EVENTS_TABLE} WHERE seq > ${base}`))[0]!;
    first = Number(range.lo);
    last = Number(range.hi);
    await exec(con, eventHoursSql(base));
  }
  const rejected = job.rejectedBefore + timeRejected;
  await exec(con, `INSERT INTO ingest_batches VALUES ($1, $2, $3, $4, $5, $6, $7, now()::TIMESTAMP)`, [
    job.id,
    job.tenantId,
    first,
    last,
    last ?? base,
    accepted,
    rejected,
  ] as DuckDBValue[]);
  return { accepted, first, last, cursor: last ?? base, timeRejected, timeErrors };
}

/** Batches written by one statement at most (each is a branch of its source). */
const MAX_BATCHES_PER_STATEMENT = 64;

/**
 * Writes several staged batches, in order, in a constant number of statements per run of batches
 * with the same tenant, target and options (at most MAX_BATCHES_PER_STATEMENT each): one INSERT
 * of all their events, one count per batch, one insert of hourly counts and one of batch records.
 * Batch i's seq values are base_i + line, with base_0 = `base` and base_{i+1} = base_i + its last
 * line, so batches never share a seq. Must run inside a transaction on the writer.
 *
 * Why: written one after another, each batch cost four statements of its own (about 10 ms of
 * DuckDB work, and four turns of a busy event loop); at 15 small batches a second among other
 * traffic the writer fell behind for good (the soak: 58 s of writing a minute, every ingest
 * request timing out). A group's cost now hardly grows with its number of batches.
 */
export async function writeBatches(con: DuckDBConnection, jobs: readonly IngestJob[], base: number): Promise<BatchWrite[]> {
  const out: BatchWrite[] = [];
  let start = 0;
  while (start < jobs.length) {
    const key = shapeKey(jobs[start]!);
    let end = start + 1;
    while (end < jobs.length && end - start < MAX_BATCHES_PER_STATEMENT && shapeKey(jobs[end]!) === key) end++;
    const run = jobs.slice(start, end);
    const written = run.length === 1 ? [await writeBatch(con, run[0]!, base)] : await writeRun(con, run, base);
    out.push(...written);
    // Past every seq written so far (a batch's cursor is its last seq, or its base when empty).
    base = Math.max(base, ...written.map((w) => w.cursor));
    start = end;
  }
  return out;
}

/** What makes two batches' INSERT the same statement but for their source. */
function shapeKey(job: IngestJob): string {
  const { timestampField, eventIdField, logsource } = job.options;
  return JSON.stringify([job.tenantId, job.targetId, timestampField, eventIdField ?? null, logsource ?? null]);
}

/** Each batch's seq base in a run written together (see writeBatches). */
function bases(run: readonly IngestJob[], base: number): number[] {
  const out: number[] = [];
  let b = base;
  for (const job of run) {
    out.push(b);
    b += job.lastLine;
  }
  return out;
}

/** writeBatches for a run of batches of one shape. */
async function writeRun(con: DuckDBConnection, run: readonly IngestJob[], base: number): Promise<BatchWrite[]> {
  const starts = bases(run, base);
  const end = starts[starts.length - 1]! + run[run.length - 1]!.lastLine;
  const source = run.map((job, i) => `SELECT ${starts[i]} + line AS seq, raw FROM ${job.stage}`).join(' UNION ALL ');
  // ORDER BY: the events go into the table in seq order, as one batch's do.
  await queryRows(con, insertEventsSql(run[0]!, `SELECT * FROM (${source}) ORDER BY seq`));
  const which = `CASE ${starts
    .slice(1)
    .map((s, i) => `WHEN seq <= ${s} THEN ${i}`)
    .join(' ')} ELSE ${run.length - 1} END`;
  const counted = await queryRows(
    con,
    `SELECT ${which} AS batch, count(*) AS n, min(seq) AS lo, max(seq) AS hi FROM ${EVENTS_TABLE} WHERE seq > ${base} AND seq <= ${end} GROUP BY batch`,
  );
  const byBatch = new Map(counted.map((r) => [Number(r.batch), r]));
  const written: BatchWrite[] = [];
  for (const [i, job] of run.entries()) {
    const r = byBatch.get(i);
    const accepted = r ? Number(r.n) : 0;
    const first = r ? Number(r.lo) : null;
    const last = r ? Number(r.hi) : null;
    const timeRejected = job.rows - accepted;
    const timeErrors = timeRejected > 0 ? await timestampErrors(con, job, starts[i]!) : [];
    written.push({ accepted, first, last, cursor: last ?? starts[i]!, timeRejected, timeErrors });
  }
  if (counted.length > 0) await exec(con, eventHoursSql(base));
  const records = run.map((job, i) => {
    const w = written[i]!;
    const n = (v: number | null) => (v === null ? 'NULL' : String(v));
    return `(${sqlLiteral(job.id)}, ${sqlLiteral(job.tenantId)}, ${n(w.first)}, ${n(w.last)}, ${w.cursor}, ${w.accepted}, ${job.rejectedBefore + w.timeRejected}, now()::TIMESTAMP)`;
  });
  await exec(con, `INSERT INTO ingest_batches VALUES ${records.join(', ')}`);
  return written;
}

/** The hourly event counts of every event after `base` (the batches just written). */
function eventHoursSql(base: number): string {
  return `INSERT INTO ${EVENT_HOURS_TABLE} (tenant_id, target_id, hour, events)
       SELECT tenant_id, target_id, date_trunc('hour', event_time), count(*) FROM ${EVENTS_TABLE} WHERE seq > ${base} GROUP BY ALL`;
}

/** The staged lines of a batch written from `base` that got no seq (no usable timestamp), each with the reason; the first `cap` by line. */
async function timestampErrors(con: DuckDBConnection, job: IngestJob, base: number): Promise<LineError[]> {
  // Only those lines are parsed again, for the reason.
  const rows = await queryRows(
    con,
    `SELECT line, ${eventTimeRejection('ts_json', job.options.timestampField)} AS error
       FROM (SELECT line, ${timestampJson('raw', job.options.timestampField)} AS ts_json
             FROM ${job.stage} WHERE ${base} + line NOT IN (SELECT seq FROM ${EVENTS_TABLE} WHERE seq > ${base} AND seq <= ${base + job.lastLine}))
       ORDER BY line LIMIT ${job.cap}`,
  );
  return rows.map((r) => ({ line: Number(r.line), error: String(r.error) }));
}

/**
 * The INSERT of a batch's events from `source` (rows of seq and raw line), with one JSON parse per
 * event: the promoted fields and the few keys the batch needs (timestamp, id, logsource fields)
 * come from one list extraction. No intermediate table: materialising parsed values and copying
 * them again was most of the time and memory of a batch.
 */
function insertEventsSql(job: IngestJob, source: string): string {
  const { options } = job;
  const ls = options.logsource ?? {};
  const extraKeys = [
    ...new Set(
      [options.timestampField, options.eventIdField, ...[ls.product, ls.category, ls.service].map((x) => (typeof x === 'object' ? x.field : undefined))].filter(
        (k): k is string => k !== undefined,
      ),
    ),
  ];
  const textOf = (key: string) => extraKeyText('__p', extraKeys.indexOf(key));
  const eventId = options.eventIdField ? `coalesce(${textOf(options.eventIdField)}, CAST(uuid() AS VARCHAR))` : 'CAST(uuid() AS VARCHAR)';
  const lsSql = (v: LogsourceValue | undefined) => (v === undefined ? 'NULL' : typeof v === 'string' ? sqlLiteral(v.toLowerCase()) : `lower(${textOf(v.field)})`);
  const eventTime = eventTimeFromText(textOf(options.timestampField), timestampJsonValue('raw', options.timestampField));
  // Rows go in the source's order (DuckDB preserves insertion order), so seq follows it.
  return `INSERT INTO ${EVENTS_TABLE}
    SELECT seq, ${sqlLiteral(job.tenantId)}, ${eventId}, event_time, now()::TIMESTAMP,
           ${lsSql(ls.product)}, ${lsSql(ls.category)}, ${lsSql(ls.service)},
           strlen(raw), raw, ${promotedItems('__p')}, ${sqlLiteral(job.targetId)}
    FROM (SELECT seq, raw, __p, ${eventTime} AS event_time
          FROM (SELECT seq, raw, ${promotedExtraction('raw', extraKeys)} AS __p FROM (${source})))
    WHERE event_time IS NOT NULL`;
}

/** What a batch stored, by logsource (see IngestResult). */
export interface BatchLogsources {
  readonly logsources: LogsourceCount[];
  readonly truncated: boolean;
  readonly withoutLogsource: number;
}

/**
 * The stored events of a committed batch (seq `first`..`last`, which no other batch shares)
 * counted by their logsource columns: one grouped count in DuckDB over the batch's row groups
 * (min/max statistics on seq skip the rest), run on the batch's own connection after its commit,
 * so the writer does not wait for it. At most `limit` groups, most events first, plus the group
 * without any logsource, which is always listed when it exists.
 */
export async function batchLogsources(con: DuckDBConnection, first: number | null, last: number | null, limit: number): Promise<BatchLogsources> {
  if (first === null || last === null) return { logsources: [], truncated: false, withoutLogsource: 0 };
  const rows = await queryRows(
    con,
    `SELECT ls_product, ls_category, ls_service, count(*) AS n, count(*) OVER () AS groups,
            (ls_product IS NULL AND ls_category IS NULL AND ls_service IS NULL) AS no_logsource,
            row_number() OVER (ORDER BY count(*) DESC, ls_product NULLS LAST, ls_category NULLS LAST, ls_service NULLS LAST) AS rank
     FROM ${EVENTS_TABLE} WHERE seq BETWEEN ${first} AND ${last}
     GROUP BY ls_product, ls_category, ls_service
     QUALIFY rank <= ${limit} OR no_logsource
     ORDER BY rank`,
  );
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const logsources = rows.map((r) => ({ product: text(r.ls_product), category: text(r.ls_category), service: text(r.ls_service), events: Number(r.n) }));
  const none = rows.find((r) => r.no_logsource === true);
  return {
    logsources,
    truncated: rows.length > 0 && Number(rows[0]!.groups) > rows.length,
    withoutLogsource: none ? Number(none.n) : 0,
  };
}
