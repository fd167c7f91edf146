import type { DuckDBConnection } from '@duckdb/node-api';
import { exec, rows as queryRows } from './duckdb';
import { sqlLiteral } from './fields';
import type { StageTable } from './ingest-write';
import { checkLine, checkValue, IngestSourceError, jsonArrayElements, jsonlFileLines, ndjsonLines, type IngestSource } from './sources';

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

/** Loads the candidate lines of a source into the stage table; rejects what is not a JSON object. */
export async function stageSource(con: DuckDBConnection, stage: StageTable, source: IngestSource, reject: (line: number, error: string) => void): Promise<void> {
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
  if (source.kind === 'ndjson' || source.kind === 'jsonl-file') return stageNdjson(con, stage, source, reject);
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
async function stageNdjson(
  con: DuckDBConnection,
  stage: StageTable,
  source: IngestSource & { kind: 'ndjson' | 'jsonl-file' },
  reject: (line: number, error: string) => void,
): Promise<void> {
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
