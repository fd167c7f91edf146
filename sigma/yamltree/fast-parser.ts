import { parseFlowLine } from './fast-flow';
import { commentStart, splitLines, stripComment, type Line } from './fast-lines';
import { doubleQuotedEnd, quoted, singleQuotedEnd } from './fast-quoted';
import { bail, Unsupported } from './fast-unsupported';
import { resolvePlain } from './plain-scalars';
import { lineStartsOf, positionFn } from './positions';
import type { YamlDocument, YamlStream, YMap, YNode, YPair, YScalar, YSeq } from './tree';

/**
 * The fast producer: a parser for the block-style subset Sigma rules are written in. Any surprise
 * throws Unsupported, and the whole text goes to the `yaml` library instead.
 */

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
      const close = c === "'" ? singleQuotedEnd(text, 0) : doubleQuotedEnd(text, 0);
      if (close === -1 || text[close + 1] !== ':' || (close + 2 < text.length && text[close + 2] !== ' ')) return undefined;
      return { key: quoted(text.slice(0, close + 1)), colon: close + 1 };
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
    if (c === '[' || c === '{') return parseFlowLine(content, offset);
    if (c === "'" || c === '"') {
      const close = c === "'" ? singleQuotedEnd(content, 0) : doubleQuotedEnd(content, 0);
      if (close === -1) bail();
      const after = content.slice(close + 1);
      if (after.trim() !== '' && !/^[ \t]+#/.test(after)) bail();
      this.noContinuation(indent);
      return { kind: 'scalar', value: quoted(content.slice(0, close + 1)), style: c === "'" ? 'single' : 'double', offset };
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
}

/** The YAML stream of a text, or undefined when the text uses anything outside the fast subset. */
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
