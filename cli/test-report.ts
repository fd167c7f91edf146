import { junitXml, type JUnitCase } from './junit';
import type { Renderable } from './report-output';
import type { RuleTestOutcome } from './rule-test';

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

export function testReport(outcomes: readonly RuleTestOutcome[], target: string, now = new Date()): Renderable {
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
  };
}
