import { readFileSync } from 'fs';
import { join } from 'path';
import type { DetectionNode, SigmaRule, SigmaValue } from '../../sigma/model';
import { parseRule, parseSigma } from '../../sigma/parse';
import { analyseCoverage, type Fixture } from '../../sigma/testing';
import { CORPUS_DIR } from './support/corpus';
import { rule } from './support/rules';

const fx = (name: string, expect: Fixture['expect'], ...events: Array<Record<string, unknown>>): Fixture => ({ name, expect, events, correlation: events.length > 1 });

/** Per-item view that reads well in expectations. */
const byPath = (items: Array<{ path: string; true_by: string[]; false_by: string[] }>) => Object.fromEntries(items.map((b) => [b.path, [b.true_by, b.false_by]]));

describe('coverage of `1 of sel* and not filter` (2 selections × 3 values + a filter), computed by hand', () => {
  const r = rule(`    sel1:
        Image|endswith: ['\\a.exe', '\\b.exe', '\\c.exe']
    sel2:
        CommandLine|contains: ['-x', '-y', '-z']
    filter:
        User: SYSTEM
    condition: 1 of sel* and not filter`);
  // a-hit: sel1 via '\a.exe' (case-insensitive), no User so the filter is false → match.
  const aHit = fx('a-hit', 'match', { Image: 'C:\\t\\A.EXE', CommandLine: 'a' });
  // y-system: sel2 via '-y', filtered by User → no match.
  const ySystem = fx('y-system', 'no_match', { Image: 'C:\\z.exe', CommandLine: 'run -Y', User: 'system' });
  const benign = fx('benign', 'no_match', { Image: 'C:\\n.exe' });

  it('counts selections, values and branch outcomes of two fixtures', () => {
    const c = analyseCoverage(r, [aHit, ySystem]);
    // All three identifiers are satisfied by some event: 3/3.
    expect(c.selections).toMatchObject({ total: 3, covered: 3, percent: 100 });
    expect(c.selections.items.map((s) => [s.name, s.by])).toEqual([
      ['sel1', ['a-hit']],
      ['sel2', ['y-system']],
      ['filter', ['y-system']],
    ]);
    // 3 + 3 + 1 values; '\a.exe', '-y' and 'SYSTEM' were seen: 3/7 = 42.857… → 42.9.
    expect(c.values).toMatchObject({ total: 7, covered: 3, percent: 42.9 });
    expect(c.values.items.filter((v) => v.covered).map((v) => [v.selection, v.field, v.value])).toEqual([
      ['sel1', 'Image', '\\a.exe'],
      ['sel2', 'CommandLine', '-y'],
      ['filter', 'User', 'SYSTEM'],
    ]);
    // 6 decision points × 2 outcomes = 12; nothing made `1 of sel*` false: 11/12 = 91.7.
    expect(c.branches).toMatchObject({ total: 12, covered: 11, percent: 91.7 });
    expect(byPath(c.branches.items)).toEqual({
      'condition[0]': [['a-hit'], ['y-system']],
      'condition[0].operands[0]': [['a-hit', 'y-system'], []],
      'condition[0].operands[0].of[0]': [['a-hit'], ['y-system']],
      'condition[0].operands[0].of[1]': [['y-system'], ['a-hit']],
      'condition[0].operands[1]': [['a-hit'], ['y-system']],
      'condition[0].operands[1].operand': [['y-system'], ['a-hit']],
    });
    expect(c.branches.items.map((b) => b.description)).toEqual(['1 of sel* and not filter', '1 of sel*', 'sel1', 'sel2', 'not filter', 'filter']);
    // Mean of 100, 42.857 and 91.667.
    expect(c.overall_percent).toBe(78.2);
  });

  it('reaches every branch outcome once an event satisfies no selection', () => {
    const c = analyseCoverage(r, [aHit, ySystem, benign]);
    expect(c.branches).toMatchObject({ total: 12, covered: 12, percent: 100 });
    expect(c.branches.items[1]!.false_by).toEqual(['benign']);
    // benign adds no value: still 3/7.
    expect(c.values.covered).toBe(3);
  });

  it('reports zero coverage without fixtures', () => {
    const c = analyseCoverage(r, []);
    expect([c.selections.covered, c.values.covered, c.branches.covered, c.overall_percent]).toEqual([0, 0, 0, 0]);
  });

  it('ignores expectations: a wrong expectation still exercises what its event reaches', () => {
    const c = analyseCoverage(r, [{ ...aHit, expect: 'no_match' }]);
    expect(c.selections.items[0]!.by).toEqual(['a-hit']);
  });
});

