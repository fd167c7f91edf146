import type { CompiledRule, FixtureCase, FixtureOutcome } from './adapter';

/**
 * Each fixture's outcome from which of them the target matched (`matchedAt(i)`, 0-based), with the
 * reason a rule author acts on when one fails; `where` names the SIEM in the reason (" in Splunk").
 */
export function fixtureOutcomes(rule: CompiledRule, fixtures: readonly FixtureCase[], matchedAt: (index: number) => boolean, where = ''): FixtureOutcome[] {
  return fixtures.map((f, i) => {
    const matched = matchedAt(i);
    const passed = matched === (f.expect === 'match');
    const reason = passed ? '' : `rule ${rule.ruleId} v${rule.version} ${f.expect === 'match' ? 'did not match' : 'matched'} this event${where}`;
    return { name: f.name, expect: f.expect, matched, passed, reason };
  });
}
