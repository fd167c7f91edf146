import { ATTACK_LEGACY_TACTICS, attackIndex } from '../../sigma/data/attack-matrix';

/**
 * The ATT&CK tactics a rule names in its tags (`attack.execution`, `attack.stealth`), in the terms
 * of the bundled release. A tactic of an earlier release that was split (`attack.defense-evasion`,
 * split by ATT&CK 19 into Stealth and Defense Impairment) counts toward the tactics of the split that
 * the rule's own techniques belong to; when none of them does, toward the tactic that kept the old
 * id (Stealth, TA0005). Anything else (`attack.t1059`, `attack.g0016`, an unknown word) names no tactic.
 */
const TACTIC_TAG = /^attack\.([a-z]+(?:-[a-z]+)*)$/i;

export type LegacyTacticTag = {
  /** The tactic as the rule spells it, e.g. `defense-evasion`. */
  tactic: string;
  /** The current tactics it counted toward. */
  countedAs: string[];
};

export type RuleTactics = {
  /** Current tactic shortnames, sorted. */
  tactics: string[];
  legacy: LegacyTacticTag[];
};

/** `techniques`: the rule's techniques that are in the bundled matrix (ids as `techniquesOfTags` gives them). */
export function tacticsOfTags(tags: readonly string[], techniques: readonly string[]): RuleTactics {
  const { tactics: known, techniques: matrix } = attackIndex();
  const found = new Set<string>();
  const legacy: LegacyTacticTag[] = [];
  for (const tag of tags) {
    const name = TACTIC_TAG.exec(tag.trim())?.[1]?.toLowerCase();
    if (!name) continue;
    if (known.has(name)) {
      found.add(name);
      continue;
    }
    const old = ATTACK_LEGACY_TACTICS[name];
    if (!old || legacy.some((l) => l.tactic === name)) continue;
    const ofTechniques = new Set(techniques.flatMap((id) => matrix.get(id)?.tactics ?? []));
    const fromTechniques = old.splitInto.filter((t) => ofTechniques.has(t));
    const countedAs = fromTechniques.length ? fromTechniques : [old.keptIdBy];
    for (const t of countedAs) found.add(t);
    legacy.push({ tactic: name, countedAs });
  }
  return { tactics: [...found].sort(), legacy };
}