describe('coverage: per-value matching uses the engine semantics', () => {
  it('covers each value of an `all` list separately while the selection stays uncovered', () => {
    const r = rule("    sel:\n        CommandLine|contains|all: ['-a', '-b']\n    condition: sel");
    const c = analyseCoverage(r, [fx('only-a', 'no_match', { CommandLine: 'x -A' })]);
    expect(c.values.items.map((v) => [v.value, v.covered])).toEqual([
      ['-a', true],
      ['-b', false],
    ]);
    expect(c.selections.covered).toBe(0);
  });

  it('respects cased: a value differing in case is not covered', () => {
    const r = rule("    sel:\n        F|cased: ['ABC', 'def']\n    condition: sel");
    const c = analyseCoverage(r, [fx('lower', 'no_match', { F: 'abc' }), fx('exact', 'match', { F: 'def' })]);
    expect(c.values.items.map((v) => [v.value, v.by])).toEqual([
      ['ABC', []],
      ['def', ['exact']],
    ]);
  });

  it('counts a `neq` value as covered when the event carries it (before negation)', () => {
    const r = rule("    sel:\n        User|neq: ['alice', 'bob']\n    condition: sel");
    const c = analyseCoverage(r, [fx('is-bob', 'no_match', { User: 'bob' })]);
    expect(c.values.items.map((v) => [v.value, v.covered])).toEqual([
      ['alice', false],
      ['bob', true],
    ]);
    // The item is negated, so bob's event does not satisfy the selection.
    expect(c.selections.covered).toBe(0);
  });

  it('covers numbers leniently, null by absence and keywords by substring, like the evaluator', () => {
    const r = rule("    sel:\n        EventID: 4688\n        Parent: null\n    kw:\n        - 'mimikatz'\n    condition: sel or kw");
    const c = analyseCoverage(r, [fx('hit', 'match', { EventID: '4688', Cmd: 'run MimiKatz.exe' })]);
    expect(c.values.items.map((v) => [v.selection, v.field, v.value, v.covered])).toEqual([
      ['sel', 'EventID', 4688, true],
      ['sel', 'Parent', null, true],
      ['kw', null, 'mimikatz', true],
    ]);
  });

  it('lists a fixture once per item even when several of its events reach it', () => {
    const r = rule('    sel:\n        A: 1\n    condition: sel');
    const c = analyseCoverage(r, [fx('twice', 'match', { A: 1 }, { A: 1 })]);
    expect(c.selections.items[0]!.by).toEqual(['twice']);
    expect(c.branches.items[0]!.true_by).toEqual(['twice']);
  });

  it('numbers the branches of each condition of a condition list', () => {
    const r = rule('    a:\n        A: 1\n    b:\n        B: 1\n    condition:\n        - a\n        - not b');
    const c = analyseCoverage(r, [fx('a', 'match', { A: 1 })]);
    // condition[0] (a), condition[1] (not b) and its operand b: 3 points, 6 outcomes.
    expect(byPath(c.branches.items)).toEqual({
      'condition[0]': [['a'], []],
      'condition[1]': [['a'], []],
      'condition[1].operand': [[], ['a']],
    });
    expect(c.branches).toMatchObject({ total: 6, covered: 3, percent: 50 });
  });
});

