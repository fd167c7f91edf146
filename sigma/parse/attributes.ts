import type { DocumentContext } from './document-context';
import { isNull, isScalar, isSeq, type Pair } from './yaml-nodes';

/** Maps a plain string attribute; reports and skips wrong types. */
export function stringAttr(ctx: DocumentContext, pair: Pair | undefined, name: string): string | undefined {
  if (!pair) return undefined;
  const node = pair.value;
  if (isScalar(node) && node.value !== null) return String(node.value);
  ctx.error('attribute-invalid', `'${name}' must be a string`, ctx.pos(node));
  return undefined;
}

export function stringListAttr(ctx: DocumentContext, pair: Pair | undefined, name: string): string[] {
  if (!pair) return [];
  const node = pair.value;
  if (isScalar(node) && node.value !== null) return [String(node.value)];
  if (isSeq(node)) {
    const out: string[] = [];
    for (const item of node.items) {
      if (isScalar(item) && item.value !== null) out.push(String(item.value));
      else ctx.error('attribute-invalid', `'${name}' entries must be strings`, ctx.pos(item));
    }
    return out;
  }
  if (isNull(node)) return [];
  ctx.error('attribute-invalid', `'${name}' must be a list of strings`, ctx.pos(node));
  return [];
}
