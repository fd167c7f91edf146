import type { SigmaRule } from '../model';
import type { YMap } from '../yamltree';
import { stringListAttr } from './attributes';
import { COMMON_KEYS, parseCommon } from './common-attributes';
import { parseDetection } from './detection';
import type { DocumentContext } from './document-context';
import { parseLogsource } from './logsource';
import type { Pair } from './yaml-nodes';

const RULE_KEYS = new Set([...COMMON_KEYS, 'logsource', 'detection', 'fields', 'scope']);

export function parseRuleDoc(ctx: DocumentContext, root: YMap, entries: Map<string, Pair>): SigmaRule {
  const common = parseCommon(ctx, root, entries, RULE_KEYS);
  const logsource = parseLogsource(ctx, entries.get('logsource'), true, common.pos) ?? { custom: {}, pos: common.pos };
  const detection = parseDetection(ctx, entries.get('detection'), common.pos, new Set());
  return {
    ...common,
    kind: 'rule',
    logsource,
    detection,
    fields: stringListAttr(ctx, entries.get('fields'), 'fields'),
    scope: stringListAttr(ctx, entries.get('scope'), 'scope'),
    errors: ctx.errors,
  };
}
