import { parseCondition } from '../condition';
import type { SourcePosition } from '../errors';
import type { CorrelationCondition, CorrelationOp, CorrelationType, ParsedCondition, SigmaCorrelation } from '../model';
import type { YMap, YNode } from '../yamltree';
import { stringAttr, stringListAttr } from './attributes';
import { COMMON_KEYS, parseCommon } from './common-attributes';
import { conditionBase } from './detection';
import type { DocumentContext } from './document-context';
import { isMap, isNull, isScalar, mapEntries, toPlain, type Pair } from './yaml-nodes';

const CORRELATION_TYPES: readonly CorrelationType[] = [
  'event_count',
  'value_count',
  'temporal',
  'temporal_ordered',
  'value_sum',
  'value_avg',
  'value_percentile',
  'value_median',
];
const CORRELATION_OPS: readonly CorrelationOp[] = ['gt', 'gte', 'lt', 'lte', 'eq', 'neq'];
const TIMESPAN_RE = /^(\d+)([smhdwMy])$/;
const TIMESPAN_UNIT_MS: Record<string, number> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
  M: 30 * 86_400_000,
  y: 365 * 86_400_000,
};
const CORRELATION_KEYS = new Set([...COMMON_KEYS, 'correlation', 'generate']);

function parseCorrelationCondition(
  ctx: DocumentContext,
  node: YNode | undefined,
  type: CorrelationType,
  rules: string[],
  at: SourcePosition,
): { condition?: CorrelationCondition; expression?: ParsedCondition } {
  const temporal = type === 'temporal' || type === 'temporal_ordered';
  if (node === undefined || isNull(node)) {
    if (temporal) return { condition: { op: 'gte', count: rules.length } };
    ctx.error('correlation-invalid', `correlation type '${type}' needs a condition`, at);
    return {};
  }
  if (isScalar(node) && typeof node.value === 'string') {
    if (!temporal) {
      ctx.error('correlation-invalid', 'a condition expression is only allowed for temporal correlations', ctx.pos(node));
      return {};
    }
    const basePos = conditionBase(ctx, node);
    const ast = ctx.attempt(() => parseCondition(node.value as string, rules, { basePos, refNoun: 'rule', ...(ctx.source !== undefined ? { source: ctx.source } : {}) }));
    return ast ? { expression: { source: node.value as string, ast, pos: basePos } } : {};
  }
  if (!isMap(node)) {
    ctx.error('correlation-invalid', 'correlation condition must be a map like {gte: 10}', ctx.pos(node));
    return {};
  }
  const ops: Array<[CorrelationOp, number]> = [];
  let field: string | undefined;
  let percentile: number | undefined;
  for (const [key, p] of mapEntries(node)) {
    const v = isScalar(p.value) ? p.value.value : undefined;
    if ((CORRELATION_OPS as readonly string[]).includes(key)) {
      if (typeof v !== 'number' || !Number.isFinite(v)) ctx.error('correlation-invalid', `condition '${key}' needs a number`, ctx.pos(p));
      else ops.push([key as CorrelationOp, v]);
    } else if (key === 'field') {
      if (typeof v === 'string') field = v;
      else ctx.error('correlation-invalid', "condition 'field' must be a string", ctx.pos(p));
    } else if (key === 'percentile') {
      if (typeof v === 'number') percentile = v;
      else ctx.error('correlation-invalid', "condition 'percentile' must be a number", ctx.pos(p));
    } else {
      ctx.error('correlation-invalid', `unknown correlation condition key '${key}'`, ctx.pos(p));
    }
  }
  if (ops.length !== 1) {
    ctx.error('correlation-invalid', `correlation condition needs exactly one of ${CORRELATION_OPS.join(', ')} (pySigma)`, ctx.pos(node));
    return {};
  }
  const needsField = type !== 'event_count' && !temporal;
  if (needsField && field === undefined) ctx.error('correlation-invalid', `correlation type '${type}' needs condition.field`, ctx.pos(node));
  const [op, count] = ops[0]!;
  const condition: { op: CorrelationOp; count: number; field?: string; percentile?: number } = { op, count };
  if (field !== undefined) condition.field = field;
  if (percentile !== undefined) condition.percentile = percentile;
  return { condition };
}

