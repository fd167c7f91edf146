import { isContentRejection, type ApiClient } from './api-client';
import type { FixtureSet } from './fixture-files';
import { pushRuleFile, type StoredVersion } from './push';

/** The parts of the service's rule-test result the CLI reports (JSON output carries all of it). */
export type RuleTestResult = {
  id: string;
  rule_id: string;
  version: number;
  target: string;
  passed: boolean;
  summary: { total: number; passed: number; failed: number };
  tests: Array<{ name: string; expect: 'match' | 'no_match'; passed: boolean; reason: string; matched_on_target: boolean | null; matched_in_evaluator: boolean }>;
  coverage: { overall_percent: number };
  quality: Array<{ code: string; severity: 'warning' | 'info'; message: string }>;
};

export type FixtureProblem = { origin: string; message: string };

export type RuleTestOutcome = { file: string; fixtures: FixtureSet; seconds: number } & (
  | { kind: 'ran'; stored: StoredVersion; result: RuleTestResult }
  /** The registry refused the rule file: nothing was tested. */
  | { kind: 'rule-rejected'; error: string }
  /** The service refused fixtures (not JSON, missing name/expect/event…): nothing was tested. */
  | { kind: 'fixtures-rejected'; stored: StoredVersion; error: string; problems: FixtureProblem[] }
);

/**
 * Pushes the rule file, so the registry holds exactly this text, then runs the fixtures against
 * the version just stored (not whatever is latest by the time the request arrives).
 */
export async function testRuleFile(client: ApiClient, file: string, fixtures: FixtureSet, target: string): Promise<RuleTestOutcome> {
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const pushed = await pushRuleFile(client, file);
  if (!pushed.ok) return { file, fixtures, seconds: elapsed(), kind: 'rule-rejected', error: pushed.error };
  const stored = pushed.stored;
  try {
    const { body } = await client.request<RuleTestResult>('POST', '/rules/test', { rule_id: stored.rule_id, version: stored.version, target, fixtures: fixtures.fixtures });
    return { file, fixtures, seconds: elapsed(), kind: 'ran', stored, result: body };
  } catch (err) {
    if (!isContentRejection(err)) throw err;
    return { file, fixtures, seconds: elapsed(), kind: 'fixtures-rejected', stored, error: err.message, problems: fixtureProblems(err.problem?.errors ?? [], fixtures) };
  }
}

/** Maps the service's JSON pointers (/body/fixtures/3) back to the files the fixtures came from. */
function fixtureProblems(errors: ReadonlyArray<{ pointer: string; message: string }>, fixtures: FixtureSet): FixtureProblem[] {
  return errors.map((e) => {
    const index = /^\/body\/fixtures\/(\d+)/.exec(e.pointer)?.[1];
    const origin = index === undefined ? undefined : fixtures.origins[Number(index)];
    return { origin: origin ?? e.pointer, message: e.message };
  });
}
