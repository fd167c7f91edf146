import { readFileSync } from 'fs';
import { resolve } from 'path';
import { compileRule } from '../../sigma/evaluate';
import { parseRule } from '../../sigma/parse';
import { regressionSamples } from './support/corpus';

/** Every SigmaHQ regression sample (positive tests only) must fire its rule at least match_count times. */
describe('SigmaHQ regression samples through the evaluator', () => {
  const samples = regressionSamples();

  it('finds the 60 JSON samples and their rules by id, agreeing with mapping.json', () => {
    expect(samples.length).toBe(60);
    for (const s of samples) expect(resolve(s.rulePath)).toBe(resolve(s.mappedRulePath ?? ''));
  });

  it.each(samples.map((s) => [s.samplePath, s] as const))('%s', (_path, sample) => {
    const rule = parseRule(readFileSync(sample.rulePath, 'utf8'));
    expect(rule.id).toBe(sample.ruleId);
    const compiled = compileRule(rule);
    const matches = sample.events.filter((e) => compiled.match(e)).length;
    expect(matches).toBeGreaterThanOrEqual(Math.max(1, sample.matchCount ?? 1));
  });
});
