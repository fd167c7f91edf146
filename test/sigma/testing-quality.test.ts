import { readFileSync } from 'fs';
import { join } from 'path';
import { lintDocument, type LintFinding } from '../../sigma/lint';
import { parseRule, parseSigma } from '../../sigma/parse';
import type { SigmaRule } from '../../sigma/model';
import { analyseCoverage, analyseQuality, untestableCategoriesFor, untestableCategory, untestableLintCodes, type Fixture, type QualityFinding } from '../../sigma/testing';
import { CORPUS_DIR } from './support/corpus';
import { rule, ruleText } from './support/rules';

const fx = (name: string, expect: Fixture['expect'], ...events: Array<Record<string, unknown>>): Fixture => ({ name, expect, events, correlation: events.length > 1 });

function quality(r: SigmaRule, fixtures: Fixture[], lint: LintFinding[] = []): QualityFinding[] {
  return analyseQuality(r, fixtures, analyseCoverage(r, fixtures), lint);
}
const codes = (findings: QualityFinding[]): string[] => findings.map((f) => f.code);

// Reads Image and CommandLine (case-insensitively) and User (case-sensitively, `cased`).
const target = rule(`    sel:
        Image|endswith: '\\tool.exe'
        CommandLine|contains: ' -run '
    filter:
        User|cased: SYSTEM
    condition: sel and not filter`);
const hit = fx('hit', 'match', { Image: 'C:\\tool.exe', CommandLine: 'tool -run x' });
const filtered = fx('filtered', 'no_match', { Image: 'C:\\tool.exe', CommandLine: 'tool -run x', User: 'SYSTEM' });

describe('analyseQuality: a sound suite', () => {
  it('reports nothing for a positive and a near-miss negative over read fields only', () => {
    expect(quality(target, [hit, filtered])).toEqual([]);
  });
});

describe('analyseQuality: suite-wide findings', () => {
  it('flags a suite without negative tests', () => {
    // Both selections reached (filter by 'filtered'), but nothing expects no_match.
    expect(codes(quality(target, [hit, { ...filtered, expect: 'match' }]))).toEqual(['no_negative_tests']);
  });

  it('flags a suite without positive tests', () => {
    expect(codes(quality(target, [{ ...hit, expect: 'no_match' }, filtered]))).toEqual(['no_positive_tests']);
  });

  it('flags both, and every selection, for an empty suite', () => {
    expect(codes(quality(target, []))).toEqual(['no_negative_tests', 'no_positive_tests', 'uncovered_selection', 'uncovered_selection']);
  });
});

describe('analyseQuality: selections and fixtures that reach none', () => {
  it('names each selection no event satisfies', () => {
    // The negative reaches `sel` but its User differs in case, which `cased` makes a miss of `filter`
    // (the test itself would fail; quality is about what the suite exercises, not its verdicts).
    const findings = quality(target, [hit, fx('lower-user', 'no_match', { Image: 'C:\\tool.exe', CommandLine: 'tool -run x', User: 'system' })]);
    expect(findings).toEqual([expect.objectContaining({ code: 'uncovered_selection', severity: 'warning', selection: 'filter' })]);
  });

  it('flags a negative fixture whose event satisfies no selection, and says why it proves little', () => {
    const findings = quality(target, [hit, filtered, fx('notepad', 'no_match', { Image: 'C:\\notepad.exe' })]);
    expect(findings).toEqual([{ code: 'fixture_reaches_no_selection', severity: 'warning', fixture: 'notepad', message: expect.stringContaining('near miss') }]);
  });

  it('flags a positive fixture that reaches no selection: it cannot match', () => {
    // A misspelt field name: the event looks right to a reader but the rule never sees Image.
    const findings = quality(target, [hit, filtered, fx('typo', 'match', { Imagee: 'C:\\tool.exe', CommandLine: 'tool -run x' })]);
    expect(findings.find((f) => f.code === 'fixture_reaches_no_selection')).toMatchObject({
      fixture: 'typo',
      message: "fixture 'typo' satisfies no selection, so it cannot match",
    });
  });

  it('does not flag a fixture when any one of its events reaches a selection', () => {
    const stream = fx('stream', 'no_match', { Image: 'C:\\other.exe' }, { User: 'SYSTEM' });
    expect(codes(quality(target, [hit, filtered, stream]))).not.toContain('fixture_reaches_no_selection');
  });
});

