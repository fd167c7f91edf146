import type { DetectionItem, SigmaValue } from '../model';
import { ANY, endsWithAny, normaliseParts, startsWithAny } from '../string';
import { mappedFieldReader } from './field-mapping';
import type { EventMatcher, ItemCompiler, SigmaEvent } from './types';
import { compileValueGroup } from './value-tests';

/** One detection item → event matcher: a field item reads its field, a keyword item searches the event. */

export function compileFieldItem(item: DetectionItem, compiler: ItemCompiler, slots: Map<string, number>): EventMatcher {
  const field = item.field!;
  const get = mappedFieldReader(field, compiler.options.fieldMapping);
  const only = item.values.length === 1 ? item.values[0] : undefined;
  let test: EventMatcher;
  if (only?.kind === 'exists') {
    const want = only.value;
    test = (e) => (get(e) !== undefined) === want;
  } else {
    let slot = slots.get(field);
    if (slot === undefined) {
      slot = compiler.cache.newSlot();
      slots.set(field, slot);
    }
    // AND-linking needs one test per value; OR-linking folds every value into one test.
    const groups = item.linking === 'and' ? item.values.map((v) => compileValueGroup([v], item, compiler, slot)) : [compileValueGroup(item.values, item, compiler, slot)];
    const nullable = item.values.some((v) => v.kind === 'null');
    const applyAll = (raw: unknown, e: SigmaEvent): boolean => {
      for (let i = 0; i < groups.length; i++) if (!groups[i]!(raw, e)) return false;
      return true;
    };
    const single = groups.length === 1 ? groups[0]! : undefined;
    test = (e) => {
      const raw = get(e);
      if (raw === undefined || raw === null) return nullable;
      if (Array.isArray(raw)) {
        // Multi-valued fields: each value test may be satisfied by a different element.
        if (single) return raw.some((x) => single(x, e, true));
        return groups.every((g) => raw.some((x) => g(x, e, true)));
      }
      return single ? single(raw, e) : applyAll(raw, e);
    };
  }
  return item.negated ? (e) => !test(e) : test;
}

/** The texts a keyword search looks at: every string, number and boolean leaf, 16 levels deep. */
export function collectLeaves(value: unknown, out: string[], depth: number): void {
  if (depth > 16) return;
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number' || typeof value === 'boolean') out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) collectLeaves(v, out, depth + 1);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) collectLeaves(v, out, depth + 1);
}

export function compileKeywordItem(item: DetectionItem, compiler: ItemCompiler): EventMatcher {
  // Keywords are substring searches: wrap each string with `*` where none is written.
  const wrap = (v: SigmaValue): SigmaValue => {
    if (v.kind === 'string') {
      const parts = [...v.parts];
      if (!startsWithAny(parts)) parts.unshift(ANY);
      if (!endsWithAny(parts)) parts.push(ANY);
      return { ...v, parts: normaliseParts(parts) };
    }
    if (v.kind === 'expansion') return { kind: 'expansion', values: v.values.map(wrap) };
    // A number keyword is a substring search for its text, as in the query backends.
    if (v.kind === 'number') return { kind: 'string', parts: [ANY, v.text, ANY], cased: false, binary: false };
    return v;
  };
  const values = item.values.map(wrap);
  const groups = item.linking === 'and' ? values.map((v) => compileValueGroup([v], item, compiler, undefined)) : [compileValueGroup(values, item, compiler, undefined)];
  const fields = compiler.options.keywordFields?.map((f) => mappedFieldReader(f, compiler.options.fieldMapping));
  const test: EventMatcher = (e) => {
    const leaves: string[] = [];
    if (fields) for (const g of fields) collectLeaves(g(e), leaves, 0);
    else collectLeaves(e, leaves, 0);
    return groups.every((g) => leaves.some((leaf) => g(leaf, e)));
  };
  return item.negated ? (e) => !test(e) : test;
}
