import type { SigmaEvent } from '../evaluate';
import { fieldValue } from '../field-access';
import type { Fixture } from './fixtures';
import { eventFieldPaths, type FieldsRead } from './fields';

/**
 * Near-duplicate fixtures: two fixtures whose event lists have the same length and whose events,
 * position by position, agree on every field the rule reads, comparing strings without letter case
 * unless some item reads that field case-sensitively. Such fixtures get the same verdict from any
 * correct evaluator, so one adds nothing (or, with opposite expectations, one must fail).
 *
 * Deliberately strict elsewhere: an absent field differs from a null one (`exists`), and 4688
 * differs from "4688" (fixtures usually mean different events when they write different types).
 */

export interface DuplicatePair {
  readonly first: Fixture;
  readonly second: Fixture;
  /** True when the events are equal as written, not only in what the rule reads. */
  readonly identical: boolean;
}

function normalise(value: unknown, lower: boolean): unknown {
  if (typeof value === 'string') return lower ? value.toLowerCase() : value;
  if (Array.isArray(value)) return value.map((v) => normalise(v, lower));
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return Object.keys(obj)
      .sort()
      .map((k) => [k, normalise(obj[k], lower)]);
  }
  return value;
}

/** Present-flag and value per field, so that "absent" and null stay apart in JSON. */
function projectEvent(event: SigmaEvent, read: FieldsRead): string {
  const names = read.every ? [...new Set(eventFieldPaths(event))] : [...read.names];
  const cells = names.sort().map((name) => {
    const v = fieldValue(event, name);
    return v === undefined ? [name, 0] : [name, 1, normalise(v, !read.cased.has(name))];
  });
  return JSON.stringify(cells);
}

function writtenForm(fixture: Fixture): string {
  return JSON.stringify(fixture.events.map((e) => normalise(e, false)));
}

/** Every later fixture paired with the first earlier fixture it duplicates. */
export function nearDuplicates(fixtures: readonly Fixture[], read: FieldsRead): DuplicatePair[] {
  const firstByKey = new Map<string, Fixture>();
  const out: DuplicatePair[] = [];
  for (const fixture of fixtures) {
    const key = JSON.stringify(fixture.events.map((e) => projectEvent(e, read)));
    const first = firstByKey.get(key);
    if (first === undefined) firstByKey.set(key, fixture);
    else out.push({ first, second: fixture, identical: writtenForm(first) === writtenForm(fixture) });
  }
  return out;
}
