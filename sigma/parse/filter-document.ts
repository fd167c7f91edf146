import type { SigmaFilter } from '../model';
import type { YMap } from '../yamltree';
import { stringListAttr } from './attributes';
import { COMMON_KEYS, parseCommon } from './common-attributes';
import { parseDetection } from './detection';
import type { DocumentContext } from './document-context';
import { parseLogsource } from './logsource';
import { isMap, mapEntries, type Pair } from './yaml-nodes';

const FILTER_KEYS = new Set([...COMMON_KEYS, 'logsource', 'filter']);

export function parseFilterDoc(ctx: DocumentContext, root: YMap, entries: Map<string, Pair>): SigmaFilter {
  const common = parseCommon(ctx, root, entries, FILTER_KEYS);
  const logsource = parseLogsource(ctx, entries.get('logsource'), false, common.pos);
  const pair = entries.get('filter')!;
  const node = pair.value;
  let rules: string[] = [];
  if (isMap(node)) {
    rules = stringListAttr(ctx, mapEntries(node).find(([k]) => k === 'rules')?.[1], 'filter.rules');
  } else {
    ctx.error('filter-invalid', "'filter' must be a map", ctx.pos(node));
  }
  const detection = parseDetection(ctx, isMap(node) ? pair : undefined, common.pos, new Set(['rules']));
  return { ...common, kind: 'filter', rules, detection, errors: ctx.errors, ...(logsource ? { logsource } : {}) };
}
