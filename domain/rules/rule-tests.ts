import {
  analyseCoverage,
  analyseQuality,
  compileRule,
  createCorrelationEngine,
  lintText,
  parseFixtures,
  parseSigma,
  type Coverage,
  type Fixture,
  type QualityFinding,
  type SigmaDocument,
  type SigmaRule,
  type TestTarget,
} from '../../sigma';
import type { SiemAdapter } from '../../siem/adapter';
import { checkValue } from '../../siem/local/sources';
import { findUnstorableText } from '../../lib/storable-text';
import { invalidRequest } from '../errors';
import type { TargetRef } from '../../siem/adapters';
import { ruleWithTargetPlaceholders } from '../targets/placeholders';

export type TestCaseResult = {
  name: string;
  expect: 'match' | 'no_match';
  passed: boolean;
  reason: string;
  /** What the target's own query said (null where the target does not run this kind of rule). */
  matched_on_target: boolean | null;
  matched_in_evaluator: boolean;
};

export type RuleTestReport = {
  passed: boolean;
  summary: { total: number; passed: number; failed: number };
  tests: TestCaseResult[];
  coverage: Coverage;
  quality: QualityFinding[];
  evaluated_on: string;
};

/** The document of a stored text that carries the rule's id, plus every document (for correlations). */
export function documentsOf(text: string, ruleId: string): { main: TestTarget; documents: readonly SigmaDocument[] } {
  const collection = parseSigma(text);
  if (collection.errors.length) {
    throw invalidRequest(
      'The stored rule does not parse, so it cannot be tested; lint it to see why',
      collection.errors.slice(0, 20).map((e) => ({ pointer: '/body/rule_id', message: e.format() })),
    );
  }
  const main = collection.documents.find((d) => d.id?.toLowerCase() === ruleId) ?? collection.documents[0];
  if (!main || main.kind === 'filter')
    throw invalidRequest('The stored text holds no detection or correlation rule to test', [{ pointer: '/body/rule_id', message: 'nothing to test' }]);
  return { main, documents: collection.documents };
}

/**
 * The request's fixtures (`/body/fixtures`) as test documents of the rule to test, or a 400 with a
 * pointer to each one that is not valid, holds text the service cannot store, or holds an event the
 * event store would refuse.
 */
export function readFixtures(texts: readonly string[], main: TestTarget): Fixture[] {
  const parsed = parseFixtures(texts, { ruleKind: main.kind === 'correlation' ? 'correlation' : 'rule' });
  if ('errors' in parsed) {
    throw invalidRequest(
      `${parsed.errors.length} fixture(s) are not valid test documents`,
      parsed.errors.map((e) => ({ pointer: `/body/fixtures/${e.index}`, message: e.message })),
    );
  }
  const unstorable = findUnstorableText(parsed.fixtures, '/body/fixtures');
  if (unstorable) throw invalidRequest('A fixture holds text the service cannot store', [{ pointer: unstorable.pointer, message: unstorable.reason }]);
  // Each event as the store will take it (a number beyond a double's range, say, is refused).
  const refused = parsed.fixtures.flatMap((f, i) =>
    f.events.flatMap((e, j) => {
      const c = checkValue(e);
      return c.ok ? [] : [{ pointer: `/body/fixtures/${i}/events/${j}`, message: c.error }];
    }),
  );
  if (refused.length > 0) throw invalidRequest(`${refused.length} fixture event(s) cannot be stored as events`, refused);
  return parsed.fixtures;
}

/**
 * Runs each fixture through the target's own query (for the local target: the compiled DuckDB SQL
 * over an isolated fixture table) and through the in-process evaluator. A test passes when the
 * target gives the expected verdict and the evaluator agrees with it: a disagreement means one of
 * the two is wrong about this rule, which is a failure of its own.
 */
export async function runRuleTests(input: {
  text: string;
  ruleId: string;
  version: number;
  fixtures: Fixture[];
  adapter: SiemAdapter<SigmaRule>;
  targetName: string;
  /** The target's placeholder values (`|expand`), its own over its environment's. */
  target?: TargetRef;
}): Promise<RuleTestReport> {
  const { main: written, documents } = documentsOf(input.text, input.ruleId);
  // A rule with `%placeholders%` is tested as the target would run it: with the target's values.
  const main =
    written.kind === 'rule' && input.target
      ? ruleWithTargetPlaceholders(written, input.ruleId, input.target, (detail, names) =>
          invalidRequest(
            detail,
            names.map((n) => ({ pointer: '/body/target', message: `placeholder %${n}% has no value on target ${input.targetName}` })),
          ),
        )
      : written;
  let tests: TestCaseResult[];
  let evaluatedOn: string;
  if (main.kind === 'rule') {
    const compiled = input.adapter.compile(main);
    if (!compiled.ok) {
      throw invalidRequest(
        `Target ${input.targetName} cannot run this rule`,
        compiled.issues.map((i) => ({ pointer: '/body/target', message: `${i.line ?? '?'}:${i.column ?? '?'} ${i.message}` })),
      );
    }
    const rule = { ruleId: input.ruleId, version: input.version, query: compiled.query, ...(compiled.logsource ? { logsource: compiled.logsource } : {}) };
    const onTarget = await input.adapter.runFixtures(
      rule,
      input.fixtures.map((f) => ({ name: f.name, expect: f.expect, event: f.events[0] as Record<string, unknown> })),
    );
    const evaluator = compileRule(main);
    tests = input.fixtures.map((f, i) => {
      const target = onTarget[i]!.matched;
      const local = evaluator.match(f.events[0]!);
      const wanted = f.expect === 'match';
      let reason = '';
      if (target !== local)
        reason = `the target's query and the in-process evaluator disagree: target ${target ? 'matched' : 'did not match'}, evaluator ${local ? 'matched' : 'did not match'}`;
      else if (target !== wanted) reason = wanted ? 'the rule did not match this event' : 'the rule matched this event';
      return { name: f.name, expect: f.expect, passed: reason === '', reason, matched_on_target: target, matched_in_evaluator: local };
    });
    evaluatedOn = `${input.adapter.kind} target ${input.targetName} and the in-process evaluator`;
  } else {
    // Correlations need ordered event streams; no target runs them from a fixture table, so the
    // in-process correlation engine is the reference here.
    tests = input.fixtures.map((f) => {
      const alerts = createCorrelationEngine(documents).run(f.events);
      const local = alerts.some((a) => a.correlation === main);
      const wanted = f.expect === 'match';
      return {
        name: f.name,
        expect: f.expect,
        passed: local === wanted,
        reason: local === wanted ? '' : wanted ? 'the correlation did not fire on these events' : 'the correlation fired on these events',
        matched_on_target: null,
        matched_in_evaluator: local,
      };
    });
    evaluatedOn = 'the in-process correlation engine';
  }
  const options = { documents };
  const coverage = analyseCoverage(main, input.fixtures, options);
  const quality = analyseQuality(main, input.fixtures, coverage, lintText(input.text).findings, options);
  const failed = tests.filter((t) => !t.passed).length;
  return { passed: failed === 0, summary: { total: tests.length, passed: tests.length - failed, failed }, tests, coverage, quality, evaluated_on: evaluatedOn };
}
