import fs from 'node:fs';
import path from 'node:path';
import { ApiError, type ApiClient } from './api-client';
import { EXIT, UsageError, type Io } from './io';

export type IngestOptions = {
  target: string;
  timestampField: string;
  product?: string;
  category?: string;
  service?: string;
  batchLines: number;
  format: 'text' | 'json';
};

type LineError = { line: number; error: string };
type FileOutcome = { file: string; accepted: number; rejected: number; errors: LineError[] };

/** The events of a file as JSON text lines, with the line (or array element, or row) each came from. */
async function eventLines(file: string): Promise<string[]> {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.parquet') {
    // DuckDB reads Parquet natively; each row becomes one JSON object. Loaded only for Parquet, so
    // every other command starts without its native library.
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    const con = await instance.connect();
    try {
      const reader = await con.runAndReadAll(`SELECT to_json(t)::VARCHAR AS j FROM read_parquet('${file.replace(/'/g, "''")}') t`);
      return reader.getRowObjects().map((r) => String(r.j));
    } finally {
      con.closeSync();
      instance.closeSync();
    }
  }
  const text = fs.readFileSync(file, 'utf8');
  if (ext === '.json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new UsageError(`${file} is not valid JSON (${(err as Error).message}); use .jsonl for one event per line`);
    }
    if (!Array.isArray(parsed)) throw new UsageError(`${file} must hold a JSON array of events`);
    return parsed.map((e) => JSON.stringify(e));
  }
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * `detflow ingest`: sends files of events (JSONL/NDJSON, JSON arrays, Parquet) to a target's event
 * store in batches, and reports rejected lines by their line in the file (row or element for
 * arrays and Parquet). Each batch is stored atomically by the service, so a re-run after a failure
 * repeats only what a batch did not store.
 */
export async function ingestCommand(io: Io, client: ApiClient, files: string[], options: IngestOptions): Promise<number> {
  const query = new URLSearchParams({ target: options.target, timestamp_field: options.timestampField });
  for (const key of ['product', 'category', 'service'] as const) if (options[key]) query.set(key, options[key]!);
  const outcomes: FileOutcome[] = [];
  for (const file of files) {
    if (!fs.existsSync(file)) throw new UsageError(`No such file: ${file}`);
    const lines = await eventLines(file);
    const outcome: FileOutcome = { file, accepted: 0, rejected: 0, errors: [] };
    for (let start = 0; start < lines.length; start += options.batchLines) {
      const batch = lines.slice(start, start + options.batchLines);
      try {
        const { body } = await client.requestText<{ accepted: number; rejected: number; errors: LineError[] }>(
          'POST',
          `/events?${query}`,
          batch.join('\n'),
          'application/x-ndjson',
        );
        outcome.accepted += body.accepted;
        outcome.rejected += body.rejected;
        outcome.errors.push(...body.errors.map((e) => ({ line: start + e.line, error: e.error })));
      } catch (err) {
        // Every line of the batch was rejected: the problem lists them as /body/line/<n>.
        if (!(err instanceof ApiError) || err.status !== 400 || !err.problem?.errors?.some((e) => e.pointer.startsWith('/body/line/'))) throw err;
        const errors = err.problem.errors.filter((e) => e.pointer.startsWith('/body/line/'));
        outcome.rejected += batch.filter((l) => l.trim() !== '').length;
        outcome.errors.push(...errors.map((e) => ({ line: start + Number(e.pointer.split('/').at(-1)), error: e.message })));
      }
    }
    outcomes.push(outcome);
  }
  if (options.format === 'json') io.out(JSON.stringify({ target: options.target, files: outcomes }, null, 2) + '\n');
  else {
    for (const o of outcomes) {
      io.out(`${o.file}: ${o.accepted} accepted, ${o.rejected} rejected\n`);
      for (const e of o.errors.slice(0, 50)) io.out(`${o.file}:${e.line}: ${e.error}\n`);
      if (o.errors.length > 50) io.out(`${o.file}: … ${o.errors.length - 50} more rejected lines\n`);
    }
  }
  return outcomes.some((o) => o.rejected > 0) ? EXIT.failed : EXIT.ok;
}
