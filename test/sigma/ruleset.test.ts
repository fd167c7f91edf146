import { readFileSync } from 'fs';
import type { SigmaRule } from '../../sigma/model';
import { parseRule, parseSigma } from '../../sigma/parse';
import { compileRuleset, logsourceApplies, matchEveryRule } from '../../sigma/ruleset';
import { ruleNeed } from '../../sigma/ruleset/anchors';
import { Automaton } from '../../sigma/ruleset/automaton';
import { corpusFiles, regressionSamples } from './support/corpus';
import { generateRulesetEvents, type GeneratedEvent } from './support/ruleset-events';

/**
 * The routed and prefiltered ruleset must give, for every event, exactly the rules that evaluating
 * every rule's own matcher gives (sigma/ruleset/index.ts).
 */

function corpusRules(): SigmaRule[] {
  return corpusFiles().flatMap((path) => {
    const c = parseSigma(readFileSync(path, 'utf8'));
    return c.errors.length > 0 ? [] : c.documents.filter((d): d is SigmaRule => d.kind === 'rule');
  });
}

describe('whole-ruleset evaluation', () => {
  const rules = corpusRules();
  const ruleset = compileRuleset(rules);

  it('matches exactly what every rule matches on its own, over the corpus and generated events', () => {
    const generated = generateRulesetEvents(rules, { seed: 15, noisePerRuleEvent: 1, nearMisses: 2, literalShare: 0.5 });
    // Real Windows events of the regression samples, without a logsource: no rule is routed away.
    const samples: GeneratedEvent[] = regressionSamples().flatMap((s) => s.events.map((event) => ({ event })));
    let matching = 0;
    const differences: string[] = [];
    const matchedRules = new Set<number>();
    for (const { event, logsource } of [...generated, ...samples]) {
      const want = matchEveryRule(ruleset.rules, event, logsource);
      const got = ruleset.match(event, logsource);
      if (want.length > 0) matching++;
      want.forEach((r) => matchedRules.add(r));
      if (want.join() !== got.join()) differences.push(`${JSON.stringify(event)} ${JSON.stringify(logsource)}: want ${want} got ${got}`);
    }
    expect(differences.slice(0, 5)).toEqual([]);
    // The event set exercises the rules: most rules match something, a good share of events match.
    expect(matchedRules.size / ruleset.rules.length).toBeGreaterThan(0.7);
    expect(matching).toBeGreaterThan(rules.length / 2);
    // Most rules are prefiltered (they run only when one of their literals is present).
    expect(ruleset.stats.anchored / ruleset.stats.rules).toBeGreaterThan(0.8);
  });

  it('routes by logsource as the local target does: each named attribute, lower-cased, must be present', () => {
    const ls = parseRule('title: t\nlogsource: {product: windows, category: process_creation}\ndetection: {s: {A: x}, condition: s}\n').logsource;
    expect(logsourceApplies(ls, { product: 'Windows', category: 'PROCESS_CREATION', service: 'sysmon' })).toBe(true);
    expect(logsourceApplies(ls, { product: 'windows' })).toBe(false);
    expect(logsourceApplies(ls, { product: 'linux', category: 'process_creation' })).toBe(false);
    expect(logsourceApplies(ls, undefined)).toBe(true);
  });

  it('keeps rules it cannot reason about unfiltered, and anchors the rest on necessary literals', () => {
    const need = (detection: string): string => JSON.stringify(ruleNeed(parseRule(`title: t\nlogsource: {product: windows}\ndetection:\n${detection}`)));
    expect(need('  s: {A: x}\n  f: {B: y}\n  condition: not s and not f\n')).toBe('null');
    expect(need('  s: [evil]\n  condition: s\n')).toBe(JSON.stringify([{ field: null, kind: 'contains', text: 'evil' }]));
    expect(need('  s: ["*"]\n  condition: s\n')).toBe('null');
    expect(need('  s: {A|re: ab+}\n  condition: s\n')).toBe('null');
    expect(need('  s: {A|cased: "Straße"}\n  condition: s\n')).toBe('null');
    // An AND keeps one side's anchors; an OR needs both sides'.
    expect(need('  s: {A|endswith: [.EXE, .dll], B|re: x}\n  condition: s\n')).toBe(
      JSON.stringify([
        { field: 'A', kind: 'suffix', text: '.exe' },
        { field: 'A', kind: 'suffix', text: '.dll' },
      ]),
    );
    expect(need('  s: {A: x}\n  r: {B|re: x}\n  condition: s or r\n')).toBe('null');
    expect(need('  s: {A: "a*Long?b"}\n  condition: s\n')).toBe(JSON.stringify([{ field: 'A', kind: 'contains', text: 'long' }]));
  });

  it('finds every pattern occurrence with one automaton, prefixes and suffixes only in place', () => {
    const a = new Automaton([
      { text: 'he', kind: 'contains' },
      { text: 'she', kind: 'contains' },
      { text: 'hers', kind: 'suffix' },
      { text: 'ush', kind: 'prefix' },
      { text: 'é', kind: 'contains' },
    ]);
    const found = (text: string): number[] => {
      const ids = new Set<number>();
      a.scan(text, (id) => ids.add(id));
      return [...ids].sort();
    };
    expect(found('ushers')).toEqual([0, 1, 2, 3]);
    expect(found('hersh')).toEqual([0]);
    expect(found('caféush')).toEqual([4]);
  });
});
