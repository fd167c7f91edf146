import { LineCounter, isAlias, isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node, type Pair } from 'yaml';
import type { SourcePosition } from './errors';

/**
 * A minimal YAML tree (maps, sequences, scalars with source offsets) that the Sigma model is built
 * from. Two producers fill it: a fast parser for the block-style YAML subset Sigma rules are written
 * in, and the full `yaml` library, used whenever the fast parser meets anything outside that subset
 * (anchors, tags, multi-line quoted scalars, errors...). Parsing YAML dominates linting time, and
 * the fast path is several times quicker than building `yaml` Documents.
 */

export type YValue = string | number | boolean | null;

export interface YScalar {
  readonly kind: 'scalar';
  readonly value: YValue;
  readonly style: 'plain' | 'single' | 'double' | 'block';
  readonly offset: number;
}
export interface YSeq {
  readonly kind: 'seq';
  readonly items: YNode[];
  readonly offset: number;
}
export interface YPair {
  readonly key: string;
  readonly keyOffset: number;
  readonly value: YNode;
}
export interface YMap {
  readonly kind: 'map';
  readonly pairs: YPair[];
  readonly offset: number;
}
export type YNode = YScalar | YSeq | YMap;

export interface YamlProblem {
  readonly code: 'yaml-syntax' | 'yaml-duplicate-key';
  readonly message: string;
  readonly offset: number;
}

export interface YamlDocument {
  /** null for an empty document. */
  readonly root: YNode | null;
  readonly problems: readonly YamlProblem[];
}

export interface YamlStream {
  readonly documents: YamlDocument[];
  readonly position: (offset: number) => SourcePosition;
  /** Which producer built the tree (exposed for tests and benchmarks). */
  readonly producer: 'fast' | 'yaml';
}

export function isQuoted(node: YScalar): boolean {
  return node.style === 'single' || node.style === 'double';
}

export function toJS(node: YNode | null): unknown {
  if (node === null) return null;
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'seq') return node.items.map(toJS);
  const out: Record<string, unknown> = {};
  for (const p of node.pairs) out[p.key] = toJS(p.value);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shared helpers.
// ---------------------------------------------------------------------------------------------

function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function positionFn(starts: number[]): (offset: number) => SourcePosition {
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 };
  };
}

const INT_RE = /^[-+]?[0-9]+$/;
const FLOAT_RE = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

