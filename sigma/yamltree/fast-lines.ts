/** The fast path reads a text as lines with their indent; comments are found per line. */

export interface Line {
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

export function commentStart(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text.charCodeAt(i) === 35 /* # */ && (i === 0 || text[i - 1] === ' ' || text[i - 1] === '\t')) return i;
  }
  return -1;
}

export function stripComment(text: string): string {
  const c = commentStart(text, 0);
  return (c === -1 ? text : text.slice(0, c)).trimEnd();
}

/** Splits into lines; returns undefined when the text uses features the fast path does not take. */
export function splitLines(text: string): Line[] | undefined {
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
