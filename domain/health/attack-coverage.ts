import { ATTACK_MATRIX, attackIndex, type AttackMatrix } from '../../sigma/data/attack-matrix';
import { techniquesOfTags } from './attack-tags';
import { tacticsOfTags, type LegacyTacticTag } from './attack-tactic-tags';
import { round } from '../runs/rounding';

/**
 * ATT&CK coverage of a set of rules (the active ones) against the bundled Enterprise matrix, from
 * their `attack.*` tags. Pure: the dashboard reads the rules, this counts.
 *
 * - A technique tag covers that technique; a sub-technique tag (`attack.t1059.001`) covers the
 *   sub-technique only, not its parent. Techniques and sub-techniques are counted apart, each
 *   against the matrix's own total.
 * - A tag naming a technique the matrix does not hold is listed in `outsideMatrix` and covers
 *   nothing, except a revoked technique whose replacement the matrix names (STIX sources tell it):
 *   it covers the replacement.
 * - A tactic is covered when a rule covers one of its techniques or sub-techniques (a technique
 *   belongs to every tactic the matrix gives it), or names the tactic itself (`attack.execution`;
 *   `attack.defense-evasion` as `attack-tactic-tags.ts` says).
 */

export type CoverageRule = { ruleId: string; title: string; tags: readonly string[] };

export type CoveredTechnique = { id: string; name: string; parent: string | null; tactics: readonly string[]; rules: string[] };
export type TacticCoverage = {
  id: string;
  shortname: string;
  name: string;
  covered: boolean;
  techniques: Count;
  subTechniques: Count;
  /** Rules naming the tactic itself in a tag. */
  taggedByRules: number;
};
export type Count = { covered: number; total: number; ratio: number | null };
export type OutsideMatrix = { technique: string; reason: 'withdrawn' | 'not_in_matrix'; countedAs: string | null; rules: string[] };
export type LegacyTactics = { tactic: string; rules: string[]; countedAs: Record<string, number> };

export type RuleAttack = {
  /** Techniques and sub-techniques of the matrix the rule covers, sorted. */
  techniques: string[];
  tactics: string[];
  legacy: LegacyTacticTag[];
};

export type AttackCoverage = {
  matrix: Pick<AttackMatrix, 'domain' | 'version' | 'released'> & { source: string; attribution: string };
  rules: number;
  techniques: Count;
  subTechniques: Count;
  tactics: Count & { items: TacticCoverage[] };
  covered: CoveredTechnique[];
  outsideMatrix: OutsideMatrix[];
  legacyTactics: LegacyTactics[];
  perRule: ReadonlyMap<string, RuleAttack>;
};

const count = (covered: number, total: number): Count => ({ covered, total, ratio: total > 0 ? round(covered / total) : null });

export function attackCoverage(rules: readonly CoverageRule[]): AttackCoverage {
  const { techniques: matrix, withdrawn } = attackIndex();
  const perRule = new Map<string, RuleAttack>();
  const rulesOf = new Map<string, string[]>();
  const outside = new Map<string, OutsideMatrix>();
  const legacy = new Map<string, LegacyTactics>();
  const tacticTaggers = new Map<string, number>();

  for (const rule of [...rules].sort((a, b) => a.ruleId.localeCompare(b.ruleId))) {
    const own = new Set<string>();
    for (const id of techniquesOfTags(rule.tags)) {
      const replacement = matrix.has(id) ? undefined : withdrawn.get(id)?.revoked_by;
      const counted = matrix.has(id) ? id : replacement && matrix.has(replacement) ? replacement : null;
      if (counted !== id) {
        const o = outside.get(id) ?? { technique: id, reason: withdrawn.has(id) ? 'withdrawn' : 'not_in_matrix', countedAs: counted, rules: [] };
        o.rules.push(rule.ruleId);
        outside.set(id, o);
      }
      if (counted) own.add(counted);
    }
    const techniques = [...own].sort();
    const { tactics, legacy: old } = tacticsOfTags(rule.tags, techniques);
    perRule.set(rule.ruleId, { techniques, tactics, legacy: old });
    for (const t of techniques) rulesOf.set(t, [...(rulesOf.get(t) ?? []), rule.ruleId]);
    // A rule naming a tactic twice (stealth, and defense-evasion counted as stealth) counts once.
    for (const t of tactics) tacticTaggers.set(t, (tacticTaggers.get(t) ?? 0) + 1);
    for (const l of old) {
      const entry = legacy.get(l.tactic) ?? { tactic: l.tactic, rules: [], countedAs: {} };
      entry.rules.push(rule.ruleId);
      for (const t of l.countedAs) entry.countedAs[t] = (entry.countedAs[t] ?? 0) + 1;
      legacy.set(l.tactic, entry);
    }
  }

  const covered: CoveredTechnique[] = [...rulesOf.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, ruleIds]) => {
      const t = matrix.get(id)!;
      return { id, name: t.name, parent: t.parent ?? null, tactics: t.tactics, rules: ruleIds };
    });
  const isCovered = new Set(covered.map((c) => c.id));
  const items: TacticCoverage[] = ATTACK_MATRIX.tactics.map((tactic) => {
    const inTactic = ATTACK_MATRIX.techniques.filter((t) => t.tactics.includes(tactic.shortname));
    const main = inTactic.filter((t) => !t.parent);
    const subs = inTactic.filter((t) => t.parent);
    const techniques = count(main.filter((t) => isCovered.has(t.id)).length, main.length);
    const subTechniques = count(subs.filter((t) => isCovered.has(t.id)).length, subs.length);
    const taggedByRules = tacticTaggers.get(tactic.shortname) ?? 0;
    return {
      id: tactic.id,
      shortname: tactic.shortname,
      name: tactic.name,
      covered: techniques.covered + subTechniques.covered + taggedByRules > 0,
      techniques,
      subTechniques,
      taggedByRules,
    };
  });
  const allMain = ATTACK_MATRIX.techniques.filter((t) => !t.parent);
  const allSubs = ATTACK_MATRIX.techniques.filter((t) => t.parent);
  return {
    matrix: {
      domain: ATTACK_MATRIX.domain,
      version: ATTACK_MATRIX.version,
      released: ATTACK_MATRIX.released,
      source: ATTACK_MATRIX.source.label,
      attribution: ATTACK_MATRIX.attribution,
    },
    rules: rules.length,
    techniques: count(covered.filter((c) => !c.parent).length, allMain.length),
    subTechniques: count(covered.filter((c) => c.parent).length, allSubs.length),
    tactics: { ...count(items.filter((i) => i.covered).length, items.length), items },
    covered,
    outsideMatrix: [...outside.values()].sort((a, b) => a.technique.localeCompare(b.technique)),
    legacyTactics: [...legacy.values()],
    perRule,
  };
}
