import type { ConditionNode, DetectionItem, DetectionNode, SigmaDocument, SigmaValue } from './model';

/** Every detection item of a node, depth-first in source order. */
export function itemsOf(node: DetectionNode, out: DetectionItem[] = []): DetectionItem[] {
  if (node.kind === 'item') out.push(node.item);
  else for (const c of node.children) itemsOf(c, out);
  return out;
}

/** Detection items of a rule or filter, with the identifier each belongs to. */
export function documentItems(doc: SigmaDocument): Array<{ identifier: string; item: DetectionItem }> {
  if (doc.kind === 'correlation') return [];
  const out: Array<{ identifier: string; item: DetectionItem }> = [];
  for (const [name, ident] of doc.detection.identifiers) for (const item of itemsOf(ident.node)) out.push({ identifier: name, item });
  return out;
}

/** Values with expansions flattened. */
export function flatValues(values: readonly SigmaValue[], out: SigmaValue[] = []): SigmaValue[] {
  for (const v of values) {
    if (v.kind === 'expansion') flatValues(v.values, out);
    else out.push(v);
  }
  return out;
}

export function conditionNodes(node: ConditionNode, out: ConditionNode[] = []): ConditionNode[] {
  out.push(node);
  if (node.kind === 'not') conditionNodes(node.operand, out);
  else if (node.kind === 'and' || node.kind === 'or') for (const o of node.operands) conditionNodes(o, out);
  return out;
}
