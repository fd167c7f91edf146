import { junitXml, type JUnitCase } from './junit';
import { mdCode, mdDetails, mdTable, mdText } from './markdown';
import type { Renderable } from './report-output';
import type { RuleTestOutcome } from './rule-test';

export const TEST_FORMATS = ['text', 'json', 'junit', 'markdown'] as const;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function testFailed(outcomes: readonly RuleTestOutcome[]): boolean {
  return outcomes.some((o) => o.kind !== 'ran' || !o.result.passed);
}

/** Which file each fixture name came from, so a failure points at the file to edit. */
function originsByName(o: RuleTestOutcome): Map<string, string> {
  const byName = new Map<string, string>();
  o.fixtures.fixtures.forEach((text, i) => {
    try {
      const name = (JSON.parse(text) as { name?: unknown }).name;
      if (typeof name === 'string') byName.set(name, o.fixtures.origins[i]!);
    } catch {
      // Not JSON: the service refused it, and the report names its file from the error's pointer.
    }
  });
  return byName;
}

function outcomeLines(o: RuleTestOutcome): string[] {
  if (o.kind === 'rule-rejected') return [`${o.file}: error [rule rejected] ${o.error}`];
  if (o.kind === 'fixtures-rejected') {
    const head = `${o.file}: error [fixtures rejected] ${o.error.split('\n')[0]}`;
    return [head, ...o.problems.map((p) => `  ${p.origin}: ${p.message}`)];
  }
  const r = o.result;
  const origins = originsByName(o);
  return [
    `${o.file} → ${r.rule_id} v${r.version} on ${r.target}: ${r.summary.passed}/${r.summary.total} passed, coverage ${Math.round(r.coverage.overall_percent)}%`,
    ...r.tests.map((t) => `  ${t.passed ? 'PASS' : 'FAIL'} ${t.name} (${origins.get(t.name) ?? o.fixtures.dir})${t.passed ? '' : `: ${t.reason}`}`),
    ...r.quality.map((q) => `  ${q.severity} [${q.code}] ${q.message}`),
  ];
}

function outcomeCases(o: RuleTestOutcome): JUnitCase[] {
  if (o.kind === 'rule-rejected') {
    return [{ name: 'push', classname: o.file, file: o.file, seconds: o.seconds, error: { message: o.error.split('\n')[0]!, type: 'rule-rejected', body: o.error } }];
  }
  if (o.kind === 'fixtures-rejected') {
    const problems = o.problems.length > 0 ? o.problems : [{ origin: o.fixtures.dir, message: o.error }];
    return problems.map((p) => ({
      name: p.origin,
      classname: o.file,
      file: p.origin.replace(/\[\d+\]$/, ''),
      seconds: 0,
      error: { message: p.message, type: 'fixture-rejected', body: o.error },
    }));
  }
  const origins = originsByName(o);
  // The service answers for the whole suite at once; per-fixture times are not measured.
  return o.result.tests.map((t) => {
    const origin = origins.get(t.name);
    const verdicts = `expected ${t.expect}; target matched: ${t.matched_on_target ?? 'not run'}; evaluator matched: ${t.matched_in_evaluator}`;
    return {
      name: t.name,
      classname: o.file,
      ...(origin ? { file: origin.replace(/\[\d+\]$/, '') } : {}),
      seconds: 0,
      ...(t.passed ? {} : { failure: { message: t.reason, type: 'fixture', body: `${origin ?? o.fixtures.dir}: ${t.reason}\n${verdicts}` } }),
    };
  });
}

export function testReport(outcomes: readonly RuleTestOutcome[], target: string, now = new Date()): Renderable<(typeof TEST_FORMATS)[number]> {
  const ran = outcomes.flatMap((o) => (o.kind === 'ran' ? [o.result.summary] : []));
  const total = ran.reduce((n, s) => n + s.total, 0);
  const passed = ran.reduce((n, s) => n + s.passed, 0);
  const failedRules = outcomes.filter((o) => o.kind !== 'ran' || !o.result.passed).length;
  const summary = () =>
    `test (${target}): ${plural(outcomes.length, 'rule')}, ${plural(total, 'fixture')}, ${passed} passed, ${total - passed} failed — ` +
    (failedRules === 0 ? 'passed' : `${plural(failedRules, 'rule')} failed`);
  return {
    summary,
    text: () => [...outcomes.flatMap(outcomeLines), summary()].join('\n') + '\n',
    json: () => ({
      target,
      passed: failedRules === 0,
      results: outcomes.map((o) => ({
        file: o.file,
        fixtures_dir: o.fixtures.dir,
        ...(o.kind === 'ran'
          ? { result: o.result }
          : o.kind === 'rule-rejected'
            ? { error: o.error }
            : { rule_id: o.stored.rule_id, version: o.stored.version, error: o.error, fixture_problems: o.problems }),
      })),
    }),
    junit: () =>
      junitXml(
        `detflow test (${target})`,
        outcomes.map((o) => ({ name: o.file, seconds: o.seconds, timestamp: now, cases: outcomeCases(o) })),
      ),
    markdown: () => testMarkdown(outcomes, target, { total, passed, failedRules }),
  };
}

