/**
 * Sigma strings: literal text interleaved with `*` / `?` wildcards, parsed with pySigma's escaping
 * rules (a backslash only escapes `*`, `?` and `\`; in front of anything else it is plain text).
 */
export interface Wildcard {
  readonly wildcard: '*' | '?';
}
export type StringPart = string | Wildcard;

export const ANY: Wildcard = Object.freeze({ wildcard: '*' as const });
export const ONE: Wildcard = Object.freeze({ wildcard: '?' as const });

export function isWildcard(part: StringPart): part is Wildcard {
  return typeof part !== 'string';
}

export function parseSigmaString(raw: string): StringPart[] {
  const parts: StringPart[] = [];
  let text = '';
  const flush = (): void => {
    if (text !== '') parts.push(text);
    text = '';
  };
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\') {
      const next = raw[i + 1];
      if (next === '*' || next === '?' || next === '\\') {
        text += next;
        i++;
      } else {
        text += c;
      }
    } else if (c === '*') {
      flush();
      parts.push(ANY);
    } else if (c === '?') {
      flush();
      parts.push(ONE);
    } else {
      text += c;
    }
  }
  flush();
  return parts;
}

/** Concatenates adjacent text parts so matchers can rely on a canonical shape. */
export function normaliseParts(parts: readonly StringPart[]): StringPart[] {
  const out: StringPart[] = [];
  for (const p of parts) {
    const last = out[out.length - 1];
    if (typeof p === 'string') {
      if (p === '') continue;
      if (typeof last === 'string') out[out.length - 1] = last + p;
      else out.push(p);
    } else {
      out.push(p);
    }
  }
  return out;
}

export function hasWildcards(parts: readonly StringPart[]): boolean {
  return parts.some(isWildcard);
}

/** The literal text, assuming the caller checked there are no wildcards. */
export function plainText(parts: readonly StringPart[]): string {
  return parts.map((p) => (typeof p === 'string' ? p : p.wildcard)).join('');
}

/** Re-escapes to Sigma syntax: the inverse of parseSigmaString (used when printing values). */
export function formatSigmaString(parts: readonly StringPart[]): string {
  return parts.map((p) => (typeof p === 'string' ? p.replace(/[\\*?]/g, (m) => `\\${m}`) : p.wildcard)).join('');
}

export function startsWithAny(parts: readonly StringPart[]): boolean {
  const first = parts[0];
  return first !== undefined && typeof first !== 'string' && first.wildcard === '*';
}

export function endsWithAny(parts: readonly StringPart[]): boolean {
  const last = parts[parts.length - 1];
  return last !== undefined && typeof last !== 'string' && last.wildcard === '*';
}

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Anchored JS regex source; `s` flag is expected so `*` spans newlines like a glob over the whole value. */
export function partsToRegexSource(parts: readonly StringPart[]): string {
  let src = '^';
  for (const p of parts) {
    if (typeof p === 'string') src += escapeRegex(p);
    else src += p.wildcard === '*' ? '.*' : '.';
  }
  return src + '$';
}

export function mapText(parts: readonly StringPart[], fn: (text: string) => string): StringPart[] {
  return parts.map((p) => (typeof p === 'string' ? fn(p) : p));
}
