import type { SigmaEvent } from '../evaluate';

/**
 * Rule-test fixtures as the API receives them: each one a JSON document in a string,
 * `{"name": …, "expect": "match" | "no_match", "event": {…}}` or, for correlation rules,
 * `{"name": …, "expect": …, "events": [{…}, …]}`. Validation is strict and reports every problem
 * with the fixture's index, so a 400 can say exactly which string to fix.
 */

export type FixtureExpectation = 'match' | 'no_match';

export interface Fixture {
  readonly name: string;
  readonly expect: FixtureExpectation;
  /** Always a list: a single `event` becomes a one-element list. */
  readonly events: readonly SigmaEvent[];
  /** True when written with `events` (an ordered stream for a correlation rule). */
  readonly correlation: boolean;
}

export interface FixtureError {
  readonly index: number;
  readonly message: string;
}

export type FixtureParseResult = { readonly fixtures: Fixture[] } | { readonly errors: FixtureError[] };

export interface FixtureParseOptions {
  /**
   * The rule under test: `'rule'` rejects `events` (a plain rule sees one event per test),
   * `'correlation'` accepts both forms. Omitted: both forms are accepted.
   */
  readonly ruleKind?: 'rule' | 'correlation';
}

const KNOWN_KEYS = new Set(['name', 'expect', 'event', 'events']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** Checks one decoded document; returns the problems found (empty when it is a valid fixture). */
function checkDocument(doc: Record<string, unknown>, options: FixtureParseOptions): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(doc)) {
    if (!KNOWN_KEYS.has(key)) problems.push(`unknown key '${key}' (allowed: name, expect, event, events)`);
  }
  if (!('name' in doc)) problems.push("missing 'name'");
  else if (typeof doc.name !== 'string') problems.push(`'name' must be a string, got ${kindOf(doc.name)}`);
  else if (doc.name.trim() === '') problems.push("'name' is blank");
  if (!('expect' in doc)) problems.push("missing 'expect'");
  else if (doc.expect !== 'match' && doc.expect !== 'no_match')
    problems.push(`'expect' must be "match" or "no_match", got ${JSON.stringify(doc.expect) ?? kindOf(doc.expect)}`);
  const hasEvent = 'event' in doc;
  const hasEvents = 'events' in doc;
  if (hasEvent && hasEvents) problems.push("both 'event' and 'events' given; use exactly one");
  else if (!hasEvent && !hasEvents) problems.push("neither 'event' nor 'events' given");
  else if (hasEvent) {
    if (!isPlainObject(doc.event)) problems.push(`'event' must be an object, got ${kindOf(doc.event)}`);
  } else if (options.ruleKind === 'rule') {
    problems.push("'events' is only for correlation rules; a rule test takes one 'event'");
  } else if (!Array.isArray(doc.events)) {
    problems.push(`'events' must be an array of objects, got ${kindOf(doc.events)}`);
  } else if (doc.events.length === 0) {
    problems.push("'events' is empty");
  } else {
    doc.events.forEach((e: unknown, i) => {
      if (!isPlainObject(e)) problems.push(`'events[${i}]' must be an object, got ${kindOf(e)}`);
    });
  }
  return problems;
}

/**
 * Decodes and validates fixture strings. Either every fixture is valid and they are returned in
 * order, or every problem of every fixture is returned (a fixture may have several).
 */
export function parseFixtures(strings: readonly unknown[], options: FixtureParseOptions = {}): FixtureParseResult {
  const errors: FixtureError[] = [];
  const fixtures: Fixture[] = [];
  const firstIndexByName = new Map<string, number>();
  strings.forEach((text, index) => {
    if (typeof text !== 'string') {
      errors.push({ index, message: `fixture must be a string holding a JSON document, got ${kindOf(text)}` });
      return;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      errors.push({ index, message: `not valid JSON: ${(e as Error).message}` });
      return;
    }
    if (!isPlainObject(doc)) {
      errors.push({ index, message: `fixture must be a JSON object, got ${kindOf(doc)}` });
      return;
    }
    const problems = checkDocument(doc, options);
    if (typeof doc.name === 'string' && doc.name.trim() !== '') {
      const earlier = firstIndexByName.get(doc.name);
      if (earlier !== undefined) problems.push(`duplicate name '${doc.name}' (also fixture ${earlier})`);
      else firstIndexByName.set(doc.name, index);
    }
    if (problems.length > 0) {
      for (const message of problems) errors.push({ index, message });
      return;
    }
    const correlation = 'events' in doc;
    fixtures.push({
      name: doc.name as string,
      expect: doc.expect as FixtureExpectation,
      events: (correlation ? doc.events : [doc.event]) as SigmaEvent[],
      correlation,
    });
  });
  return errors.length > 0 ? { errors } : { fixtures };
}
