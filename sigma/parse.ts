import { parseCondition } from './condition';
import { SigmaError, type SigmaErrorCode, type SourcePosition } from './errors';
import type {
  CorrelationCondition,
  CorrelationOp,
  CorrelationType,
  Detection,
  DetectionItem,
  DetectionNode,
  Logsource,
  ParsedCondition,
  RawValue,
  RelatedRule,
  SearchIdentifier,
  SigmaCollection,
  SigmaCorrelation,
  SigmaDocument,
  SigmaFilter,
  SigmaLevel,
  SigmaRule,
  SigmaStatus,
} from './model';
import { applyModifiers } from './modifiers';
import { isQuoted, parseYaml, toJS, type YMap, type YNode, type YPair, type YScalar } from './yamltree';

export interface ParseOptions {
  /** File name used in error messages. */
  readonly source?: string;
}

const STATUSES: readonly SigmaStatus[] = ['stable', 'test', 'experimental', 'deprecated', 'unsupported'];
const LEVELS: readonly SigmaLevel[] = ['informational', 'low', 'medium', 'high', 'critical'];
const RELATED_TYPES = ['derived', 'obsolete', 'merged', 'renamed', 'similar', 'correlation'];
const CORRELATION_TYPES: readonly CorrelationType[] = [
  'event_count', 'value_count', 'temporal', 'temporal_ordered', 'value_sum', 'value_avg', 'value_percentile', 'value_median',
];
const CORRELATION_OPS: readonly CorrelationOp[] = ['gt', 'gte', 'lt', 'lte', 'eq', 'neq'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IDENTIFIER_RE = /^[A-Za-z0-9_-]+$/;
const TIMESPAN_RE = /^(\d+)([smhdwMy])$/;
const TIMESPAN_UNIT_MS: Record<string, number> = {
  s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, M: 30 * 86_400_000, y: 365 * 86_400_000,
};
const COMMON_KEYS = new Set([
  'title', 'id', 'name', 'status', 'description', 'author', 'license', 'references', 'date', 'modified', 'tags', 'level',
  'falsepositives', 'related', 'taxonomy',
]);
const RULE_KEYS = new Set([...COMMON_KEYS, 'logsource', 'detection', 'fields', 'scope']);
const CORRELATION_KEYS = new Set([...COMMON_KEYS, 'correlation', 'generate']);
const FILTER_KEYS = new Set([...COMMON_KEYS, 'logsource', 'filter']);

/** Collects errors instead of stopping at the first, so lint can report everything at once. */
class DocumentContext {
  readonly errors: SigmaError[] = [];
  constructor(
    readonly position: (offset: number) => SourcePosition,
    readonly source: string | undefined,
    /** The YAML text, to read a scalar as written where the resolved value loses information. */
    readonly text: string = '',
  ) {}

  pos(node: YNode | YPair): SourcePosition {
    return this.position('keyOffset' in node ? node.keyOffset : node.offset);
  }

  error(code: SigmaErrorCode, message: string, at: SourcePosition): SigmaError {
    const e = new SigmaError(code, message, at, this.source);
    this.errors.push(e);
    return e;
  }

  attempt<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (e) {
      if (e instanceof SigmaError) {
        this.errors.push(e);
        return undefined;
      }
      throw e;
    }
  }
}

type Pair = YPair;

const isMap = (n: YNode | null | undefined): n is YMap => n?.kind === 'map';
const isSeq = (n: YNode | null | undefined): n is Extract<YNode, { kind: 'seq' }> => n?.kind === 'seq';
const isScalar = (n: YNode | null | undefined): n is YScalar => n?.kind === 'scalar';
const isNull = (n: YNode | null | undefined): boolean => n === null || n === undefined || (n.kind === 'scalar' && n.value === null);

function mapEntries(map: YMap): Array<[string, Pair]> {
  return map.pairs.map((pair) => [pair.key, pair]);
}

const toPlain = (node: YNode | null | undefined): unknown => (node ? toJS(node) : null);

/** Maps a plain string attribute; reports and skips wrong types. */
function stringAttr(ctx: DocumentContext, pair: Pair | undefined, name: string): string | undefined {
  if (!pair) return undefined;
  const node = pair.value;
  if (isScalar(node) && node.value !== null) return String(node.value);
  ctx.error('attribute-invalid', `'${name}' must be a string`, ctx.pos(node));
  return undefined;
}

