import { doubleQuotedEnd, quoted, singleQuotedEnd } from './fast-quoted';
import { bail } from './fast-unsupported';
import { resolvePlain } from './plain-scalars';
import type { YNode, YPair, YScalar } from './tree';

/** `[a, 'b', 3]` or `{gt: 1, field: x}` on a single line. */
export function parseFlowLine(content: string, offset: number): YNode {
  let pos = 0;
  const ws = (): void => {
    while (content[pos] === ' ') pos++;
  };
  const scalar = (stops: string): YScalar => {
    ws();
    const c = content[pos];
    const at = offset + pos;
    if (c === "'" || c === '"') {
      const close = c === "'" ? singleQuotedEnd(content, pos) : doubleQuotedEnd(content, pos);
      if (close === -1) bail();
      const v = quoted(content.slice(pos, close + 1));
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
