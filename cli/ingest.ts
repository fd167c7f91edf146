import fs from 'node:fs';
import path from 'node:path';
import { ApiError, type ApiClient } from './api-client';
import { EXIT, UsageError, type Io } from './io';
import type * as DuckDb from '@duckdb/node-api';

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
type LogsourceCount = { product: string | null; category: string | null; service: string | null; events: number };
type Warning = { code: string; events: number; message: string };
type IngestAnswer = { accepted: number; rejected: number; errors: LineError[]; logsources?: LogsourceCount[]; logsources_truncated?: boolean; warnings?: Warning[] };
type FileOutcome = {
  file: string;
  accepted: number;
  rejected: number;
  errors: LineError[];
  /** Stored events by logsource over the file's batches, most first. */
  logsources: LogsourceCount[];
  logsources_truncated: boolean;
  /** The service's warnings over the file's batches, one per code with the events summed. */
  warnings: Warning[];
};

/** Adds a batch's per-logsource counts and warnings to its file's. */
function addStored(outcome: FileOutcome, body: IngestAnswer): void {
  for (const l of body.logsources ?? []) {
    const same = outcome.logsources.find((o) => o.product === l.product && o.category === l.category && o.service === l.service);
    if (same) same.events += l.events;
    else outcome.logsources.push({ ...l });
  }
  outcome.logsources.sort((a, b) => b.events - a.events);
  if (body.logsources_truncated) outcome.logsources_truncated = true;
  for (const w of body.warnings ?? []) {
    const same = outcome.warnings.find((o) => o.code === w.code);
    if (same) same.events += w.events;
    else outcome.warnings.push({ ...w });
  }
}

function logsourceText(l: LogsourceCount): string {
  const parts = (['product', 'category', 'service'] as const).filter((k) => l[k] !== null).map((k) => `${k}=${l[k]}`);
  return parts.length === 0 ? 'no logsource' : `logsource ${parts.join(' ')}`;
}

/** A warning's message: the service's, or for events without a logsource (summed over batches), the options of this command that fix it. */
function warningText(w: Warning): string {
  if (w.code !== 'no_logsource') return w.message;
  return `${w.events} ${w.events === 1 ? 'event was' : 'events were'} stored with no logsource (no product, category or service), so no rule with a logsource will ever match ${w.events === 1 ? 'it' : 'them'}. Name their logsource with --product and --category (or --service).`;
}

/**
 * DuckDB is an optional peer of the packaged CLI (its native library is larger than the rest of the
 * CLI together), so the bundle leaves it out: installed next to `detflow`, Parquet works.
 */
async function loadDuckDb(): Promise<typeof DuckDb> {
  try {
    return await import('@duckdb/node-api');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND' && (err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new UsageError('Reading Parquet needs the optional package @duckdb/node-api next to detflow: npm install -g @duckdb/node-api');
  }
}

/** The events of a file as JSON text lines, with the line (or array element, or row) each came from. */
async function eventLines(file: string): Promise<string[]> {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.parquet') {
    // DuckDB reads Parquet natively; each row becomes one JSON object. Loaded only for Parquet, so
    // every other command starts without its native library.
    const { DuckDBInstance } = await loadDuckDb();
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
    const outcome: FileOutcome = { file, accepted: 0, rejected: 0, errors: [], logsources: [], logsources_truncated: false, warnings: [] };
    for (let start = 0; start < lines.length; start += options.batchLines) {
      const batch = lines.slice(start, start + options.batchLines);
      try {
        const { body } = await client.requestText<IngestAnswer>('POST', `/events?${query}`, batch.join('\n'), 'application/x-ndjson');
        outcome.accepted += body.accepted;
        outcome.rejected += body.rejected;
        outcome.errors.push(...body.errors.map((e) => ({ line: start + e.line, error: e.error })));
        addStored(outcome, body);
      } catch (err) {
        // Every line of the batch was rejected: the problem lists them as /body/line/<n>.
        if (!(err instanceof ApiError) || err.status !== 400 || !err.problem?.errors?.some((e) => e.pointer.startsWith('/body/line/'))) throw err;
        const errors = err.problem.errors.filter((e) => e.pointer.startsWith('/body/line/'));
        outcome.rejected += batch.filter((l) => l.trim() !== '').length;
        outcome.errors.push(...errors.map((e) => ({ line: start + Number(e.pointer.split('/').at(-1)), error: e.message })));
      }
    }
    for (const w of outcome.warnings) w.message = warningText(w);
    outcomes.push(outcome);
  }
  if (options.format === 'json') io.out(JSON.stringify({ target: options.target, files: outcomes }, null, 2) + '\n');
  else {
    for (const o of outcomes) {
      io.out(`${o.file}: ${o.accepted} accepted, ${o.rejected} rejected\n`);
      for (const e of o.errors.slice(0, 50)) io.out(`${o.file}:${e.line}: ${e.error}\n`);
      if (o.errors.length > 50) io.out(`${o.file}: … ${o.errors.length - 50} more rejected lines\n`);
      for (const l of o.logsources) io.out(`${o.file}: ${l.events} stored with ${logsourceText(l)}\n`);
      if (o.logsources_truncated) io.out(`${o.file}: … more logsources not listed\n`);
      for (const w of o.warnings) io.out(`${o.file}: warning: ${w.message}\n`);
    }
  }
  return outcomes.some((o) => o.rejected > 0) ? EXIT.failed : EXIT.ok;
}