function stringListAttr(ctx: DocumentContext, pair: Pair | undefined, name: string): string[] {
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

/** pySigma accepts YYYY-MM-DD and YYYY/M/D; both are normalised to ISO form. */
export function normaliseDate(text: string): string | undefined {
  const m = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/.exec(text.trim());
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined;
  return `${m[1]}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

interface CommonFields {
  title: string;
  id?: string;
  name?: string;
  status?: SigmaStatus;
  description?: string;
  author?: string;
  license?: string;
  references: string[];
  date?: string;
  modified?: string;
  tags: string[];
  level?: SigmaLevel;
  falsepositives: string[];
  related: RelatedRule[];
  taxonomy: string;
  custom: Record<string, unknown>;
  positions: Record<string, SourcePosition>;
  pos: SourcePosition;
  source?: string;
}

function parseCommon(ctx: DocumentContext, root: YMap, entries: Map<string, Pair>, knownKeys: ReadonlySet<string>): CommonFields {
  const positions: Record<string, SourcePosition> = {};
  const custom: Record<string, unknown> = {};
  for (const [key, pair] of entries) {
    positions[key] = ctx.pos(pair);
    if (!knownKeys.has(key)) custom[key] = toPlain(pair.value);
  }
  const rootPos = ctx.pos(root);
  const title = stringAttr(ctx, entries.get('title'), 'title');
  if (title === undefined && !entries.has('title')) ctx.error('attribute-missing', "required attribute 'title' is missing", rootPos);
  if (title !== undefined && title.length > 256) ctx.error('attribute-invalid', "'title' is longer than 256 characters", positions.title!);

  const id = stringAttr(ctx, entries.get('id'), 'id');
  if (id !== undefined && !UUID_RE.test(id)) ctx.error('attribute-invalid', `'id' is not a UUID: ${id}`, positions.id!);

  const name = stringAttr(ctx, entries.get('name'), 'name');
  if (name !== undefined && name.trim() === '') ctx.error('attribute-invalid', "'name' must not be empty", positions.name!);

  let status: SigmaStatus | undefined;
  const statusText = stringAttr(ctx, entries.get('status'), 'status');
  if (statusText !== undefined) {
    const s = statusText.toLowerCase() as SigmaStatus;
    if (STATUSES.includes(s)) status = s;
    else ctx.error('attribute-invalid', `'status' must be one of ${STATUSES.join(', ')}`, positions.status!);
  }
  let level: SigmaLevel | undefined;
  const levelText = stringAttr(ctx, entries.get('level'), 'level');
  if (levelText !== undefined) {
    const l = levelText.toLowerCase() as SigmaLevel;
    if (LEVELS.includes(l)) level = l;
    else ctx.error('attribute-invalid', `'level' must be one of ${LEVELS.join(', ')}`, positions.level!);
  }
  const description = stringAttr(ctx, entries.get('description'), 'description');
  if (description !== undefined && description.length > 65_535) {
    ctx.error('attribute-invalid', "'description' is longer than 65535 characters", positions.description!);
  }
  const dates: { date?: string; modified?: string } = {};
  for (const key of ['date', 'modified'] as const) {
    const text = stringAttr(ctx, entries.get(key), key);
    if (text === undefined) continue;
    const iso = normaliseDate(text);
    if (iso) dates[key] = iso;
    else ctx.error('attribute-invalid', `'${key}' must be a date (YYYY-MM-DD): ${text}`, positions[key]!);
  }
  const tags = stringListAttr(ctx, entries.get('tags'), 'tags');
  const tagsNode = entries.get('tags')?.value;
  if (isSeq(tagsNode)) tagsNode.items.forEach((item, i) => (positions[`tags[${i}]`] = ctx.pos(item)));
  tags.forEach((tag, i) => {
    if (!tag.includes('.')) {
      const item = isSeq(tagsNode) ? tagsNode.items[i] : undefined;
      const at = item ? ctx.pos(item) : positions.tags!;
      ctx.error('attribute-invalid', `tag '${tag}' must be namespace.name`, at);
    }
  });
  const related: RelatedRule[] = [];
  const relatedNode = entries.get('related')?.value;
  if (!isNull(relatedNode) && relatedNode) {
    if (!isSeq(relatedNode)) ctx.error('attribute-invalid', "'related' must be a list of {id, type}", ctx.pos(relatedNode));
    else {
      for (const item of relatedNode.items) {
        const plain = toPlain(item) as { id?: unknown; type?: unknown } | null;
        if (!plain || typeof plain !== 'object' || typeof plain.id !== 'string' || typeof plain.type !== 'string') {
          ctx.error('attribute-invalid', "'related' entries need string 'id' and 'type'", ctx.pos(item));
          continue;
        }
        if (!UUID_RE.test(plain.id)) ctx.error('attribute-invalid', `related id is not a UUID: ${plain.id}`, ctx.pos(item));
        if (!RELATED_TYPES.includes(plain.type)) {
          ctx.error('attribute-invalid', `related type '${plain.type}' must be one of ${RELATED_TYPES.join(', ')}`, ctx.pos(item));
        }
        related.push({ id: plain.id, type: plain.type });
      }
    }
  }
  const common: CommonFields = {
    title: title ?? '',
    references: stringListAttr(ctx, entries.get('references'), 'references'),
    tags,
    falsepositives: stringListAttr(ctx, entries.get('falsepositives'), 'falsepositives'),
    related,
    taxonomy: stringAttr(ctx, entries.get('taxonomy'), 'taxonomy') ?? 'sigma',
    custom,
    positions,
    pos: rootPos,
  };
  if (ctx.source !== undefined) common.source = ctx.source;
  const optional = { id, name, status, description, level, license: stringAttr(ctx, entries.get('license'), 'license'), ...dates };
  const author = stringAttr(ctx, entries.get('author'), 'author');
  for (const [k, v] of Object.entries({ ...optional, author })) {
    if (v !== undefined) (common as unknown as Record<string, unknown>)[k] = v;
  }
  return common;
}

const LOGSOURCE_VALUE_RE = /^[a-z0-9_.-]+$/;

function parseLogsource(ctx: DocumentContext, pair: Pair | undefined, required: boolean, rootPos: SourcePosition): Logsource | undefined {
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

/** A plain integer written with leading zeros, e.g. `00000429` (a keyboard layout id). */
const LEADING_ZERO_INT = /^[-+]?0[0-9]+(?=[\s,\]}#]|$)/;

function scalarRaw(ctx: DocumentContext, node: YScalar): RawValue {
  // YAML 1.2 reads `00000429` as the number 429, so `contains: 00000429` would search for "429".
  // pySigma's YAML 1.1 loader keeps such a value as the string it is, which is what rule authors
  // mean (registry data, locale ids); the text as written is used instead of the number.
  if (node.style === 'plain' && typeof node.value === 'number') {
    const written = LEADING_ZERO_INT.exec(ctx.text.slice(node.offset, node.offset + 64));
    if (written) return { value: written[0], quoted: false, pos: ctx.pos(node) };
  }
  return { value: node.value, quoted: isQuoted(node), pos: ctx.pos(node) };
}

function parseValueList(ctx: DocumentContext, node: YNode, what: string): RawValue[] {
  if (isScalar(node)) return [scalarRaw(ctx, node)];
  if (isSeq(node)) {
    const out: RawValue[] = [];
    for (const item of node.items) {
      if (isScalar(item)) {
        const raw = scalarRaw(ctx, item);
        if (raw.value === null && node.items.length > 1) {
          throw new SigmaError('detection-value-invalid', `${what}: null inside a value list; use a separate identifier`, raw.pos, ctx.source);
        }
        out.push(raw);
      } else {
        throw new SigmaError('detection-value-invalid', `${what}: values in a list must be scalars`, ctx.pos(item), ctx.source);
      }
    }
    // An empty list means the same as null (spec §2).
    if (out.length === 0) out.push({ value: null, quoted: false, pos: ctx.pos(node) });
    return out;
  }
  throw new SigmaError('detection-value-invalid', `${what}: a value must be a scalar or a list of scalars`, ctx.pos(node), ctx.source);
}

function buildItem(ctx: DocumentContext, key: string | null, raw: RawValue[], pos: SourcePosition): DetectionItem {
  let field: string | null = null;
  let modifiers: string[] = [];
  if (key !== null) {
    const [f, ...mods] = key.split('|');
    field = f === '' || f === undefined ? null : f;
    modifiers = mods;
    if (mods.some((m) => m === '')) throw new SigmaError('modifier-invalid', `empty modifier in '${key}'`, pos, ctx.source);
  }
  const modified = applyModifiers(modifiers, raw.map((r) => r.value), field, pos, ctx.source);
  if (field === null && modified.values.some((v) => v.kind === 'null')) {
    throw new SigmaError('detection-value-invalid', 'a keyword search cannot be null', pos, ctx.source);
  }
  return { field, modifiers, linking: modified.linking, negated: modified.negated, values: modified.values, raw, pos };
}

function parseSearchMap(ctx: DocumentContext, node: YMap, name: string): DetectionNode {
  const children: DetectionNode[] = [];
  for (const [key, pair] of mapEntries(node)) {
    const at = ctx.pos(pair);
    const item = ctx.attempt(() => buildItem(ctx, key, parseValueList(ctx, pair.value, `${name}.${key}`), at));
    if (item) children.push({ kind: 'item', item });
  }
  return { kind: 'and', children, pos: ctx.pos(node) };
}

function parseSearch(ctx: DocumentContext, node: YNode, name: string, at: SourcePosition): DetectionNode | undefined {
  if (isMap(node)) return parseSearchMap(ctx, node, name);
  if (isSeq(node)) {
    if (node.items.every((i) => isScalar(i))) {
      const item = ctx.attempt(() => buildItem(ctx, null, parseValueList(ctx, node, name), at));
      return item ? { kind: 'item', item } : undefined;
    }
    const children: DetectionNode[] = [];
    for (const child of node.items) {
      const c = parseSearch(ctx, child, name, ctx.pos(child));
      if (c) children.push(c);
    }
    return { kind: 'or', children, pos: ctx.pos(node) };
  }
  if (isScalar(node) && node.value !== null) {
    const item = ctx.attempt(() => buildItem(ctx, null, [scalarRaw(ctx, node)], at));
    return item ? { kind: 'item', item } : undefined;
  }
  ctx.error('detection-invalid', `search identifier '${name}' must be a map, a list or a keyword`, isNull(node) ? at : ctx.pos(node));
  return undefined;
}

/** Condition column: a quoted scalar's text starts one column after the quote. */
function conditionBase(ctx: DocumentContext, node: YScalar): SourcePosition {
  const p = ctx.pos(node);
  return { line: p.line, column: p.column + (isQuoted(node) ? 1 : 0) };
}

function parseConditions(ctx: DocumentContext, pair: Pair | undefined, names: string[], detPos: SourcePosition, refNoun: string): ParsedCondition[] {
  if (!pair) {
    ctx.error('condition-missing', "detection has no 'condition'", detPos);
    return [];
  }
  const node = pair.value;
  const scalars: YScalar[] = [];
  if (isScalar(node) && typeof node.value === 'string') scalars.push(node);
  else if (isSeq(node) && node.items.length > 0 && node.items.every((i) => isScalar(i) && typeof i.value === 'string')) {
    scalars.push(...(node.items as YScalar[]));
  } else {
    ctx.error('condition-syntax', "'condition' must be a string or a list of strings", ctx.pos(node));
    return [];
  }
  const out: ParsedCondition[] = [];
  for (const s of scalars) {
    const text = s.value as string;
    const basePos = conditionBase(ctx, s);
    const ast = ctx.attempt(() => parseCondition(text, names, { basePos, refNoun, ...(ctx.source !== undefined ? { source: ctx.source } : {}) }));
    if (ast) out.push({ source: text, ast, pos: basePos });
  }
  return out;
}

function parseDetection(ctx: DocumentContext, pair: Pair | undefined, rootPos: SourcePosition, exclude: ReadonlySet<string>): Detection {
  const empty: Detection = { identifiers: new Map(), conditions: [], pos: rootPos };
  if (!pair) {
    ctx.error('attribute-missing', "required attribute 'detection' is missing", rootPos);
    return empty;
  }
  const node = pair.value;
  if (!isMap(node)) {
    ctx.error('detection-invalid', "'detection' must be a map", ctx.pos(node));
    return empty;
  }
  const detPos = ctx.pos(node);
  const identifiers = new Map<string, SearchIdentifier>();
  let conditionPair: Pair | undefined;
  for (const [key, p] of mapEntries(node)) {
    if (key === 'condition') {
      conditionPair = p;
      continue;
    }
    if (exclude.has(key)) continue;
    const at = ctx.pos(p);
    if (!IDENTIFIER_RE.test(key)) ctx.error('identifier-invalid', `search identifier '${key}' may only contain [A-Za-z0-9_-]`, at);
    const searchNode = parseSearch(ctx, p.value, key, at);
    if (searchNode) identifiers.set(key, { name: key, node: searchNode, pos: at });
  }
  if (identifiers.size === 0) ctx.error('detection-invalid', 'detection defines no search identifier', detPos);
  // Names of identifiers that failed to build still count as defined so one bad value does not
  // cascade into "undefined identifier" errors.
  const names = mapEntries(node).map(([k]) => k).filter((k) => k !== 'condition' && !exclude.has(k));
  const conditions = parseConditions(ctx, conditionPair, names, detPos, 'identifier');
  return { identifiers, conditions, pos: detPos };
}

function parseRuleDoc(ctx: DocumentContext, root: YMap, entries: Map<string, Pair>): SigmaRule {
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

function parseCorrelationDoc(ctx: DocumentContext, root: YMap, entries: Map<string, Pair>): SigmaCorrelation {
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
  if (generateNode && !(isScalar(generateNode) && typeof generateNode.value === 'boolean')) ctx.error('correlation-invalid', "'generate' must be a boolean", ctx.pos(generateNode));
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

function parseFilterDoc(ctx: DocumentContext, root: YMap, entries: Map<string, Pair>): SigmaFilter {
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

/**
 * Parses a YAML text with one or more `---`-separated Sigma documents (rules, correlations, filters).
 * Never throws for content problems: each document lists its own errors and the collection gathers
 * them all. Documents whose YAML itself is broken are dropped.
 */
export function parseSigma(text: string, options: ParseOptions = {}): SigmaCollection {
  try {
    return parseSigmaDocuments(text, options);
  } catch (err) {
    // Hostile nesting (thousands of levels of YAML blocks or brackets) exhausts the stack in the
    // YAML layer; it is reported as the rule's error rather than crashing the caller.
    if (!(err instanceof RangeError)) throw err;
    return { documents: [], errors: [new SigmaError('yaml-too-deep', 'the document nests too deeply to be a Sigma rule', { line: 1, column: 1 }, options.source)] };
  }
}

function parseSigmaDocuments(text: string, options: ParseOptions): SigmaCollection {
  const stream = parseYaml(text);
  const documents: SigmaDocument[] = [];
  const errors: SigmaError[] = [];
  for (const doc of stream.documents) {
    const ctx = new DocumentContext(stream.position, options.source, text);
    if (doc.problems.length > 0) {
      for (const p of doc.problems) errors.push(new SigmaError(p.code, p.message, stream.position(p.offset), options.source));
      continue;
    }
    const root = doc.root;
    if (root === null || isNull(root)) continue;
    if (!isMap(root)) {
      errors.push(new SigmaError('document-not-map', 'a Sigma document must be a YAML map', ctx.pos(root), options.source));
      continue;
    }
    const entries = new Map(mapEntries(root));
    let document: SigmaDocument;
    if (entries.has('correlation')) document = parseCorrelationDoc(ctx, root, entries);
    else if (entries.has('filter')) document = parseFilterDoc(ctx, root, entries);
    else document = parseRuleDoc(ctx, root, entries);
    documents.push(document);
    errors.push(...document.errors);
  }
  return { documents, errors };
}

/** Strict convenience: exactly the rules of a text, throwing the first error of any document. */
export function parseRule(text: string, options: ParseOptions = {}): SigmaRule {
  const collection = parseSigma(text, options);
  const first = collection.errors[0];
  if (first) throw first;
  const rule = collection.documents.find((d): d is SigmaRule => d.kind === 'rule');
  if (!rule) throw new SigmaError('document-kind-unknown', 'the text holds no Sigma rule', { line: 1, column: 1 }, options.source);
  return rule;
}