/** YAML 1.2 core schema resolution of a plain scalar (what the `yaml` library does by default). */
export function resolvePlain(text: string): YValue {
  switch (text) {
    case '':
    case '~':
    case 'null':
    case 'Null':
    case 'NULL':
      return null;
    case 'true':
    case 'True':
    case 'TRUE':
      return true;
    case 'false':
    case 'False':
    case 'FALSE':
      return false;
    case '.inf':
    case '.Inf':
    case '.INF':
    case '+.inf':
    case '+.Inf':
    case '+.INF':
      return Infinity;
    case '-.inf':
    case '-.Inf':
    case '-.INF':
      return -Infinity;
    case '.nan':
    case '.NaN':
    case '.NAN':
      return NaN;
  }
  const c = text.charCodeAt(0);
  // Only strings starting with a digit, sign or dot can be numbers: skip the regexes otherwise.
  if (!((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)) return text;
  if (INT_RE.test(text)) return Number(text);
  if (/^0x[0-9a-fA-F]+$/.test(text)) return parseInt(text.slice(2), 16);
  if (/^0o[0-7]+$/.test(text)) return parseInt(text.slice(2), 8);
  if (FLOAT_RE.test(text)) return Number(text);
  return text;
}

// ---------------------------------------------------------------------------------------------
// Fallback: the full `yaml` library.
// ---------------------------------------------------------------------------------------------

/**
 * Aliases (`*name`) stand for the node anchored as `&name`, as every YAML loader (pySigma's
 * included) reads them. Each alias is expanded where it is used, so a few nested aliases can
 * stand for billions of nodes: past this many nodes in one document, the document is refused.
 */
const MAX_EXPANDED_NODES = 100_000;

class AliasExpansionTooLarge extends Error {}

type Expansion = { doc: Document.Parsed; remaining: number };

function fromYamlNode(node: unknown, fallbackOffset: number, ctx: Expansion): YNode {
  if (--ctx.remaining < 0) throw new AliasExpansionTooLarge();
  if (isAlias(node)) {
    const target = node.resolve(ctx.doc);
    // An alias to an anchor that does not exist is already a parse error of the document.
    return target ? fromYamlNode(target, node.range?.[0] ?? fallbackOffset, ctx) : { kind: 'scalar', value: null, style: 'plain', offset: fallbackOffset };
  }
  if (isMap(node)) {
    return {
      kind: 'map',
      offset: node.range?.[0] ?? fallbackOffset,
      pairs: node.items.map((p: Pair) => {
        const key = p.key as Node | null;
        const keyOffset = key?.range?.[0] ?? fallbackOffset;
        return { key: isScalar(key) ? String(key.value) : String(key), keyOffset, value: fromYamlNode(p.value, keyOffset, ctx) };
      }),
    };
  }
  if (isSeq(node)) return { kind: 'seq', offset: node.range?.[0] ?? fallbackOffset, items: node.items.map((i) => fromYamlNode(i, fallbackOffset, ctx)) };
  if (isScalar(node)) {
    const v = node.value;
    const value: YValue = v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : String(v);
    const style = node.type === 'QUOTE_SINGLE' ? 'single' : node.type === 'QUOTE_DOUBLE' ? 'double' : node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED' ? 'block' : 'plain';
    return { kind: 'scalar', value, style, offset: node.range?.[0] ?? fallbackOffset };
  }
  return { kind: 'scalar', value: null, style: 'plain', offset: fallbackOffset };
}

export function parseYamlFull(text: string): YamlStream {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const list: Document.Parsed[] = Array.isArray(docs) ? docs : [];
  const documents = list.map((doc): YamlDocument => {
    const problems = doc.errors.map((e) => ({
      code: e.code === 'DUPLICATE_KEY' ? ('yaml-duplicate-key' as const) : ('yaml-syntax' as const),
      message: e.message.split('\n')[0] ?? e.message,
      offset: e.pos[0],
    }));
    const contents = doc.contents as Node | null;
    let root: YNode | null = null;
    try {
      root = contents === null || (isScalar(contents) && contents.value === null) ? null : fromYamlNode(contents, 0, { doc, remaining: MAX_EXPANDED_NODES });
    } catch (err) {
      if (!(err instanceof AliasExpansionTooLarge)) throw err;
      problems.push({ code: 'yaml-syntax', message: `YAML aliases expand this document to more than ${MAX_EXPANDED_NODES.toLocaleString('en-US')} nodes`, offset: contents?.range?.[0] ?? 0 });
    }
    return { root, problems };
  });
  if (!Array.isArray(docs)) {
    const errs = (docs as { errors?: Array<{ message: string; pos: [number, number] }> }).errors ?? [];
    documents.push({ root: null, problems: errs.map((e) => ({ code: 'yaml-syntax', message: e.message, offset: e.pos[0] })) });
  }
  const starts = lineStartsOf(text);
  return { documents, position: positionFn(starts), producer: 'yaml' };
}

// ---------------------------------------------------------------------------------------------
// Fast path: block-style subset. Any surprise throws Unsupported and the caller falls back.
// ---------------------------------------------------------------------------------------------

class Unsupported extends Error {}
const bail = (): never => {
  throw new Unsupported();
};

interface Line {
  /** Offset of the first content character. */
  start: number;
  indent: number;
  /** Content from `start` to end of line (no newline, no trailing \r). */
  text: string;
  /** Whitespace only, or a comment line. */
  blank: boolean;
  /** Whitespace only (a `#` line is content inside block scalars). */
  empty: boolean;
  /** The line from its indent on, trailing spaces kept (block scalars preserve them). */
  rawTail(): string;
}

function commentStart(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text.charCodeAt(i) === 35 /* # */ && (i === 0 || text[i - 1] === ' ' || text[i - 1] === '\t')) return i;
  }
  return -1;
}

