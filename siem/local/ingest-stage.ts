import { setImmediate } from 'node:timers/promises';
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { exec } from './duckdb';
import { sqlLiteral } from './fields';
import type { StageTable } from './ingest-write';
import {
  checkLine,
  checkValue,
  INVALID_UTF8_ERROR,
  IngestSourceError,
  jsonArrayElements,
  jsonlFileLines,
  ndjsonLines,
  oversizedEventError,
  type IngestSource,
} from './sources';

/**
 * Reading a batch: its candidate lines go into the batch's stage table, one row per line, and
 * what is not a JSON object is rejected with its line number (ingest-write.ts writes the rest).
 */

/**
 * Text of the extensions DuckDB's JSON reader accepts beyond JSON: a comma before a closing
 * bracket, and NaN/Inf/Infinity literals (any case, signed). It matches inside strings too, which
 * only costs a JSON.parse of that line.
 */
const LENIENT_JSON_TEXT = /,[ \t\r\n]*[\]}]|[:,[][ \t\r\n]*[-+]?(?:[iI][nN][fF]|[nN][aA][nN])/;

/**
 * How much event text (UTF-16 units) is handled between two turns of the event loop while a batch
 * is staged. Reading a batch is synchronous work on the event loop — splitting, checking, appending
 * — and a source with data at hand (a string, a stream with much buffered) never waits for I/O, so
 * without these pauses a batch could hold the loop for as long as it takes to read: the API, the
 * health checks and the Temporal worker of the same process would wait. Appender flushes go with
 * the pauses: DuckDB's appender holds up to 204,800 rows and flushes them in one synchronous go
 * (~90 ms for 100,000 events of 1.1 KB), while 2 MiB flushes in a few milliseconds.
 */
const PAUSE_CHARS = 2 * 1024 * 1024;

/** Lets the event loop run what waits (I/O callbacks, timers) before going on. */
const pause = () => setImmediate();

/** A batch's stage table being filled, flushed every PAUSE_CHARS of text. */
class StageRows {
  private unflushed = 0;

  constructor(private readonly appender: DuckDBAppender) {}

  static async open(con: DuckDBConnection, stage: StageTable): Promise<StageRows> {
    return new StageRows(await con.createAppender(stage.table, 'main', stage.catalog));
  }

  /** Appends one line; true when that flushed the rows, and the caller should `await pause()`. */
  add(line: number, raw: string): boolean {
    this.appender.appendBigInt(BigInt(line));
    this.appender.appendVarchar(raw);
    this.appender.endRow();
    this.unflushed += raw.length;
    if (this.unflushed < PAUSE_CHARS) return false;
    this.appender.flushSync();
    this.unflushed = 0;
    return true;
  }

  close(): void {
    this.appender.closeSync();
  }
}

/**
 * Loads the candidate lines of a source into the stage table; rejects what is not a JSON object,
 * and an NDJSON line or JSON array element larger than `maxEventBytes` (UTF-8).
 */
export async function stageSource(
  con: DuckDBConnection,
  stage: StageTable,
  source: IngestSource,
  maxEventBytes: number,
  reject: (line: number, error: string) => void,
): Promise<void> {
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
  if (source.kind === 'ndjson' || source.kind === 'jsonl-file') return stageNdjson(con, stage, source, maxEventBytes, reject);
  // JSON arrays: elements are serialised by JSON.stringify, strict JSON by construction.
  const rows = await StageRows.open(con, stage);
  try {
    for (const { line, value } of jsonArrayElements(source.input)) {
      const c = checkValue(value);
      if (!c.ok) reject(line, c.error);
      else if (c.raw.length * 3 > maxEventBytes && Buffer.byteLength(c.raw, 'utf8') > maxEventBytes) reject(line, oversizedEventError(maxEventBytes));
      else if (rows.add(line, c.raw)) await pause();
    }
  } finally {
    rows.close();
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
async function stageNdjson(
  con: DuckDBConnection,
  stage: StageTable,
  source: IngestSource & { kind: 'ndjson' | 'jsonl-file' },
  maxEventBytes: number,
  reject: (line: number, error: string) => void,
): Promise<void> {
  const rows = await StageRows.open(con, stage);
  try {
    for await (const candidate of source.kind === 'ndjson' ? ndjsonLines(source.input, maxEventBytes) : jsonlFileLines(source.path, maxEventBytes)) {
      const { line } = candidate;
      if ('oversized' in candidate) {
        reject(line, oversizedEventError(maxEventBytes));
        continue;
      }
      if ('invalidUtf8' in candidate) {
        reject(line, INVALID_UTF8_ERROR);
        continue;
      }
      const { text } = candidate;
      const raw = text.trim();
      // `\u0000` escapes: only an actual U+0000 (not an escaped backslash before "u0000") is refused.
      if (raw.charCodeAt(0) !== 0x7b /* { */ || LENIENT_JSON_TEXT.test(raw) || raw.includes('\\u0000')) {
        const c = checkLine(text);
        if (!c.ok) {
          reject(line, c.error);
          continue;
        }
      }
      if (rows.add(line, raw)) await pause();
    }
  } catch (e) {
    if (e instanceof IngestSourceError) throw e;
    const where = source.kind === 'jsonl-file' ? `JSONL file ${source.path}` : 'NDJSON stream';
    throw new IngestSourceError(`cannot read ${where}: ${(e as Error).message}`, { cause: e });
  } finally {
    rows.close();
  }
  // Streamed a chunk of rows at a time, with pauses: a batch may hold hundreds of thousands of
  // lines that only DuckDB flags, each parsed again here for its error (~1.2 s for 100,000).
  let parsed = 0;
  let any = false;
  const unreadable = await con.stream(`SELECT line, raw FROM ${stage.qualified} WHERE NOT json_valid(raw) ORDER BY line`);
  for await (const chunk of unreadable.yieldRowObjects()) {
    for (const r of chunk) {
      any = true;
      const raw = String(r.raw);
      const c = checkLine(raw);
      // Strict JSON that DuckDB cannot read (an unpaired UTF-16 surrogate escape, "\ud800"): no
      // query could read its fields.
      reject(Number(r.line), c.ok ? 'invalid JSON: the event store cannot read this line (an unpaired \\uD800-\\uDFFF escape?)' : c.error);
      parsed += raw.length;
      if (parsed >= PAUSE_CHARS) {
        parsed = 0;
        await pause();
      }
    }
  }
  if (any) await exec(con, `DELETE FROM ${stage.qualified} WHERE NOT json_valid(raw)`);
}