describe('coverage of a correlation: its base rules, event by event', () => {
  const base = (name: string, eventId: number): string =>
    `title: ${name}\nname: ${name}\nlogsource:\n    product: windows\n    service: security\ndetection:\n    sel:\n        EventID: ${eventId}\n    condition: sel`;
  const text = [
    'title: Fail then success\ncorrelation:\n    type: temporal_ordered\n    rules: [failed, success]\n    group-by: [User]\n    timespan: 5m',
    base('failed', 4625),
    base('success', 4624),
  ].join('\n---\n');
  const documents = parseSigma(text).documents;
  const correlation = documents[0]!;
  if (correlation.kind !== 'correlation') throw new Error('the first document is the correlation');

  it('names the base rule of every item and looks at every event of a fixture', () => {
    const c = analyseCoverage(correlation, [fx('fail-only', 'no_match', { EventID: 4625, User: 'bob' }, { EventID: 4625, User: 'bob' })], { documents });
    expect(c.selections.items.map((s) => [s.rule, s.name, s.covered])).toEqual([
      ['failed', 'sel', true],
      ['success', 'sel', false],
    ]);
    expect(c.selections.percent).toBe(50);
    expect(c.branches.items.map((b) => [b.rule, b.path])).toEqual([
      ['failed', 'condition[0]'],
      ['success', 'condition[0]'],
    ]);
  });

  it('throws the engine error when a referenced rule is missing', () => {
    expect(() => analyseCoverage(correlation, [], { documents: [correlation] })).toThrow(expect.objectContaining({ code: 'correlation-unresolved-rule' }));
  });
});

/**
 * Corpus rules: SigmaHQ, Detection Rule License 1.1 (https://github.com/SigmaHQ/Detection-Rule-License),
 * read at run time from the shared folder. Authors: bitsadmin_download — Michael Haag, FPT.EagleEye;
 * attrib_hiding_files — Sami Ruohonen; net_user_default_accounts_manipulation and 7zip_exfil_dmp_files —
 * Nasreddine Bencherchali (Nextron Systems).
 */
describe('coverage of real rules with fixtures generated from each selection', () => {
  /** A text the string value matches: `*` becomes nothing, `?` one letter. */
  const sample = (v: SigmaValue): string | number | null => {
    if (v.kind === 'string') return v.parts.map((p) => (typeof p === 'string' ? p : p.wildcard === '?' ? 'x' : '')).join('');
    if (v.kind === 'number') return v.value;
    if (v.kind === 'null') return null;
    throw new Error(`the generator does not handle ${v.kind} values`);
  };
  /** One event satisfying a detection node: AND merges, OR takes its first branch. */
  const eventFor = (node: DetectionNode, into: Record<string, unknown> = {}): Record<string, unknown> => {
    if (node.kind === 'or') return eventFor(node.children[0]!, into);
    if (node.kind === 'and') {
      node.children.forEach((c) => eventFor(c, into));
      return into;
    }
    const { field, values, linking } = node.item;
    if (field === null) throw new Error('the generator does not handle keywords');
    // `all` needs every value in one string; a space keeps contains-values apart.
    into[field] = linking === 'and' ? values.map((v) => String(sample(v))).join(' ') : sample(values[0]!);
    return into;
  };
  const fixturesFor = (r: SigmaRule): Fixture[] => [...r.detection.identifiers.values()].map((ident) => fx(ident.name, 'match', eventFor(ident.node)));
  const load = (file: string): SigmaRule => parseRule(readFileSync(join(CORPUS_DIR, 'rules/windows/process_creation', file), 'utf8'));

  it.each([
    'proc_creation_win_bitsadmin_download.yml',
    'proc_creation_win_attrib_hiding_files.yml',
    'proc_creation_win_net_user_default_accounts_manipulation.yml',
    'proc_creation_win_7zip_exfil_dmp_files.yml',
  ])('%s: one generated event per selection reaches 100%% of the selections', (file) => {
    const r = load(file);
    expect(r.errors).toEqual([]);
    const c = analyseCoverage(r, fixturesFor(r));
    expect(c.selections.total).toBeGreaterThan(1);
    expect(c.selections.percent).toBe(100);
    // Each selection is reached by (at least) the fixture generated for it.
    for (const s of c.selections.items) expect(s.by).toContain(s.name);
  });

  it('7zip_exfil_dmp_files: the first value of each selection only covers 2 of its 10 values', () => {
    // 1 + 3 + 3 values in selection_img, 3 in selection_extension. Covered: '7-Zip' (Description) and
    // '.dmp' (CommandLine); '.dump' and '.hdmp' are not substrings of '.dmp', Image is never set.
    const r = load('proc_creation_win_7zip_exfil_dmp_files.yml');
    const c = analyseCoverage(r, fixturesFor(r));
    expect(c.values).toMatchObject({ total: 10, covered: 2, percent: 20 });
  });
});
