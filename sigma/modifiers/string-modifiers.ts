import type { PlaceholderPart, SigmaValue, StringValue } from '../model';
import { ANY, endsWithAny, isWildcard, startsWithAny, type StringPart } from '../string';
import { wrapRegex } from './regex-modifiers';
import type { ModifierContext, WorkValue } from './types';
import { asString, fail, mapExpansion, withParts } from './work-values';

/** Modifiers that reshape a string value: contains/startswith/endswith, windash, expand. */

const WINDASH_CHARS = ['-', '/', '\u2013', '\u2014', '\u2015'];
const WINDASH_MAX_OCCURRENCES = 6;

export function windash(value: StringValue, ctx: ModifierContext): SigmaValue {
  // Positions are computed per text part: a dash next to a wildcard has no known neighbour, and
  // pySigma treats it the same way.
  const variants: StringPart[][] = [[]];
  let occurrences = 0;
  for (const part of value.parts) {
    if (isWildcard(part)) {
      for (const v of variants) v.push(part);
      continue;
    }
    const pieces: string[] = [];
    let last = 0;
    const re = /\B[-/]\b/g;
    for (let m = re.exec(part); m; m = re.exec(part)) {
      pieces.push(part.slice(last, m.index));
      last = m.index + 1;
    }
    pieces.push(part.slice(last));
    occurrences += pieces.length - 1;
    if (occurrences > WINDASH_MAX_OCCURRENCES) fail(ctx, `more than ${WINDASH_MAX_OCCURRENCES} dash positions would expand to too many values`, 'modifier-invalid');
    let texts = [pieces[0]!];
    for (let k = 1; k < pieces.length; k++) {
      const next: string[] = [];
      for (const t of texts) for (const d of WINDASH_CHARS) next.push(t + d + pieces[k]!);
      texts = next;
    }
    const expanded: StringPart[][] = [];
    for (const v of variants) for (const t of texts) expanded.push([...v, t]);
    variants.splice(0, variants.length, ...expanded);
  }
  if (variants.length === 1) return withParts(value, variants[0]!);
  return { kind: 'expansion', values: variants.map((parts) => withParts(value, parts)) };
}

export function stringWrap(front: boolean, back: boolean, match: 'contains' | 'startswith' | 'endswith') {
  return (value: WorkValue, ctx: ModifierContext): WorkValue =>
    mapExpansion(value, (v) => {
      if (v.kind === 'regex') return { ...v, pattern: wrapRegex(v.pattern, front, back) };
      if (v.kind === 'fieldref') {
        if (v.match !== 'equals') fail(ctx, `cannot combine with '${v.match}'`, 'modifier-invalid');
        return { ...v, match };
      }
      if (v.kind === 'placeholder') {
        const parts = [...v.parts];
        const isAny = (p: StringPart | PlaceholderPart | undefined): boolean => typeof p === 'object' && 'wildcard' in p && p.wildcard === '*';
        if (front && !isAny(parts[0])) parts.unshift(ANY);
        if (back && !isAny(parts[parts.length - 1])) parts.push(ANY);
        return { ...v, parts };
      }
      const s = asString(v, ctx);
      const parts = [...s.parts];
      if (front && !startsWithAny(parts)) parts.unshift(ANY);
      if (back && !endsWithAny(parts)) parts.push(ANY);
      return withParts(s, parts);
    });
}

export function expand(value: WorkValue, ctx: ModifierContext): WorkValue {
  // Works on the parsed string so `contains|expand` keeps the wildcards contains added.
  const s = asString(value, ctx);
  const parts: (StringPart | PlaceholderPart)[] = [];
  for (const part of s.parts) {
    if (isWildcard(part)) {
      parts.push(part);
      continue;
    }
    let last = 0;
    const re = /(\\?)%([A-Za-z0-9_.-]+)%/g;
    for (let m = re.exec(part); m; m = re.exec(part)) {
      if (m[1]) continue;
      parts.push(part.slice(last, m.index).replace(/\\%/g, '%'));
      parts.push({ placeholder: m[2]! });
      last = m.index + m[0].length;
    }
    parts.push(part.slice(last).replace(/\\%/g, '%'));
  }
  if (!parts.some((p) => typeof p === 'object' && 'placeholder' in p)) fail(ctx, 'the value has no %placeholder%', 'modifier-invalid');
  return { kind: 'placeholder', parts: parts.filter((p) => p !== ''), cased: s.cased };
}
