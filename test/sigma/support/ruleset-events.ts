import type { ConditionNode, DetectionNode, SigmaRule, SigmaValue } from '../../../sigma/model';
import type { EventLogsource } from '../../../sigma/ruleset';
import { seededRandom } from '../../../lib/seeded-random';

/**
 * Events for whole-ruleset evaluation, generated from the rules themselves (deterministic, seeded):
 *  - from each rule's condition: an event meant to satisfy it (wildcards filled in, random case
 *    where the value is case-insensitive, one alternative of each OR), in the rule's logsource;
 *  - near misses of those: one character changed, dropped or added, or a logsource that differs;
 *  - noise: a rule's logsource with fields the ruleset reads, filled with benign text in which a
 *    literal of some rule appears now and then (`literalShare`).
 */

export interface GeneratedEvent {
  readonly event: Record<string, unknown>;
  readonly logsource?: EventLogsource;
}

export interface GeneratorOptions {
  readonly seed: number;
  /** Noise events per rule-derived event. */
  readonly noisePerRuleEvent: number;
  /** Near misses per rule-derived event. */
  readonly nearMisses: number;
  /** Chance that a noise value carries a literal taken from some rule. */
  readonly literalShare: number;
}

type Rng = () => number;

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

function caseVariant(rng: Rng, s: string): string {
  const r = rng();
  if (r < 0.4) return s;
  if (r < 0.6) return s.toUpperCase();
  if (r < 0.8) return s.toLowerCase();
  return [...s].map((c) => (rng() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
}

const FILL = ['', 'x', ' Foo ', '\\', 'C:\\Temp\\', '-'];

function instantiate(rng: Rng, v: SigmaValue): unknown {
  switch (v.kind) {
    case 'string': {
      const text = v.parts.map((p) => (typeof p === 'string' ? p : p.wildcard === '*' ? pick(rng, FILL) : 'Q')).join('');
      return v.cased ? text : caseVariant(rng, text);
    }
    case 'number':
      return rng() < 0.5 ? v.value : v.text;
    case 'boolean':
      return v.value;
    case 'cidr':
      return v.version === 4 ? [24, 16, 8, 0].map((s) => Number((v.address >> BigInt(s)) & 255n) + (s === 0 && v.prefix < 32 ? 1 : 0)).join('.') : undefined;
    case 'compare':
      return v.value + (v.op === 'gt' ? 1 : v.op === 'lt' ? -1 : 0);
    case 'exists':
      return v.value ? 'present' : undefined;
    case 'expansion':
      return instantiate(rng, pick(rng, v.values));
    default:
      return undefined;
  }
}

function satisfyNode(rng: Rng, node: DetectionNode, event: Record<string, unknown>): void {
  if (node.kind === 'and') node.children.forEach((c) => satisfyNode(rng, c, event));
  else if (node.kind === 'or') satisfyNode(rng, pick(rng, node.children), event);
  else {
    const item = node.item;
    if (item.negated || item.values.length === 0) return;
    const values = item.linking === 'and' ? item.values : [pick(rng, item.values)];
    const texts = values.map((v) => instantiate(rng, v)).filter((x) => x !== undefined);
    if (texts.length === 0) return;
    const value = texts.length === 1 ? texts[0] : texts.map(String).join(' ');
    if (item.field === null) event.Message = `${String(event.Message ?? '')} ${String(value)} `;
    else event[item.field] = value;
  }
}

function satisfyCondition(rng: Rng, node: ConditionNode, rule: SigmaRule, event: Record<string, unknown>): void {
  const ident = (name: string): void => {
    const found = rule.detection.identifiers.get(name);
    if (found) satisfyNode(rng, found.node, event);
  };
  switch (node.kind) {
    case 'ref':
      return ident(node.name);
    case 'of':
      if (node.targets.length === 0) return;
      if (node.quantifier === 'all') node.targets.forEach(ident);
      else ident(pick(rng, node.targets));
      return;
    case 'not':
      return;
    case 'and':
      return node.operands.forEach((o) => satisfyCondition(rng, o, rule, event));
    case 'or':
      return satisfyCondition(rng, pick(rng, node.operands), rule, event);
  }
}

function ruleLogsource(rule: SigmaRule): EventLogsource {
  const { product, category, service } = rule.logsource;
  return { ...(product ? { product } : {}), ...(category ? { category } : {}), ...(service ? { service } : {}) };
}

function nearMiss(rng: Rng, event: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...event };
  const keys = Object.keys(copy).filter((k) => typeof copy[k] === 'string' && (copy[k] as string).length > 0);
  if (keys.length === 0) return copy;
  const k = pick(rng, keys);
  const s = copy[k] as string;
  const i = Math.floor(rng() * s.length);
  const r = rng();
  copy[k] = r < 0.3 ? s.slice(0, i) + 'z' + s.slice(i + 1) : r < 0.5 ? s.slice(1) : r < 0.7 ? s.slice(0, -1) : r < 0.85 ? s.slice(0, i) + '_' + s.slice(i) : s.toUpperCase();
  return copy;
}

function literalsOf(rules: readonly SigmaRule[]): { fields: string[]; literals: string[] } {
  const fields = new Set<string>();
  const literals = new Set<string>();
  const visit = (node: DetectionNode): void => {
    if (node.kind !== 'item') return node.children.forEach(visit);
    if (node.item.field !== null) fields.add(node.item.field);
    for (const v of node.item.values) if (v.kind === 'string') for (const p of v.parts) if (typeof p === 'string' && p.length > 2) literals.add(p);
  };
  for (const r of rules) for (const ident of r.detection.identifiers.values()) visit(ident.node);
  return { fields: [...fields].sort(), literals: [...literals].sort() };
}

const BENIGN = [
  'C:\\Windows\\System32\\svchost.exe',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
  '"C:\\Windows\\system32\\svchost.exe" -k netsvcs -p -s Schedule',
  'C:\\Users\\alice\\AppData\\Local\\Temp\\setup.log',
  'HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Explorer',
  '/usr/bin/python3 /opt/app/worker.py --queue default',
  'NT AUTHORITY\\SYSTEM',
  'CONTOSO\\bob',
  'Microsoft Corporation',
  '10.1.2.3',
  'update.example.com',
];

/** Events for `rules` (see above), in a fixed order for a given seed. */
export function generateRulesetEvents(rules: readonly SigmaRule[], options: GeneratorOptions): GeneratedEvent[] {
  const rng = seededRandom(options.seed);
  const { fields, literals } = literalsOf(rules);
  const logsources = rules.map(ruleLogsource);
  const out: GeneratedEvent[] = [];
  const noise = (): GeneratedEvent => {
    const event: Record<string, unknown> = {};
    const n = 3 + Math.floor(rng() * 6);
    for (let i = 0; i < n; i++) {
      const value = rng() < options.literalShare ? `${pick(rng, BENIGN)} ${caseVariant(rng, pick(rng, literals))}` : pick(rng, BENIGN);
      event[pick(rng, fields)] = rng() < 0.1 ? Math.floor(rng() * 5000) : value;
    }
    return { event, logsource: pick(rng, logsources) };
  };
  for (const rule of rules) {
    for (const condition of rule.detection.conditions) {
      const event: Record<string, unknown> = {};
      satisfyCondition(rng, condition.ast, rule, event);
      const own = ruleLogsource(rule);
      const r = rng();
      const logsource = r < 0.1 ? undefined : r < 0.8 ? Object.fromEntries(Object.entries(own).map(([k, v]) => [k, caseVariant(rng, v as string)])) : pick(rng, logsources);
      out.push({ event, ...(logsource ? { logsource } : {}) });
      for (let i = 0; i < options.nearMisses; i++) out.push({ event: nearMiss(rng, event), logsource: own });
      for (let i = 0; i < options.noisePerRuleEvent; i++) out.push(noise());
    }
  }
  return out;
}
