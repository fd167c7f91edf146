import { isUtf8 } from 'node:buffer';
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

/** A line whose bytes are not UTF-8: reported by its number, its text never kept. */
export interface InvalidUtf8Line {
  readonly line: number;
  readonly invalidUtf8: true;
}

/** Why a line that is not UTF-8 is rejected, as its line error. */
export const INVALID_UTF8_ERROR = 'the line is not valid UTF-8 (JSON text must be UTF-8); it was skipped';

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
  /** The line under way holds bytes that are not UTF-8: it is reported as such when it ends. */
  private invalid = false;

  constructor(private readonly maxLineBytes: number) {}

  /** The lines `text` completes, then the line under way if `text` takes it over the cap. */
  *push(text: string): Generator<SourceLine | OversizedLine | InvalidUtf8Line> {
    let start = 0;
    let end: number;
    while ((end = text.indexOf('\n', start)) >= 0) {
      this.line++;
      const piece = text.slice(start, end);
      start = end + 1;
      if (this.skipping) {
        this.skipping = false;
        this.invalid = false;
      } else {
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
  /** The bytes of the line under way were not UTF-8 (see utf8Pieces). */
  markInvalid(): void {
    if (!this.skipping) this.invalid = true;
  }

  *end(): Generator<SourceLine | OversizedLine | InvalidUtf8Line> {
    if (this.skipping || this.parts.length === 0) return;
    this.line++;
    const done = this.complete('');
    if (done) yield done;
  }

  /** The line under way, ended by `piece`; undefined for a blank line. */
  private complete(piece: string): SourceLine | OversizedLine | InvalidUtf8Line | undefined {
    const invalid = this.invalid;
    this.invalid = false;
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
    if (invalid) return { line: this.line, invalidUtf8: true };
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
): AsyncGenerator<SourceLine | OversizedLine | InvalidUtf8Line> {
  const splitter = new LineSplitter(maxLineBytes);
  // for…of rather than yield*, which would wrap the lines of a sync generator in async iteration.
  if (typeof input === 'string') {
    for (const l of splitter.push(input)) yield l;
  } else {
    const bytes = new Utf8Chunks(splitter);
    for await (const chunk of input) {
      if (typeof chunk !== 'string') for (const l of bytes.push(chunk)) yield l;
      else {
        for (const l of bytes.flush()) yield l;
        for (const l of splitter.push(chunk)) yield l;
      }
    }
    for (const l of bytes.flush()) yield l;
  }
  for (const l of splitter.end()) yield l;
}

/** Bytes at the end of `buf` that start a character the next chunk completes (0 to 3). */
function incompleteTail(buf: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back] ?? 0;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/**
 * Decodes a byte stream for the line splitter. A chunk that is UTF-8 (the usual case, checked
 * natively) is decoded whole; otherwise it is split at its newline bytes (0x0A is never part of a
 * multi-byte character) and each line that is not UTF-8 is marked so, to be rejected by its number
 * while the other lines are kept. A character cut by a chunk boundary waits for the next chunk.
 */
class Utf8Chunks {
  private pending: Uint8Array | null = null;

  constructor(private readonly splitter: LineSplitter) {}

  *push(chunk: Uint8Array): Generator<SourceLine | OversizedLine | InvalidUtf8Line> {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const tail = incompleteTail(buf);
    this.pending = tail > 0 ? Uint8Array.prototype.slice.call(buf, buf.length - tail) : null;
    yield* this.decode(tail > 0 ? buf.subarray(0, buf.length - tail) : buf);
  }

  /** The bytes still waiting for the rest of their character: the input ended inside it. */
  *flush(): Generator<SourceLine | OversizedLine | InvalidUtf8Line> {
    const rest = this.pending;
    this.pending = null;
    if (rest) yield* this.decode(Buffer.from(rest));
  }

  private *decode(buf: Buffer): Generator<SourceLine | OversizedLine | InvalidUtf8Line> {
    if (isUtf8(buf)) {
      yield* this.splitter.push(buf.toString('utf8'));
      return;
    }
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      const piece = buf.subarray(start, nl < 0 ? buf.length : nl);
      if (!isUtf8(piece)) this.splitter.markInvalid();
      yield* this.splitter.push(nl < 0 ? piece.toString('utf8') : `${piece.toString('utf8')}\n`);
      if (nl < 0) return;
      start = nl + 1;
    }
  }
}

function stripCr(text: string): string {
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

export function jsonlFileLines(path: string, maxLineBytes?: number): AsyncGenerator<SourceLine | OversizedLine | InvalidUtf8Line> {
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

/**
 * Too many batches are under way for one more: it is refused before anything of it is read, so
 * a writer that falls behind answers "later" at once instead of holding every batch in memory
 * while each waits longer than the last.
 */
export class IngestBacklogFull extends Error {
  override readonly name = 'IngestBacklogFull';
  constructor(
    readonly pending: number,
    readonly limit: number,
  ) {
    super(`The event store has ${pending} ${pending === 1 ? 'batch' : 'batches'} under way (the limit is ${limit}); nothing of this batch was read or stored`);
  }
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