type FailedFixture = { file: string; name: string; origin: string; expect: string; reason: string };
type Refusal = { file: string; what: string; reason: string };

/** For a job summary or a merge-request note: counts, then what failed, then every rule (failed first). */
function testMarkdown(outcomes: readonly RuleTestOutcome[], target: string, counts: { total: number; passed: number; failedRules: number }): string {
  const verdict = counts.failedRules === 0 ? '✅ passed' : `❌ ${plural(counts.failedRules, 'rule')} failed`;
  const parts = [
    `### detflow test (${mdText(target)}): ${verdict}\n`,
    mdTable(
      [
        { header: 'Rules', align: 'right', cell: () => String(outcomes.length) },
        { header: 'Fixtures', align: 'right', cell: () => String(counts.total) },
        { header: 'Passed', align: 'right', cell: () => String(counts.passed) },
        { header: 'Failed', align: 'right', cell: () => String(counts.total - counts.passed) },
      ],
      [null],
    ),
  ];

  const failed: FailedFixture[] = outcomes.flatMap((o) => {
    if (o.kind !== 'ran') return [];
    const origins = originsByName(o);
    return o.result.tests
      .filter((t) => !t.passed)
      .map((t) => ({ file: o.file, name: t.name, origin: origins.get(t.name) ?? o.fixtures.dir, expect: t.expect, reason: t.reason }));
  });
  if (failed.length > 0) {
    parts.push(
      '#### Failed fixtures\n',
      mdTable(
        [
          { header: 'Rule file', cell: (f: FailedFixture) => mdCode(f.file) },
          { header: 'Fixture', cell: (f: FailedFixture) => `${mdText(f.name)}<br>${mdCode(f.origin)}` },
          { header: 'Expected', cell: (f: FailedFixture) => mdCode(f.expect) },
          { header: 'Reason', cell: (f: FailedFixture) => mdText(f.reason) },
        ],
        failed,
      ),
    );
  }

  const refused: Refusal[] = outcomes.flatMap((o): Refusal[] => {
    if (o.kind === 'rule-rejected') return [{ file: o.file, what: 'rule', reason: o.error }];
    if (o.kind !== 'fixtures-rejected') return [];
    if (o.problems.length === 0) return [{ file: o.file, what: o.fixtures.dir, reason: o.error }];
    return o.problems.map((p) => ({ file: o.file, what: p.origin, reason: p.message }));
  });
  if (refused.length > 0) {
    parts.push(
      '#### Refused by the service\n',
      mdTable(
        [
          { header: 'Rule file', cell: (r: Refusal) => mdCode(r.file) },
          { header: 'Refused', cell: (r: Refusal) => mdCode(r.what) },
          { header: 'Reason', cell: (r: Refusal) => mdText(r.reason) },
        ],
        refused,
      ),
    );
  }

  const failedFirst = [...outcomes].sort((a, b) => Number(ruleFailed(b)) - Number(ruleFailed(a)));
  parts.push(
    '#### Rules\n',
    mdTable(
      [
        { header: 'Rule file', cell: (o: RuleTestOutcome) => mdCode(o.file) },
        { header: 'Rule', cell: (o: RuleTestOutcome) => (o.kind === 'rule-rejected' ? '' : `${mdCode(o.stored.rule_id)} v${o.stored.version}`) },
        { header: 'Passed', align: 'right', cell: (o: RuleTestOutcome) => (o.kind === 'ran' ? `${o.result.summary.passed}/${o.result.summary.total}` : '') },
        { header: 'Coverage', align: 'right', cell: (o: RuleTestOutcome) => (o.kind === 'ran' ? `${Math.round(o.result.coverage.overall_percent)}%` : '') },
        { header: 'Result', cell: (o: RuleTestOutcome) => (o.kind === 'ran' ? (o.result.passed ? '✅ passed' : '❌ failed') : '❌ refused') },
      ],
      failedFirst,
    ),
  );

  const notes = outcomes.flatMap((o) => (o.kind === 'ran' ? o.result.quality.map((q) => ({ file: o.file, ...q })) : []));
  if (notes.length > 0) {
    parts.push(
      mdDetails(
        `${plural(notes.length, 'quality note')}`,
        mdTable(
          [
            { header: 'Rule file', cell: (q: (typeof notes)[number]) => mdCode(q.file) },
            { header: 'Severity', cell: (q: (typeof notes)[number]) => q.severity },
            { header: 'Code', cell: (q: (typeof notes)[number]) => mdCode(q.code) },
            { header: 'Message', cell: (q: (typeof notes)[number]) => mdText(q.message) },
          ],
          notes,
        ),
      ),
    );
  }
  return parts.join('\n');
}

const ruleFailed = (o: RuleTestOutcome) => o.kind !== 'ran' || !o.result.passed;
