import { ATTACK_LEGACY_TACTICS, attackIndex, type AttackTactic, type AttackTechnique } from '../../sigma/data/attack-matrix';
import type { CompiledRule } from '../adapter';
import { objectName } from '../remote/deployed-marker';
import { ruleFrom, type ElasticConnection } from './connection';

/**
 * The body of a detection rule as Kibana's detection engine API takes it (`EsqlRuleCreateProps`
 * and `EsqlRuleUpdateProps` of `rule_schemas.schema.yaml` in elastic/kibana): an ES|QL rule named
 * after the Sigma rule, its severity and risk score from the Sigma level, and its ATT&CK mapping
 * (`threat`) from the rule's `attack.*` tags.
 */

export type KibanaSeverity = 'low' | 'medium' | 'high' | 'critical';

const SEVERITY: Readonly<Record<string, KibanaSeverity>> = { informational: 'low', low: 'low', medium: 'medium', high: 'high', critical: 'critical' };
/** Kibana's own defaults per severity (the values its rule editor proposes). */
const RISK: Readonly<Record<string, number>> = { informational: 21, low: 21, medium: 47, high: 73, critical: 99 };

export interface EsqlRuleBody {
  type: 'esql';
  language: 'esql';
  query: string;
  rule_id: string;
  name: string;
  description: string;
  severity: KibanaSeverity;
  risk_score: number;
  threat: ThreatEntry[];
  interval: string;
  from: string;
  enabled: boolean;
  tags: string[];
  version?: number;
}

export interface ThreatEntry {
  framework: 'MITRE ATT&CK';
  tactic: { id: string; name: string; reference: string };
  technique: Array<{ id: string; name: string; reference: string; subtechnique?: Array<{ id: string; name: string; reference: string }> }>;
}

/** The tag every rule detflow writes carries: how listing and undeploy find detflow's rules. */
export const DETFLOW_TAG = 'detflow';

export function severityOf(level: string | undefined): KibanaSeverity {
  return SEVERITY[level ?? ''] ?? 'medium';
}

export function riskScoreOf(level: string | undefined, overrides: ElasticConnection['risk_score_by_level']): number {
  const key = level && level in RISK ? level : 'medium';
  return overrides?.[key as keyof NonNullable<typeof overrides>] ?? RISK[key]!;
}

export function ruleBody(rule: CompiledRule, description: string, connection: ElasticConnection): EsqlRuleBody {
  return {
    type: 'esql',
    language: 'esql',
    query: rule.query,
    rule_id: objectName(rule.ruleId),
    name: rule.title?.trim() || rule.ruleId,
    description,
    severity: severityOf(rule.level),
    risk_score: riskScoreOf(rule.level, connection.risk_score_by_level),
    threat: threatOf(rule.tags ?? []),
    interval: connection.interval,
    from: ruleFrom(connection),
    enabled: true,
    tags: [DETFLOW_TAG],
  };
}

const tacticRef = (t: AttackTactic) => `https://attack.mitre.org/tactics/${t.id}/`;
const techniqueRef = (id: string) => `https://attack.mitre.org/techniques/${id.replace('.', '/')}/`;

/**
 * Kibana's `threat` from Sigma's ATT&CK tags: one entry per tactic, each with the rule's techniques
 * of that tactic (sub-techniques under their parent). A tactic tag of an earlier release that ATT&CK
 * split keeps the id it kept (`defense-evasion` → Stealth, TA0005). A technique none of whose
 * tactics is tagged goes under its first tactic in matrix order; unknown tags are left out.
 */
export function threatOf(tags: readonly string[]): ThreatEntry[] {
  const idx = attackIndex();
  const tactics: AttackTactic[] = [];
  const techniques: AttackTechnique[] = [];
  for (const raw of tags) {
    const tag = raw.toLowerCase();
    if (!tag.startsWith('attack.')) continue;
    const name = tag.slice('attack.'.length);
    if (/^t\d{4}(\.\d{3})?$/.test(name)) {
      const t = idx.techniques.get(name.toUpperCase());
      if (t && !techniques.includes(t)) techniques.push(t);
      continue;
    }
    const shortname = ATTACK_LEGACY_TACTICS[name]?.keptIdBy ?? name;
    const tactic = idx.tactics.get(shortname);
    if (tactic && !tactics.includes(tactic)) tactics.push(tactic);
  }
  const tacticsOf = (t: AttackTechnique) => (t.parent ? (idx.techniques.get(t.parent)?.tactics ?? t.tactics) : t.tactics);
  for (const t of techniques) {
    const own = tacticsOf(t);
    if (own.some((s) => tactics.some((x) => x.shortname === s))) continue;
    const first = own.map((s) => idx.tactics.get(s)).find((x): x is AttackTactic => x !== undefined);
    if (first && !tactics.includes(first)) tactics.push(first);
  }
  return tactics.map((tactic) => {
    const entry: ThreatEntry = { framework: 'MITRE ATT&CK', tactic: { id: tactic.id, name: tactic.name, reference: tacticRef(tactic) }, technique: [] };
    for (const t of techniques) {
      if (!tacticsOf(t).includes(tactic.shortname)) continue;
      const parent = t.parent ? idx.techniques.get(t.parent) : t;
      if (!parent) continue;
      let tech = entry.technique.find((x) => x.id === parent.id);
      if (!tech) {
        tech = { id: parent.id, name: parent.name, reference: techniqueRef(parent.id) };
        entry.technique.push(tech);
      }
      if (t.parent) (tech.subtechnique ??= []).push({ id: t.id, name: t.name, reference: techniqueRef(t.id) });
    }
    return entry;
  });
}
