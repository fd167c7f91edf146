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

/** A line longer than the largest event taken: reported by its number, its text never kept. */
export interface OversizedLine {
  readonly line: number;
  readonly oversized: true;
}

/** The largest event (one NDJSON line, one JSON array element) taken by default: 1 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

/** Why an event over the cap is rejected, as its line error. */
export function oversizedEventError(maxEventBytes: number): string {
  return `the event is larger than ${maxEventBytes} bytes, the largest one event may be (DETFLOW_MAX_EVENT_KB); it was skipped`;
}

/** UTF-8 size of `text`, counted only when it could exceed `room` (a UTF-16 unit is at most 3 bytes). */
function overRoom(text: string, room: number): boolean {
  return text.length > room || (text.length * 3 > room && Buffer.byteLength(text, 'utf8') > room);
}

/**
 * Splits text arriving in pieces into lines, in time linear in the input: each piece is searched
 * for newlines once, from where the previous search stopped; the start of a line that runs over
 * pieces is kept as a list of parts, joined once when its newline arrives. A line over
 * `maxLineBytes` (UTF-8) is reported as soon as its parts go over, and the rest of it is read to
 * its newline and dropped, never kept.
 */
class LineSplitter {
  private line = 0;
  /** The line under way: its parts so far, and their UTF-8 size. */
  private parts: string[] = [];
  private partBytes = 0;
  /** The line under way went over the cap: it was reported, and is dropped up to its newline. */
  private skipping = false;

  constructor(private readonly maxLineBytes: number) {}

  /** The lines `text` completes, then the line under way if `text` takes it over the cap. */
  *push(text: string): Generator<SourceLine | OversizedLine> {
    let start = 0;
    let end: number;
    while ((end = text.indexOf('\n', start)) >= 0) {
      this.line++;
      const piece = text.slice(start, end);
      start = end + 1;
      if (this.skipping) this.skipping = false;
      else {
        const done = this.complete(piece);
        if (done) yield done;
      }
    }
    if (start >= text.length || this.skipping) return;
    const rest = start === 0 ? text : text.slice(start);
    this.parts.push(rest);
    this.partBytes += Buffer.byteLength(rest, 'utf8');
    if (this.partBytes > this.maxLineBytes) {
      this.parts = [];
      this.partBytes = 0;
      this.skipping = true;
      yield { line: this.line + 1, oversized: true };
    }
  }

  /** The last line, when the input does not end with a newline. */
  *end(): Generator<SourceLine | OversizedLine> {
    if (this.skipping || this.parts.length === 0) return;
    this.line++;
    const done = this.complete('');
    if (done) yield done;
  }

  /** The line under way, ended by `piece`; undefined for a blank line. */
  private complete(piece: string): SourceLine | OversizedLine | undefined {
    let text = piece;
    let tooLong: boolean;
    if (this.parts.length === 0) tooLong = overRoom(piece, this.maxLineBytes);
    else {
      tooLong = overRoom(piece, this.maxLineBytes - this.partBytes);
      this.parts.push(piece);
      text = tooLong ? '' : this.parts.join('');
      this.parts = [];
      this.partBytes = 0;
    }
    if (tooLong) return { line: this.line, oversized: true };
    text = stripCr(text);
    return text.trim() === '' ? undefined : { line: this.line, text };
  }
}

/**
 * Splits NDJSON into lines across chunk boundaries (multi-byte characters included), skipping
 * blanks, in time linear in the input. A line longer than `maxLineBytes` comes back as an
 * OversizedLine, without its text.
 */
export async function* ndjsonLines(
  input: string | AsyncIterable<string | Uint8Array>,
  maxLineBytes: number = DEFAULT_MAX_EVENT_BYTES,
): AsyncGenerator<SourceLine | OversizedLine> {
  const splitter = new LineSplitter(maxLineBytes);
  // for…of rather than yield*, which would wrap the lines of a sync generator in async iteration.
  if (typeof input === 'string') {
    for (const l of splitter.push(input)) yield l;
  } else {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    for await (const chunk of input) for (const l of splitter.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }))) yield l;
    for (const l of splitter.push(decoder.decode())) yield l;
  }
  for (const l of splitter.end()) yield l;
}

function stripCr(text: string): string {
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

export function jsonlFileLines(path: string, maxLineBytes?: number): AsyncGenerator<SourceLine | OversizedLine> {
  return ndjsonLines(createReadStream(path, { highWaterMark: 1 << 20 }), maxLineBytes);
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
