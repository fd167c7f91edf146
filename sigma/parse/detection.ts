import { parseCondition } from '../condition';
import { SigmaError, type SourcePosition } from '../errors';
import type { Detection, DetectionItem, DetectionNode, ParsedCondition, RawValue, SearchIdentifier } from '../model';
import { applyModifiers } from '../modifiers';
import { writtenNumberText } from '../number-text';
import { isQuoted, type YMap, type YNode, type YScalar } from '../yamltree';
import type { DocumentContext } from './document-context';
import { isMap, isNull, isScalar, isSeq, mapEntries, type Pair } from './yaml-nodes';

/** The `detection` block of rules and filters: search identifiers, their items, and conditions. */

const IDENTIFIER_RE = /^[A-Za-z0-9_-]+$/;
/**
 * A SigmaHQ rule names an identifier `select_tree_execution|endswith` (pySigma takes any name): a
 * `|` is accepted, as part of the name, and lint warns (identifier_with_pipe). Such an identifier
 * can only be reached through `x of` patterns, since `|` in a condition is the legacy pipe.
 */
const LENIENT_IDENTIFIER_RE = /^[A-Za-z0-9_|-]+$/;

/** A plain integer written with leading zeros, e.g. `00000429` (a keyboard layout id). */
const LEADING_ZERO_INT = /^[-+]?0[0-9]+(?=[\s,\]}#]|$)/;

function scalarRaw(ctx: DocumentContext, node: YScalar): RawValue {
  // YAML 1.2 reads `00000429` as the number 429, so `contains: 00000429` would search for "429".
  // pySigma's YAML 1.1 loader keeps such a value as the string it is, which is what rule authors
  // mean (registry data, locale ids); the text as written is used instead of the number.
  if (node.style === 'plain' && typeof node.value === 'number') {
    const source = ctx.text.slice(node.offset, node.offset + 400);
    const written = LEADING_ZERO_INT.exec(source);
    if (written) return { value: written[0], quoted: false, pos: ctx.pos(node) };
    return { value: node.value, numberText: writtenNumberText(source, node.value), quoted: false, pos: ctx.pos(node) };
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
  const modified = applyModifiers(
    modifiers,
    raw.map((r) => r.value),
    field,
    pos,
    ctx.source,
  );
  if (field === null && modified.values.some((v) => v.kind === 'null')) {
    throw new SigmaError('detection-value-invalid', 'a keyword search cannot be null', pos, ctx.source);
  }
  // A number beyond 2^53 was rounded by the YAML reader; its text as written is what it matches.
  const values = modified.values.map((v, i) => {
    const text = raw[i]?.numberText;
    return v.kind === 'number' && text !== undefined && text !== v.text ? { ...v, text } : v;
  });
  return { field, modifiers, linking: modified.linking, negated: modified.negated, values, raw, pos };
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
export function conditionBase(ctx: DocumentContext, node: YScalar): SourcePosition {
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

export function parseDetection(ctx: DocumentContext, pair: Pair | undefined, rootPos: SourcePosition, exclude: ReadonlySet<string>): Detection {
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
    if (!IDENTIFIER_RE.test(key) && !LENIENT_IDENTIFIER_RE.test(key))
      ctx.error('identifier-invalid', `search identifier '${key}' may only contain [A-Za-z0-9_-] (and, with a lint warning, |)`, at);
    const searchNode = parseSearch(ctx, p.value, key, at);
    if (searchNode) identifiers.set(key, { name: key, node: searchNode, pos: at });
  }
  if (identifiers.size === 0) ctx.error('detection-invalid', 'detection defines no search identifier', detPos);
  // Names of identifiers that failed to build still count as defined so one bad value does not
  // cascade into "undefined identifier" errors.
  const names = mapEntries(node)
    .map(([k]) => k)
    .filter((k) => k !== 'condition' && !exclude.has(k));
  const conditions = parseConditions(ctx, conditionPair, names, detPos, 'identifier');
  return { identifiers, conditions, pos: detPos };
}