describe('analyseQuality: fixture fields the rule never reads', () => {
  it('lists unread fields per fixture, sorted', () => {
    const noisy = fx('noisy', 'match', { Image: 'C:\\tool.exe', CommandLine: 'tool -run x', ProcessId: 4, Hostname: 'h' });
    const findings = quality(target, [noisy, filtered]);
    expect(findings).toEqual([
      { code: 'fixture_fields_unused', severity: 'info', fixture: 'noisy', fields: ['Hostname', 'ProcessId'], message: expect.stringContaining('Hostname, ProcessId') },
    ]);
  });

  it('walks nested objects: a dotted rule field reads its leaf, a rule field reads what lies under it', () => {
    const r = rule('    sel:\n        process.name: tool.exe\n        parent: x\n    condition: sel');
    const f = fx('nested', 'match', { process: { name: 'tool.exe', pid: 4 }, parent: { name: 'x' } });
    const findings = analyseQuality(r, [f], analyseCoverage(r, [f]), []);
    // process.pid is unread; parent.name lies under the read field `parent`.
    expect(findings.filter((x) => x.code === 'fixture_fields_unused').map((x) => x.fields)).toEqual([['process.pid']]);
  });

  it('treats every field as read by a keyword search', () => {
    const r = rule("    keywords:\n        - 'mimikatz'\n    condition: keywords");
    const f = fx('kw', 'match', { Anything: 'MIMIKATZ', Other: 1 });
    expect(codes(analyseQuality(r, [f], analyseCoverage(r, [f]), []))).not.toContain('fixture_fields_unused');
  });

  it('counts field-mapped names as read', () => {
    const f = fx('mapped', 'match', { Image: 'C:\\tool.exe', process_command_line: 'tool -run x' });
    const options = { compile: { fieldMapping: { CommandLine: 'process_command_line' } } };
    const findings = analyseQuality(target, [f], analyseCoverage(target, [f], options), [], options);
    expect(codes(findings)).not.toContain('fixture_fields_unused');
    // Without the mapping the same fixture sets a field the rule does not read.
    expect(codes(analyseQuality(target, [f], analyseCoverage(target, [f]), []))).toContain('fixture_fields_unused');
  });
});

describe('analyseQuality: near-duplicate fixtures', () => {
  const dupes = (fixtures: Fixture[]): QualityFinding[] => quality(target, fixtures).filter((f) => f.code === 'near_duplicate_fixtures');

  it('pairs identical fixtures with the same expectation as info', () => {
    expect(dupes([hit, filtered, { ...hit, name: 'hit-again' }])).toEqual([
      {
        code: 'near_duplicate_fixtures',
        severity: 'info',
        fixture: 'hit-again',
        other_fixture: 'hit',
        message: "fixture 'hit-again' has the same events as 'hit'; it tests nothing new",
      },
    ]);
  });

  it('pairs fixtures differing only in unread fields or in case of case-insensitive fields', () => {
    const unread = fx('unread', 'match', { ...hit.events[0], Hostname: 'h' });
    const upper = fx('upper', 'match', { Image: 'C:\\TOOL.EXE', CommandLine: 'TOOL -RUN X' });
    const found = dupes([hit, filtered, unread, upper]);
    expect(found.map((f) => [f.fixture, f.other_fixture])).toEqual([
      ['unread', 'hit'],
      ['upper', 'hit'],
    ]);
    expect(found[0]!.message).toContain('differs only in fields the rule does not read or in letter case');
  });

  it('keeps fixtures apart that differ in case on a cased field, in a read value, or in presence', () => {
    const lowerUser = fx('lower-user', 'no_match', { ...filtered.events[0], User: 'system' });
    const otherCmd = fx('other-cmd', 'match', { Image: 'C:\\tool.exe', CommandLine: 'tool -run y' });
    const nullUser = fx('null-user', 'match', { ...hit.events[0], User: null });
    expect(dupes([hit, filtered, lowerUser, otherCmd, nullUser])).toEqual([]);
  });

  it('warns when duplicates expect different verdicts: one of them must fail', () => {
    const [finding] = dupes([hit, filtered, fx('contradiction', 'no_match', { Image: 'c:\\tool.exe', CommandLine: 'tool -run x' })]);
    expect(finding).toMatchObject({ severity: 'warning', fixture: 'contradiction', other_fixture: 'hit', message: expect.stringContaining('one of them must fail') });
  });

  it('compares correlation fixtures event by event, in order', () => {
    const a = fx('a', 'match', hit.events[0]!, filtered.events[0]!);
    const swapped = fx('swapped', 'match', filtered.events[0]!, hit.events[0]!);
    expect(dupes([a, swapped])).toEqual([]);
  });
});

