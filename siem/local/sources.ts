import { createReadStream } from 'node:fs';
import { findInJson, findUnstorableText } from '../../lib/storable-text';

/** Where a batch of events comes from. Line numbers in errors are 1-based in every case. */
export type IngestSource =
  /** Newline-delimited JSON, as text or a byte/text stream (an HTTP body); blank lines are skipped. */
  | { readonly kind: 'ndjson'; readonly input: string | AsyncIterable<string | Uint8Array> }
  /** A JSON array of event objects; the "line" of an element is its 1-based position in the array. */
  | { readonly kind: 'json-array'; readonly input: string | readonly unknown[] }
  /** A JSON Lines file on disk (same rules as NDJSON). */
  | { readonly kind: 'jsonl-file'; readonly path: string }
  /** A Parquet file on disk, read by DuckDB; the "line" of a row is its 1-based row number. */
  | { readonly kind: 'parquet-file'; readonly path: string };

/** One candidate event: its line number and its text as received. */
export interface SourceLine {
  readonly line: number;
  readonly text: string;
}

/** Splits NDJSON into lines across chunk boundaries (multi-byte characters included), skipping blanks. */
export async function* ndjsonLines(input: string | AsyncIterable<string | Uint8Array>): AsyncGenerator<SourceLine> {
  if (typeof input === 'string') {
    let line = 0;
    let start = 0;
    while (start <= input.length) {
      let end = input.indexOf('\n', start);
      if (end < 0) end = input.length;
      line++;
      const text = stripCr(input.slice(start, end));
      if (text.trim() !== '') yield { line, text };
      start = end + 1;
    }
    return;
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending = '';
  let line = 0;
  for await (const chunk of input) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    let end: number;
    while ((end = pending.indexOf('\n', start)) >= 0) {
      line++;
      const text = stripCr(pending.slice(start, end));
      if (text.trim() !== '') yield { line, text };
      start = end + 1;
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending.trim() !== '') yield { line: line + 1, text: stripCr(pending) };
}

function stripCr(text: string): string {
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

export function jsonlFileLines(path: string): AsyncGenerator<SourceLine> {
  return ndjsonLines(createReadStream(path, { highWaterMark: 1 << 20 }));
}

/** Elements of a JSON array as candidate events; a document that is not an array is an error. */
export function* jsonArrayElements(input: string | readonly unknown[]): Generator<{ readonly line: number; readonly value: unknown }> {
  let elements: readonly unknown[];
  if (typeof input === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input);
    } catch (e) {
      throw new IngestSourceError(`JSON array source is not valid JSON: ${(e as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new IngestSourceError(`JSON array source is a ${describeJson(parsed)}, not an array`);
    elements = parsed;
  } else elements = input;
  for (let i = 0; i < elements.length; i++) yield { line: i + 1, value: elements[i] };
}

/** The whole source is unusable (not one bad line): nothing of the batch is stored. */
export class IngestSourceError extends Error {
  override readonly name = 'IngestSourceError';
}

export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export type CandidateCheck = { readonly ok: true; readonly raw: string } | { readonly ok: false; readonly error: string };

/**
 * Strict JSON (JSON.parse, unlike DuckDB's lenient reader that accepts trailing commas and NaN), and
 * an object at the top: the stored `raw` must parse anywhere downstream.
 */
export function checkLine(text: string): CandidateCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `invalid JSON: ${(e as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: `expected a JSON object, got ${describeJson(value)}` };
  const unstorable = unstorableError(value);
  if (unstorable) return { ok: false, error: unstorable };
  return { ok: true, raw: text.trim() };
}

/**
 * An event's alerts keep the event in PostgreSQL, which cannot store U+0000 or an unpaired
 * surrogate: such an event would stop its rules' detection at its first match, so it is refused.
 */
function unstorableError(value: unknown): string | undefined {
  const found = findUnstorableText(value);
  return found ? `the event ${found.reason} at ${found.pointer || '/'}, which alerts (kept in PostgreSQL) cannot store` : undefined;
}

/**
 * A number JSON text can hold but a JavaScript value cannot (`1e400` parses to Infinity), which
 * JSON.stringify would silently turn into null: such an event is refused rather than altered.
 */
function nonFiniteNumberAt(value: unknown): string | undefined {
  const found = findInJson(value, (v) => (typeof v === 'number' && !Number.isFinite(v) ? true : undefined));
  return found ? found.pointer || '/' : undefined;
}

export function checkValue(value: unknown): CandidateCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, error: `expected a JSON object, got ${describeJson(value)}` };
  const unstorable = unstorableError(value);
  if (unstorable) return { ok: false, error: unstorable };
  const huge = nonFiniteNumberAt(value);
  if (huge) return { ok: false, error: `the number at ${huge} is beyond the range of a double; send it as a string to keep it` };
  try {
    return { ok: true, raw: JSON.stringify(value) };
  } catch (e) {
    return { ok: false, error: `not serialisable as JSON: ${(e as Error).message}` };
  }
}
