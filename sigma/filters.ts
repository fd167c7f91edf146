import type { ConditionNode, ParsedCondition, SearchIdentifier, SigmaFilter, SigmaRule } from './model';

/**
 * Meta-filters (spec §6, pySigma semantics): a filter that names a rule (by id or name) and has a
 * compatible logsource adds its identifiers to the rule under a `_filt_<n>_` prefix, and each rule
 * condition becomes `(<rule condition>) and (<filter condition>)`. The filter carries its own
 * negation (`condition: not selection`).
 */

function renamed(node: ConditionNode, prefix: string): ConditionNode {
  switch (node.kind) {
    case 'ref':
      return { ...node, name: prefix + node.name };
    case 'of':
      return { ...node, pattern: node.them ? `${prefix}*` : prefix + node.pattern, them: false, targets: node.targets.map((t) => prefix + t) };
    case 'not':
      return { ...node, operand: renamed(node.operand, prefix) };
    case 'and':
    case 'or':
      return { ...node, operands: node.operands.map((o) => renamed(o, prefix)) };
  }
}

export function filterApplies(filter: SigmaFilter, rule: SigmaRule): boolean {
  const named = filter.rules.some((r) => r === rule.id || r === rule.name);
  if (!named) return false;
  const ls = filter.logsource;
  if (!ls) return true;
  return (['category', 'product', 'service'] as const).every((k) => ls[k] === undefined || ls[k] === rule.logsource[k]);
}

export function applyFilters(rule: SigmaRule, filters: readonly SigmaFilter[]): SigmaRule {
  const applicable = filters.filter((f) => f.errors.length === 0 && filterApplies(f, rule));
  if (applicable.length === 0) return rule;
  const identifiers = new Map<string, SearchIdentifier>(rule.detection.identifiers);
  let conditions: ParsedCondition[] = [...rule.detection.conditions];
  applicable.forEach((filter, index) => {
    const prefix = `_filt_${index}_`;
    for (const [name, ident] of filter.detection.identifiers) identifiers.set(prefix + name, { ...ident, name: prefix + name });
    const filterAsts = filter.detection.conditions.map((c) => renamed(c.ast, prefix));
    const filterAst: ConditionNode = filterAsts.length === 1 ? filterAsts[0]! : { kind: 'or', operands: filterAsts, pos: filter.detection.pos };
    conditions = conditions.map((c) => ({
      source: `(${c.source}) and (${filter.detection.conditions.map((f) => f.source).join(' or ')})`,
      ast: { kind: 'and', operands: [c.ast, filterAst], pos: c.pos },
      pos: c.pos,
    }));
  });
  return { ...rule, detection: { ...rule.detection, identifiers, conditions } };
}
