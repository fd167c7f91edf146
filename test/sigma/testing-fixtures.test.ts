import { parseFixtures, type FixtureError } from '../../sigma/testing';

const doc = (value: unknown): string => JSON.stringify(value);

/** Errors of a result that must have failed; a success here is itself a test failure. */
function errorsOf(strings: unknown[], options?: Parameters<typeof parseFixtures>[1]): FixtureError[] {
  const result = parseFixtures(strings, options);
  if (!('errors' in result)) throw new Error(`expected errors, got ${result.fixtures.length} fixtures`);
  return result.errors;
}

describe('parseFixtures: valid documents', () => {
  it('turns a single event into a one-event list and keeps fixture order', () => {
    const result = parseFixtures([doc({ name: 'hit', expect: 'match', event: { Image: 'C:\\x.exe' } }), doc({ name: 'miss', expect: 'no_match', event: {} })]);
    expect(result).toEqual({
      fixtures: [
        { name: 'hit', expect: 'match', events: [{ Image: 'C:\\x.exe' }], correlation: false },
        { name: 'miss', expect: 'no_match', events: [{}], correlation: false },
      ],
    });
  });

  it('accepts an events list for correlation fixtures and marks them as such', () => {
    const result = parseFixtures([doc({ name: 'burst', expect: 'match', events: [{ a: 1 }, { a: 2 }] })], { ruleKind: 'correlation' });
    expect(result).toEqual({ fixtures: [{ name: 'burst', expect: 'match', events: [{ a: 1 }, { a: 2 }], correlation: true }] });
  });

  it('accepts an empty list of fixtures (the caller decides whether that is enough)', () => {
    expect(parseFixtures([])).toEqual({ fixtures: [] });
  });
});

describe('parseFixtures: every problem names the fixture index', () => {
  it('reports strings that are not JSON and values that are not strings', () => {
    const errors = errorsOf([doc({ name: 'ok', expect: 'match', event: {} }), '{name: oops', 42]);
    expect(errors).toEqual([
      { index: 1, message: expect.stringMatching(/^not valid JSON: /) },
      { index: 2, message: 'fixture must be a string holding a JSON document, got a number' },
    ]);
  });

  it('reports JSON that is not an object', () => {
    expect(errorsOf(['[1]', 'null', '"match"'])).toEqual([
      { index: 0, message: 'fixture must be a JSON object, got an array' },
      { index: 1, message: 'fixture must be a JSON object, got null' },
      { index: 2, message: 'fixture must be a JSON object, got a string' },
    ]);
  });

  it('reports missing and invalid name and expect together', () => {
    expect(errorsOf([doc({ event: {} }), doc({ name: '  ', expect: 'yes', event: {} }), doc({ name: 7, expect: 'match', event: {} })])).toEqual([
      { index: 0, message: "missing 'name'" },
      { index: 0, message: "missing 'expect'" },
      { index: 1, message: "'name' is blank" },
      { index: 1, message: `'expect' must be "match" or "no_match", got "yes"` },
      { index: 2, message: "'name' must be a string, got a number" },
    ]);
  });

  it('requires exactly one of event and events', () => {
    expect(errorsOf([doc({ name: 'a', expect: 'match' }), doc({ name: 'b', expect: 'match', event: {}, events: [{}] })])).toEqual([
      { index: 0, message: "neither 'event' nor 'events' given" },
      { index: 1, message: "both 'event' and 'events' given; use exactly one" },
    ]);
  });

  it('requires event to be an object and events a non-empty array of objects', () => {
    const errors = errorsOf([
      doc({ name: 'a', expect: 'match', event: [] }),
      doc({ name: 'b', expect: 'match', events: {} }),
      doc({ name: 'c', expect: 'match', events: [] }),
      doc({ name: 'd', expect: 'match', events: [{}, 'x', null] }),
    ]);
    expect(errors).toEqual([
      { index: 0, message: "'event' must be an object, got an array" },
      { index: 1, message: "'events' must be an array of objects, got an object" },
      { index: 2, message: "'events' is empty" },
      { index: 3, message: "'events[1]' must be an object, got a string" },
      { index: 3, message: "'events[2]' must be an object, got null" },
    ]);
  });

  it('rejects events for a plain rule, which sees one event per test', () => {
    expect(errorsOf([doc({ name: 'a', expect: 'match', events: [{}] })], { ruleKind: 'rule' })).toEqual([
      { index: 0, message: "'events' is only for correlation rules; a rule test takes one 'event'" },
    ]);
  });

  it('rejects unknown keys, which are usually typos of known ones', () => {
    expect(errorsOf([doc({ name: 'a', expected: 'match', event: {} })])).toEqual([
      { index: 0, message: "unknown key 'expected' (allowed: name, expect, event, events)" },
      { index: 0, message: "missing 'expect'" },
    ]);
  });

  it('rejects a duplicate name at the later index, naming the earlier one', () => {
    const ok = doc({ name: 'same', expect: 'match', event: {} });
    expect(errorsOf([ok, doc({ name: 'other', expect: 'match', event: {} }), ok])).toEqual([{ index: 2, message: "duplicate name 'same' (also fixture 0)" }]);
  });
});
