import type { SourcePosition } from '../errors';
import type { Logsource } from '../model';
import { stringAttr } from './attributes';
import type { DocumentContext } from './document-context';
import { isMap, mapEntries, toPlain, type Pair } from './yaml-nodes';

const LOGSOURCE_VALUE_RE = /^[a-z0-9_.-]+$/;

export function parseLogsource(ctx: DocumentContext, pair: Pair | undefined, required: boolean, rootPos: SourcePosition): Logsource | undefined {
  if (!pair) {
    if (required) ctx.error('attribute-missing', "required attribute 'logsource' is missing", rootPos);
    return undefined;
  }
  const node = pair.value;
  if (!isMap(node)) {
    ctx.error('logsource-invalid', "'logsource' must be a map", ctx.pos(node));
    return undefined;
  }
  const ls: { category?: string; product?: string; service?: string; definition?: string; custom: Record<string, unknown>; pos: SourcePosition } = {
    custom: {},
    pos: ctx.pos(node),
  };
  for (const [key, p] of mapEntries(node)) {
    if (key === 'category' || key === 'product' || key === 'service' || key === 'definition') {
      const v = stringAttr(ctx, p, `logsource.${key}`);
      if (v === undefined) continue;
      if (key !== 'definition' && !LOGSOURCE_VALUE_RE.test(v)) {
        ctx.error('logsource-invalid', `logsource ${key} '${v}' must be lowercase [a-z0-9_.-]`, ctx.pos(p.value));
      }
      ls[key] = v;
    } else {
      ls.custom[key] = toPlain(p.value);
    }
  }
  if (ls.category === undefined && ls.product === undefined && ls.service === undefined) {
    ctx.error('logsource-invalid', 'logsource needs at least one of category, product, service', ls.pos);
  }
  return ls;
}
