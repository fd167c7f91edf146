import type { RuleTestRun } from '../../domain/rules/rule-test-runs';

/** How the API shows a recorded rule test run: its result, with its id and time. */
export function ruleTestView(run: RuleTestRun) {
  return { id: run.id, ...run.result, created_at: run.createdAt.toISOString() };
}
