import type { DetectionItem, DetectionNode, SearchIdentifier, SigmaDocument, SigmaRule, SigmaValue } from './model';
import { resolvePlaceholders } from './evaluate/placeholders';
import { documentItems } from './walk';

/** Values for `|expand` placeholders: a name (without `%`) to its values. */
export type PlaceholderValues = Readonly<Record<string, readonly string[]>>;

/** The placeholders a document's `|expand` values name, each once, in source order, with where it is first used. */
export function placeholdersUsed(doc: SigmaDocument): Array<{ name: string; line: number; column: number }> {
  const out = new Map<string, { name: string; line: number; column: number }>();
  const visit = (v: SigmaValue, item: DetectionItem) => {
    if (v.kind === 'expansion') v.values.forEach((x) => visit(x, item));
    else if (v.kind === 'placeholder') {
      for (const p of v.parts) {
        if (typeof p === 'object' && 'placeholder' in p && !out.has(p.placeholder))
          out.set(p.placeholder, { name: p.placeholder, line: item.pos.line, column: item.pos.column });
      }
    }
  };
  for (const { item } of documentItems(doc)) for (const v of item.values) visit(v, item);
  return [...out.values()];
}

/**
 * The rule with every `%name%` placeholder replaced by its values, pySigma's `value_placeholders`
 * semantics: a value with a placeholder becomes the OR of the value with each of the
 * placeholder's values in its place (a cartesian product when it names several); the item's other
 * values and its modifiers stay. A rule without placeholders is returned as it is. A placeholder
 * without a value throws `placeholder-unresolved` at its item.
 */
export function withPlaceholderValues(rule: SigmaRule, values: PlaceholderValues): SigmaRule {
  if (placeholdersUsed(rule).length === 0) return rule;
  const value = (v: SigmaValue, item: DetectionItem): SigmaValue => {
    if (v.kind === 'expansion') return { kind: 'expansion', values: v.values.map((x) => value(x, item)) };
    if (v.kind !== 'placeholder') return v;
    const resolved = resolvePlaceholders(v, values, item.pos);
    return resolved.length === 1 ? resolved[0]! : { kind: 'expansion', values: resolved };
  };
  const node = (n: DetectionNode): DetectionNode =>
    n.kind === 'item' ? { kind: 'item', item: { ...n.item, values: n.item.values.map((v) => value(v, n.item)) } } : { ...n, children: n.children.map(node) };
  const identifiers = new Map<string, SearchIdentifier>();
  for (const [name, ident] of rule.detection.identifiers) identifiers.set(name, { ...ident, node: node(ident.node) });
  return { ...rule, detection: { ...rule.detection, identifiers } };
}
