import type { AttackCoverage } from './attack-coverage';

/**
 * The coverage as an ATT&CK Navigator layer (layer format 4.5, the JSON the Navigator imports and
 * exports): one technique object per technique or sub-technique an active rule covers, scored by
 * the number of active rules covering it, with the rules in its comment and metadata. No `tactic`
 * is set, so each annotation shows under every tactic the technique belongs to (as the coverage
 * counts it). Techniques no rule covers are left out: the Navigator shows them unscored.
 */

/** The layer format this module writes, and the oldest Navigator that reads it (the format's own rule). */
export const LAYER_FORMAT_VERSION = '4.5';
export const NAVIGATOR_VERSION = '5.2.0';
/** Techniques scored 0 (never written) to the most-covered technique: white to green. */
const GRADIENT = ['#ffffff', '#8ec843'];
/** Rules named in one technique's metadata; more are counted in a last entry. */
const MAX_RULES_LISTED = 25;

type Metadata = { name: string; value: string } | { divider: true };
export type NavigatorTechnique = { techniqueID: string; score: number; comment: string; enabled: boolean; metadata: Metadata[] };
export type NavigatorLayer = {
  name: string;
  versions: { attack: string; navigator: string; layer: string };
  domain: 'enterprise-attack';
  description: string;
  sorting: number;
  layout: {
    layout: 'side';
    showID: boolean;
    showName: boolean;
    showAggregateScores: boolean;
    countUnscored: boolean;
    aggregateFunction: 'max';
    expandedSubtechniques: 'annotated';
  };
  hideDisabled: boolean;
  techniques: NavigatorTechnique[];
  gradient: { colors: string[]; minValue: number; maxValue: number };
  legendItems: Array<{ label: string; color: string }>;
  showTacticRowBackground: boolean;
  tacticRowBackground: string;
  selectTechniquesAcrossTactics: boolean;
  selectSubtechniquesWithParent: boolean;
  selectVisibleTechniques: boolean;
  metadata: Metadata[];
};

export type LayerContext = {
  tenant: string;
  /** The token's environments; null for all of the tenant's. */
  environments: readonly string[] | null;
  generatedAt: Date;
  titles: ReadonlyMap<string, string>;
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The layer's `versions.attack`: the release's major number (`19` for 19, `18` for 18.1), as the Navigator names releases. */
export const attackMajor = (version: string) => version.split('.')[0]!;

export function navigatorLayer(coverage: AttackCoverage, ctx: LayerContext): NavigatorLayer {
  const maxScore = Math.max(1, ...coverage.covered.map((c) => c.rules.length));
  const scope = ctx.environments === null ? 'all environments' : `environments ${ctx.environments.join(', ') || '(none)'}`;
  const techniques = coverage.covered.map((c): NavigatorTechnique => {
    const listed = c.rules.slice(0, MAX_RULES_LISTED);
    const metadata: Metadata[] = listed.map((id) => ({ name: 'rule', value: `${ctx.titles.get(id) ?? id} (${id})` }));
    if (c.rules.length > listed.length) metadata.push({ name: 'rules not listed', value: String(c.rules.length - listed.length) });
    return {
      techniqueID: c.id,
      score: c.rules.length,
      comment: `${plural(c.rules.length, 'active rule')}: ${listed.map((id) => ctx.titles.get(id) ?? id).join('; ')}${c.rules.length > listed.length ? '; …' : ''}`,
      enabled: true,
      metadata,
    };
  });
  return {
    name: `detflow coverage: ${ctx.tenant}`,
    versions: { attack: attackMajor(coverage.matrix.version), navigator: NAVIGATOR_VERSION, layer: LAYER_FORMAT_VERSION },
    domain: 'enterprise-attack',
    description:
      `Techniques and sub-techniques covered by the rules active in ${scope} of tenant ${ctx.tenant}, from their attack.* tags; ` +
      `score = number of active rules. ${coverage.techniques.covered}/${coverage.techniques.total} techniques, ` +
      `${coverage.subTechniques.covered}/${coverage.subTechniques.total} sub-techniques (ATT&CK ${coverage.matrix.version}).`,
    sorting: 3,
    layout: { layout: 'side', showID: true, showName: true, showAggregateScores: false, countUnscored: false, aggregateFunction: 'max', expandedSubtechniques: 'annotated' },
    hideDisabled: false,
    techniques,
    gradient: { colors: GRADIENT, minValue: 0, maxValue: maxScore },
    legendItems: [
      { label: 'no active rule', color: GRADIENT[0]! },
      { label: `${plural(maxScore, 'active rule')}`, color: GRADIENT[1]! },
    ],
    showTacticRowBackground: false,
    tacticRowBackground: '#dddddd',
    selectTechniquesAcrossTactics: true,
    selectSubtechniquesWithParent: false,
    selectVisibleTechniques: false,
    metadata: [
      { name: 'generated_at', value: ctx.generatedAt.toISOString() },
      { name: 'active_rules', value: String(coverage.rules) },
      { name: 'scope', value: scope },
      { divider: true },
      { name: 'attack_data', value: `ATT&CK ${coverage.matrix.version}${coverage.matrix.released ? ` (${coverage.matrix.released})` : ''}: ${coverage.matrix.source}` },
      { name: 'attribution', value: coverage.matrix.attribution },
    ],
  };
}