export function parseCorrelationDoc(ctx: DocumentContext, root: YMap, entries: Map<string, Pair>): SigmaCorrelation {
  const common = parseCommon(ctx, root, entries, CORRELATION_KEYS);
  const pair = entries.get('correlation')!;
  const node = pair.value;
  const base = { ...common, kind: 'correlation' as const, aliases: {}, generate: false, rules: [], groupBy: [], timespan: '', timespanMs: 0 };
  if (!isMap(node)) {
    ctx.error('correlation-invalid', "'correlation' must be a map", ctx.pos(node));
    return { ...base, type: 'event_count', errors: ctx.errors };
  }
  const c = new Map(mapEntries(node));
  const typeText = stringAttr(ctx, c.get('type'), 'correlation.type');
  let type: CorrelationType = 'event_count';
  if (typeText === undefined) ctx.error('correlation-invalid', "correlation needs a 'type'", ctx.pos(node));
  else if (!(CORRELATION_TYPES as readonly string[]).includes(typeText)) {
    ctx.error('correlation-invalid', `correlation type must be one of ${CORRELATION_TYPES.join(', ')}`, ctx.pos(c.get('type')!.value));
  } else type = typeText as CorrelationType;
  const rules = stringListAttr(ctx, c.get('rules'), 'correlation.rules');
  const condValue = c.get('condition')?.value;
  if (rules.length === 0 && isScalar(condValue) && typeof condValue.value === 'string') {
    // pySigma: with a boolean expression the rule list may be omitted; every name in it is a rule.
    const words = condValue.value.match(/[A-Za-z0-9_-]+/g) ?? [];
    for (const w of words) if (!['and', 'or', 'not', 'of', 'them', 'all', 'any', '1'].includes(w) && !rules.includes(w)) rules.push(w);
  }
  const groupBy = stringListAttr(ctx, c.get('group-by'), 'correlation.group-by');
  const timespan = stringAttr(ctx, c.get('timespan'), 'correlation.timespan') ?? '';
  const tm = TIMESPAN_RE.exec(timespan);
  if (!c.has('timespan')) ctx.error('correlation-invalid', "correlation needs a 'timespan'", ctx.pos(node));
  else if (!tm) ctx.error('correlation-invalid', `timespan '${timespan}' must be <int><s|m|h|d|w|M|y>`, ctx.pos(c.get('timespan')!.value));
  const timespanMs = tm ? Number(tm[1]) * TIMESPAN_UNIT_MS[tm[2]!]! : 0;
  const { condition, expression } = parseCorrelationCondition(ctx, c.get('condition')?.value, type, rules, ctx.pos(node));
  if (rules.length === 0 && !expression) ctx.error('correlation-invalid', "correlation needs 'rules'", ctx.pos(node));
  const aliases: Record<string, Record<string, string>> = {};
  const aliasNode = c.get('aliases')?.value;
  if (aliasNode && !isNull(aliasNode)) {
    const plain = toPlain(aliasNode);
    if (!plain || typeof plain !== 'object' || Array.isArray(plain)) ctx.error('correlation-invalid', "'aliases' must be a map", ctx.pos(aliasNode));
    else {
      for (const [alias, mapping] of Object.entries(plain as Record<string, unknown>)) {
        if (!mapping || typeof mapping !== 'object' || Array.isArray(mapping) || !Object.values(mapping).every((v) => typeof v === 'string')) {
          ctx.error('correlation-invalid', `alias '${alias}' must map rule names to field names`, ctx.pos(aliasNode));
          continue;
        }
        aliases[alias] = mapping as Record<string, string>;
      }
    }
  }
  const generateNode = (entries.get('generate') ?? c.get('generate'))?.value;
  const generate = isScalar(generateNode) && generateNode.value === true;
  if (generateNode && !(isScalar(generateNode) && typeof generateNode.value === 'boolean'))
    ctx.error('correlation-invalid', "'generate' must be a boolean", ctx.pos(generateNode));
  const result: SigmaCorrelation = {
    ...base,
    type,
    rules,
    groupBy,
    timespan,
    timespanMs,
    aliases,
    generate,
    errors: ctx.errors,
    ...(condition ? { condition } : {}),
    ...(expression ? { conditionExpression: expression } : {}),
  };
  return result;
}