function stripComment(text: string): string {
  const c = commentStart(text, 0);
  return (c === -1 ? text : text.slice(0, c)).trimEnd();
}

class FastParser {
  constructor(
    private readonly lines: Line[],
    private i: number,
    private readonly end: number,
  ) {}

  private skipBlank(): void {
    while (this.i < this.end && this.lines[this.i]!.blank) this.i++;
  }

  parseDocument(): YNode | null {
    this.skipBlank();
    if (this.i >= this.end) return null;
    const first = this.lines[this.i]!;
    const node = this.parseNode(first.indent);
    this.skipBlank();
    if (this.i < this.end) bail();
    return node;
  }

  /** Parses the block starting at the current line, whose indent is `indent`. */
  private parseNode(indent: number): YNode {
    const line = this.lines[this.i]!;
    if (line.indent !== indent) bail();
    if (line.text === '-' || line.text.startsWith('- ')) return this.parseSeq(indent);
    if (this.findKey(line.text) !== undefined) return this.parseMap(indent);
    // A lone scalar block (e.g. a document that is just a string): rare for Sigma; leave to yaml.
    return bail();
  }

  /** Index of the `:` separating a plain/quoted key from its value, or undefined. */
  private findKey(text: string): { key: string; colon: number } | undefined {
    const c = text[0];
    if (c === "'" || c === '"') {
      const close = c === "'" ? this.singleQuotedEnd(text, 0) : this.doubleQuotedEnd(text, 0);
      if (close === -1 || text[close + 1] !== ':' || (close + 2 < text.length && text[close + 2] !== ' ')) return undefined;
      return { key: this.quoted(text.slice(0, close + 1)), colon: close + 1 };
    }
    if (c === undefined || '[]{},&*!|>%@`?#-:'.includes(c)) {
      if (c !== '-' || text[1] === ' ' || text.length === 1) return undefined;
    }
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch === 58 /* : */ && (i + 1 === text.length || text[i + 1] === ' ')) {
        const key = text.slice(0, i).trimEnd();
        return key === '' ? undefined : { key, colon: i };
      }
      if (ch === 35 /* # */ && i > 0 && text[i - 1] === ' ') return undefined;
    }
    return undefined;
  }

  private singleQuotedEnd(text: string, from: number): number {
    for (let i = from + 1; i < text.length; i++) {
      if (text[i] === "'") {
        if (text[i + 1] === "'") i++;
        else return i;
      }
    }
    return -1;
  }

  private doubleQuotedEnd(text: string, from: number): number {
    for (let i = from + 1; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '"') return i;
    }
    return -1;
  }

  /** Value of a complete quoted scalar token (including its quotes). */
  private quoted(token: string): string {
    const body = token.slice(1, -1);
    if (token[0] === "'") return body.includes("''") ? body.replace(/''/g, "'") : body;
    if (!body.includes('\\')) return body;
    let out = '';
    for (let i = 0; i < body.length; i++) {
      const ch = body[i]!;
      if (ch !== '\\') {
        out += ch;
        continue;
      }
      const e = body[++i];
      switch (e) {
        case '\\': out += '\\'; break;
        case '"': out += '"'; break;
        case '/': out += '/'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '0': out += '\0'; break;
        case ' ': out += ' '; break;
        case 'x': out += String.fromCharCode(parseInt(body.slice(i + 1, i + 3), 16)); i += 2; break;
        case 'u': out += String.fromCharCode(parseInt(body.slice(i + 1, i + 5), 16)); i += 4; break;
        default: bail();
      }
    }
    return out;
  }

  private parseMap(indent: number): YMap {
    const pairs: YPair[] = [];
    const seen = new Set<string>();
    const offset = this.lines[this.i]!.start;
    while (true) {
      this.skipBlank();
      if (this.i >= this.end) break;
      const line = this.lines[this.i]!;
      if (line.indent < indent) break;
      if (line.indent > indent) bail();
      const k = this.findKey(line.text);
      if (!k) bail();
      const { key, colon } = k!;
      // Duplicate keys are errors: let the yaml library report them with its message.
      if (seen.has(key)) bail();
      seen.add(key);
      const keyOffset = line.start;
      const rest = line.text.slice(colon + 1);
      const restTrim = rest.trimStart();
      // Offsets come from the untrimmed line so trailing spaces count as they do for the yaml library.
      const raw = line.rawTail();
      let j = colon + 1;
      while (raw[j] === ' ' || raw[j] === '\t') j++;
      const restOffset = line.start + j;
      this.i++;
      pairs.push({ key, keyOffset, value: this.parseValue(restTrim, restOffset, indent, true) });
    }
    return { kind: 'map', pairs, offset };
  }

  /** Value after `key:` or `- ` on the same line (possibly empty), for a block at `indent`. */
  /** `inMap`: a map value may be a block sequence at the key's own indent; a sequence item may not. */
  private parseValue(text: string, offset: number, indent: number, inMap: boolean): YNode {
    const content = text.startsWith('#') ? '' : text;
    if (content === '') {
      this.skipBlank();
      const next = this.i < this.end ? this.lines[this.i]! : undefined;
      if (next && next.indent > indent) return this.parseNode(next.indent);
      if (inMap && next && next.indent === indent && (next.text === '-' || next.text.startsWith('- '))) return this.parseSeq(indent);
      // Like the yaml library, an implicit null sits right after `key:` and its spaces.
      return { kind: 'scalar', value: null, style: 'plain', offset };
    }
    const c = content[0]!;
    if (c === '|' || c === '>') return this.blockScalar(content, offset, indent);
    if (c === '[' || c === '{') return this.flowLine(content, offset);
    if (c === "'" || c === '"') {
      const close = c === "'" ? this.singleQuotedEnd(content, 0) : this.doubleQuotedEnd(content, 0);
      if (close === -1) bail();
      const after = content.slice(close + 1);
      if (after.trim() !== '' && !/^[ \t]+#/.test(after)) bail();
      this.noContinuation(indent);
      return { kind: 'scalar', value: this.quoted(content.slice(0, close + 1)), style: c === "'" ? 'single' : 'double', offset };
    }
    // YAML indicators cannot start a plain scalar; `- `/`? `/`: ` here would be block syntax on the key's line.
    if ('&*!%@`]},'.includes(c)) bail();
    if ((c === '?' || c === '-' || c === ':') && (content.length === 1 || content[1] === ' ')) bail();
    let plain = stripComment(content);
    // Multi-line plain scalars fold their continuation lines with single spaces.
    while (true) {
      const start = this.i;
      let blanks = 0;
      while (this.i < this.end && this.lines[this.i]!.blank) {
        blanks++;
        this.i++;
      }
      const next = this.i < this.end ? this.lines[this.i]! : undefined;
      if (!next || next.indent <= indent) {
        this.i = start;
        break;
      }
      if (commentStart(content, 0) !== -1 || next.text.startsWith('#')) bail();
      const t = stripComment(next.text);
      if (this.findKey(t) !== undefined || t.startsWith('- ') || commentStart(next.text, 0) !== -1) bail();
      plain += blanks > 0 ? '\n'.repeat(blanks) + t : ` ${t}`;
      this.i++;
    }
    if (plain.includes(': ') || plain.endsWith(':') || plain.includes(' #')) bail();
    return { kind: 'scalar', value: resolvePlain(plain), style: 'plain', offset };
  }

  private noContinuation(indent: number): void {
    let j = this.i;
    while (j < this.end && this.lines[j]!.blank) j++;
    if (j < this.end && this.lines[j]!.indent > indent) bail();
  }

  private parseSeq(indent: number): YSeq {
    const items: YNode[] = [];
    const offset = this.lines[this.i]!.start;
    while (true) {
      this.skipBlank();
      if (this.i >= this.end) break;
      const line = this.lines[this.i]!;
      if (line.indent !== indent || !(line.text === '-' || line.text.startsWith('- '))) {
        if (line.indent > indent) bail();
        break;
      }
      const rest = line.text.slice(1);
      const restTrim = rest.trimStart();
      const innerIndent = indent + 1 + (rest.length - restTrim.length);
      const raw = line.rawTail();
      let j = 1;
      while (raw[j] === ' ') j++;
      const innerOffset = line.start + (restTrim === '' ? j : 1 + (rest.length - restTrim.length));
      if (restTrim === '' || restTrim.startsWith('#')) {
        this.i++;
        items.push(this.parseValue('', innerOffset, indent, false));
        continue;
      }
      if (restTrim.startsWith('- ') || restTrim === '-' || this.findKey(restTrim) !== undefined) {
        // Compact nested block (`- key: v` / `- - x`): re-read this line as if it started at innerIndent.
        const tail = line.rawTail().slice(innerIndent - indent);
        this.lines[this.i] = { start: innerOffset, indent: innerIndent, text: restTrim, blank: false, empty: false, rawTail: () => tail };
        items.push(this.parseNode(innerIndent));
        continue;
      }
      this.i++;
      items.push(this.parseValue(restTrim, innerOffset, indent, false));
    }
    return { kind: 'seq', items, offset };
  }

  private blockScalar(header: string, offset: number, indent: number): YScalar {
    const m = /^([|>])([-+]?)\s*(#.*)?$/.exec(header);
    if (!m) bail();
    const literal = m![1] === '|';
    const chomp = m![2];
    const body: Line[] = [];
    while (this.i < this.end) {
      const l = this.lines[this.i]!;
      if (!l.empty && l.indent <= indent) break;
      body.push(l);
      this.i++;
    }
    // Trailing blank lines belong to the scalar only for chomping purposes.
    let trailing = 0;
    while (body.length > 0 && body[body.length - 1]!.empty) {
      body.pop();
      trailing++;
    }
    if (body.length === 0) return { kind: 'scalar', value: '', style: 'block', offset };
    const contentIndent = body[0]!.indent;
    const texts: string[] = [];
    for (const l of body) {
      if (l.empty) {
        if (l.indent > contentIndent) bail();
        texts.push('');
        continue;
      }
      if (l.indent < contentIndent) bail();
      texts.push(' '.repeat(l.indent - contentIndent) + l.rawTail());
    }
    let value: string;
    if (literal) value = texts.join('\n');
    else {
      if (texts.some((t) => t.startsWith(' '))) bail();
      value = '';
      let prevEmpty = true;
      for (const t of texts) {
        if (t === '') {
          value += '\n';
          prevEmpty = true;
        } else {
          value += prevEmpty ? t : ` ${t}`;
          prevEmpty = false;
        }
      }
    }
    if (chomp === '+') value += '\n'.repeat(trailing + 1);
    else if (chomp === '') value += '\n';
    return { kind: 'scalar', value, style: 'block', offset };
  }

  /** `[a, 'b', 3]` or `{gt: 1, field: x}` on a single line. */
  private flowLine(content: string, offset: number): YNode {
    let pos = 0;
    const ws = (): void => {
      while (content[pos] === ' ') pos++;
    };
    const scalar = (stops: string): YScalar => {
      ws();
      const c = content[pos];
      const at = offset + pos;
      if (c === "'" || c === '"') {
        const close = c === "'" ? this.singleQuotedEnd(content, pos) : this.doubleQuotedEnd(content, pos);
        if (close === -1) bail();
        const v = this.quoted(content.slice(pos, close + 1));
        pos = close + 1;
        return { kind: 'scalar', value: v, style: c === "'" ? 'single' : 'double', offset: at };
      }
      if (c === undefined || '[{&*!|>%@`#'.includes(c)) bail();
      const startPos = pos;
      while (pos < content.length && !stops.includes(content[pos]!)) pos++;
      const raw = content.slice(startPos, pos).trimEnd();
      if (raw.includes(': ') || raw.includes(' #')) bail();
      return { kind: 'scalar', value: resolvePlain(raw), style: 'plain', offset: at };
    };
    let node: YNode;
    if (content[0] === '[') {
      pos = 1;
      const items: YNode[] = [];
      ws();
      if (content[pos] === ']') pos++;
      else {
        while (true) {
          items.push(scalar(',]'));
          ws();
          if (content[pos] === ',') {
            pos++;
            ws();
            if (content[pos] === ']') {
              pos++;
              break;
            }
            continue;
          }
          if (content[pos] === ']') {
            pos++;
            break;
          }
          bail();
        }
      }
      node = { kind: 'seq', items, offset };
    } else {
      pos = 1;
      const pairs: YPair[] = [];
      const seen = new Set<string>();
      ws();
      if (content[pos] === '}') pos++;
      else {
        while (true) {
          const k = scalar(':,}');
          if (content[pos] !== ':') bail();
          pos++;
          const v = scalar(',}');
          const key = String(k.value);
          if (seen.has(key)) bail();
          seen.add(key);
          pairs.push({ key, keyOffset: k.offset, value: v });
          ws();
          if (content[pos] === ',') {
            pos++;
            continue;
          }
          if (content[pos] === '}') {
            pos++;
            break;
          }
          bail();
        }
      }
      node = { kind: 'map', pairs, offset };
    }
    const after = content.slice(pos).trim();
    if (after !== '' && !after.startsWith('#')) bail();
    return node;
  }
}

/** Splits into lines; returns undefined when the text uses features the fast path does not take. */
function splitLines(text: string): Line[] | undefined {
  const out: Line[] = [];
  let offset = 0;
  while (offset <= text.length) {
    let nl = text.indexOf('\n', offset);
    if (nl === -1) nl = text.length;
    let lineEnd = nl;
    if (text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
    let indent = 0;
    while (text.charCodeAt(offset + indent) === 32) indent++;
    if (text.charCodeAt(offset + indent) === 9) {
      // Tabs are fine inside a line but not as indentation.
      const rest = text.slice(offset + indent, lineEnd).trim();
      if (rest !== '' && !rest.startsWith('#')) return undefined;
    }
    const lineText = text.slice(offset + indent, lineEnd);
    const trimmed = lineText.trim();
    const start = offset + indent;
    const full = text.slice(offset, lineEnd);
    out.push({
      start,
      indent,
      text: lineText.trimEnd(),
      blank: trimmed === '' || trimmed.startsWith('#'),
      empty: trimmed === '',
      rawTail: () => full.slice(indent),
    });
    if (nl === text.length) break;
    offset = nl + 1;
  }
  return out;
}

export function parseYamlFast(text: string): YamlStream | undefined {
  if (text.charCodeAt(0) === 0xfeff || /^ *\t/m.test(text)) return undefined;
  const lines = splitLines(text);
  if (!lines) return undefined;
  const documents: YamlDocument[] = [];
  let docStart = 0;
  const flush = (end: number): void => {
    documents.push({ root: new FastParser(lines, docStart, end).parseDocument(), problems: [] });
  };
  // After `...` the stream has no open document until the next `---` or content.
  let closed = false;
  const blankBetween = (a: number, b: number): boolean => lines.slice(a, b).every((l) => l.blank);
  try {
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      if (l.indent !== 0) continue;
      if (l.text === '---' || l.text.startsWith('--- #') || l.text === '...') {
        if (!(closed && blankBetween(docStart, i))) flush(i);
        closed = l.text === '...';
        docStart = i + 1;
      } else if (l.text.startsWith('---') || l.text.startsWith('%')) {
        return undefined;
      }
    }
    if (!(closed && blankBetween(docStart, lines.length))) flush(lines.length);
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
  // The yaml library does not emit an empty leading document before a first `---`.
  const trimmed = documents.filter((d, idx) => !(idx === 0 && d.root === null && documents.length > 1));
  return { documents: trimmed, position: positionFn(lineStartsOf(text)), producer: 'fast' };
}

/** Fast subset parser with full-library fallback. */
export function parseYaml(text: string): YamlStream {
  return parseYamlFast(text) ?? parseYamlFull(text);
}