describe('analyseQuality: lint findings fixtures cannot catch', () => {
  const lintOf = (text: string): { rule: SigmaRule; findings: LintFinding[] } => {
    const doc = parseSigma(text).documents[0]!;
    if (doc.kind !== 'rule') throw new Error('a rule was expected');
    return { rule: doc, findings: lintDocument(doc) };
  };

  it('passes through tag and style findings but not those a test would expose', () => {
    // `attack.t99999` is not an ATT&CK technique (tags); `dangling` is never used by the condition,
    // which a negative test for it would expose, so that finding is not passed through.
    const { rule: r, findings } = lintOf(
      ruleText("    sel:\n        Image|endswith: '\\tool.exe'\n    dangling:\n        User: x\n    condition: sel", 'tags:\n    - attack.t99999'),
    );
    // The test rule also lacks date, author and description (metadata).
    expect(findings.map((f) => f.code)).toContain('dangling_detection');
    const passed = analyseQuality(r, [], analyseCoverage(r, []), findings).filter((f) => f.code === 'untestable_lint_findings');
    expect(passed.map((f) => [f.lint_code, f.severity])).toEqual([
      ['sigmahq_date_existence', 'warning'],
      ['sigmahq_author_existence', 'warning'],
      ['sigmahq_description_existence', 'info'],
      ['attacktag', 'warning'],
      ['sigmahq_tags_techniques_without_tactics', 'warning'],
    ]);
    expect(passed[3]!.message).toMatch(/^attacktag \(tags, line \d+\): /);
  });

  it('passes through codes the metadata, tag and performance validators report even when not listed', () => {
    // Every validator of those three groups runs on the document, so whatever code they emit counts.
    const r = rule('    sel:\n        A: 1\n    condition: sel');
    const categoryOf = untestableCategoriesFor({ ...r, tags: ['cve.nope'] });
    expect(categoryOf('cvetag')).toBe('tags');
    expect(categoryOf('made_up_code')).toBeUndefined();
  });

  it('classifies by code: naming and style findings are untestable, behavioural ones are not', () => {
    expect(['sigmahq_field_user', 'wildcards_instead_of_modifiers', 'identifier_uniqueness'].map(untestableCategory)).toEqual(['logsource', 'style', 'metadata']);
    expect(['control_character', 'invalid_modifier_combinations', 'dangling_detection', 'yaml-syntax'].map(untestableCategory)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('keeps the lint severity: info stays info, warnings and errors become warnings', () => {
    const lint: LintFinding[] = [
      { code: 'perf_leading_wildcard', severity: 'info', message: 'leading wildcard', line: 9, column: 9 },
      { code: 'regex_catastrophic_backtracking', severity: 'error', message: '/(a+)+/', line: 10, column: 9 },
      { code: 'control_character', severity: 'warning', message: 'tab', line: 11, column: 9 },
    ];
    const passed = quality(target, [hit, filtered], lint);
    expect(passed).toEqual([
      {
        code: 'untestable_lint_findings',
        severity: 'info',
        lint_code: 'perf_leading_wildcard',
        line: 9,
        message: 'perf_leading_wildcard (performance, line 9): leading wildcard; no fixture can catch this',
      },
      {
        code: 'untestable_lint_findings',
        severity: 'warning',
        lint_code: 'regex_catastrophic_backtracking',
        line: 10,
        message: expect.stringContaining('(performance, line 10)'),
      },
    ]);
  });

  it('categorises every code the metadata, tag and performance validators can report', () => {
    // Guards against a new validator code silently dropping out of the pass-through.
    // Codes are written as finding('code', …) or existence(key, 'code', …); namespace tags as `${ns}tag`.
    const known = untestableLintCodes();
    for (const file of ['metadata.ts', 'tags.ts', 'performance.ts']) {
      const source = readFileSync(join(__dirname, '../../sigma/lint', file), 'utf8');
      const found = [...source.matchAll(/(?:finding\(\s*|existence\('[a-z]+', )'([a-z_]+)'/g)].map((m) => m[1]!);
      expect(found.length).toBeGreaterThan(0);
      for (const code of found) expect([file, code, known.has(code)]).toEqual([file, code, true]);
    }
  });
});

describe('analyseQuality: correlation targets', () => {
  const base = (name: string, eventId: number): string =>
    `title: ${name}\nname: ${name}\nlogsource:\n    product: windows\n    service: security\ndetection:\n    sel:\n        EventID: ${eventId}\n    condition: sel`;
  const documents = parseSigma(
    [
      'title: Burst\ncorrelation:\n    type: event_count\n    rules: [failed, locked]\n    group-by: [TargetUserName]\n    timespan: 5m\n    condition:\n        gte: 2',
      base('failed', 4625),
      base('locked', 4740),
    ].join('\n---\n'),
  ).documents;
  const correlation = documents[0]!;
  if (correlation.kind !== 'correlation') throw new Error('the first document is the correlation');

  it('treats group-by and time fields as read and names the base rule of an uncovered selection', () => {
    const burst = fx(
      'burst',
      'match',
      { EventID: 4625, TargetUserName: 'bob', '@timestamp': '2026-01-01T00:00:00Z' },
      { EventID: 4625, TargetUserName: 'bob', '@timestamp': '2026-01-01T00:01:00Z' },
    );
    const single = fx('single', 'no_match', { EventID: 4625, TargetUserName: 'bob', '@timestamp': '2026-01-01T00:00:00Z' });
    const findings = analyseQuality(correlation, [burst, single], analyseCoverage(correlation, [burst, single], { documents }), [], { documents });
    expect(findings).toEqual([
      { code: 'uncovered_selection', severity: 'warning', selection: 'sel', rule: 'locked', message: "no fixture event satisfies selection 'sel' of rule 'locked'" },
    ]);
  });
});

describe('analyseQuality on a corpus rule (SigmaHQ, Detection Rule License 1.1; author: Michael Haag, FPT.EagleEye)', () => {
  it('passes through the performance findings of the real lint run, one per finding', () => {
    const path = join(CORPUS_DIR, 'rules/windows/process_creation/proc_creation_win_bitsadmin_download.yml');
    const r = parseRule(readFileSync(path, 'utf8'));
    const lint = lintDocument(r);
    // `CommandLine|contains` in three selections: a substring search over a high-volume field each.
    expect(lint.map((f) => f.code)).toEqual(['perf_contains_high_volume_field', 'perf_contains_high_volume_field', 'perf_contains_high_volume_field']);
    const passed = analyseQuality(r, [], analyseCoverage(r, []), lint).filter((f) => f.code === 'untestable_lint_findings');
    expect(passed.map((f) => [f.lint_code, f.severity, f.line])).toEqual(lint.map((f) => [f.code, 'info', f.line]));
  });
});
