import type { StringValue } from '../model';
import { endsWithAny, hasWildcards, isWildcard, partsToRegexSource, plainText, startsWithAny, type StringPart } from '../string';

export type StrTest = (s: string) => boolean;

/** Lowers string parts once at compile time so per-event work is a plain comparison. */
function lowerParts(parts: readonly StringPart[], cased: boolean): StringPart[] {
  return cased ? [...parts] : parts.map((p) => (typeof p === 'string' ? p.toLowerCase() : p));
}

/**
 * Groups an OR-list of wildcard strings by shape: exact values go into a Set, `*x*`/`x*`/`*x` become
 * includes/startsWith/endsWith, anything else is folded into a single anchored regex.
 */
export function compileStringSet(values: readonly StringValue[]): StrTest {
  const exact = new Set<string>();
  const contains: string[] = [];
  const prefixes: string[] = [];
  const suffixes: string[] = [];
  const complex: string[] = [];
  let matchAll = false;
  for (const v of values) {
    const parts = lowerParts(v.parts, v.cased);
    const inner = parts.slice(startsWithAny(parts) ? 1 : 0, endsWithAny(parts) ? parts.length - 1 : parts.length);
    if (parts.length > 0 && parts.every((p) => isWildcard(p) && p.wildcard === '*')) matchAll = true;
    else if (!hasWildcards(parts)) exact.add(plainText(parts));
    else if (!hasWildcards(inner)) {
      const text = plainText(inner);
      if (startsWithAny(parts) && endsWithAny(parts)) contains.push(text);
      else if (endsWithAny(parts)) prefixes.push(text);
      else suffixes.push(text);
    } else complex.push(partsToRegexSource(parts).slice(1, -1));
  }
  if (matchAll) return () => true;
  const regex = complex.length > 0 ? new RegExp(`^(?:${complex.join('|')})$`, 's') : undefined;
  const tests: StrTest[] = [];
  if (exact.size === 1) {
    const only = [...exact][0]!;
    tests.push((s) => s === only);
  } else if (exact.size > 1) tests.push((s) => exact.has(s));
  if (contains.length === 1) {
    const n = contains[0]!;
    tests.push((s) => s.includes(n));
  } else if (contains.length > 1) {
    tests.push((s) => {
      for (let i = 0; i < contains.length; i++) if (s.includes(contains[i]!)) return true;
      return false;
    });
  }
  if (prefixes.length > 0) {
    tests.push((s) => {
      for (let i = 0; i < prefixes.length; i++) if (s.startsWith(prefixes[i]!)) return true;
      return false;
    });
  }
  if (suffixes.length > 0) {
    tests.push((s) => {
      for (let i = 0; i < suffixes.length; i++) if (s.endsWith(suffixes[i]!)) return true;
      return false;
    });
  }
  if (regex) tests.push((s) => regex.test(s));
  if (tests.length === 1) return tests[0]!;
  return (s) => {
    for (let i = 0; i < tests.length; i++) if (tests[i]!(s)) return true;
    return false;
  };
}
