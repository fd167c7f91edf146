import type { ConditionNode, DetectionNode, DetectionItem, SigmaRule, SigmaValue, StringValue } from '../model';
import { ANY, endsWithAny, hasWildcards, isWildcard, normaliseParts, startsWithAny } from '../string';

/**
 * Necessary literals of a rule: a disjunction of anchors such that every event the rule matches
 * satisfies at least one of them (never the converse). An anchor is a test on the lower-cased text
 * of one field's value; `null` means no such disjunction is known and the rule is always evaluated.
 *
 * Why an anchor is necessary, value kind by value kind (the evaluator's own tests, evaluate/):
 *  - a case-insensitive string compares `value.toLowerCase()` with the lower-cased pattern, so every
 *    literal piece of the lower-cased pattern occurs in the lower-cased value, at the start when the
 *    pattern starts with text, at the end when it ends with text, and as the whole value when the
 *    pattern has no wildcard;
 *  - a `cased` string compares the value itself; its literal is used only when it is plain ASCII,
 *    because lower-casing maps every ASCII character to one ASCII character independently of its
 *    neighbours, so a piece of the value stays a piece of the lower-cased value;
 *  - a number matches the decimal text of the value digit for digit; only integers of at most 15
 *    digits are used, whose text is what `String(n)` writes for a JSON number as well;
 *  - a keyword is the same string test, wrapped in `*` as the evaluator wraps it, on every leaf of
 *    the event (or of `keywordFields`): its anchors are checked on those same leaves;
 *  - anything else (regex, cidr, null, exists, comparisons, field references, time parts,
 *    placeholders, booleans, `neq`, `not`) gives no anchor.
 * An AND needs only one of its parts' anchors (the cheapest is kept); an OR needs all of its parts'.
 */

export type AnchorKind = 'exact' | 'prefix' | 'suffix' | 'contains';

export interface Anchor {
  /** The Sigma field name (read with the same field mapping as the evaluator); null for keywords. */
  readonly field: string | null;
  readonly kind: AnchorKind;
  /** Lower-case text; never empty for prefix/suffix/contains. */
  readonly text: string;
}

export type Need = readonly Anchor[] | null;

const ASCII = /^[\x00-\x7f]*$/;
const SHORT_INTEGER = /^(?:0|-?[1-9]\d{0,14})$/;

function stringAnchor(field: string | null, v: StringValue): Anchor | null {
  const parts = v.parts;
  const literal = (text: string): string | null => (v.cased ? (ASCII.test(text) ? text.toLowerCase() : null) : text.toLowerCase());
  if (!hasWildcards(parts)) {
    // Part by part, as the evaluator lowers them (`Σ` lowers differently at the end of a word).
    const lowered = parts.map((p) => literal(p as string));
    return lowered.includes(null) ? null : { field, kind: 'exact', text: lowered.join('') };
  }
  const first = parts[0];
  const last = parts[parts.length - 1];
  // Prefix and suffix anchors are checked at one position only: prefer them to a bare substring.
  const candidates: Array<{ kind: AnchorKind; text: string }> = [];
  if (typeof first === 'string' && !startsWithAny(parts)) candidates.push({ kind: 'prefix', text: first });
  if (typeof last === 'string' && !endsWithAny(parts)) candidates.push({ kind: 'suffix', text: last });
  for (const p of parts) if (!isWildcard(p)) candidates.push({ kind: 'contains', text: p });
  let best: Anchor | null = null;
  for (const c of candidates) {
    const text = literal(c.text);
    if (text === null || text === '') continue;
    const anchor: Anchor = { field, kind: c.kind, text };
    if (best === null || anchorCost(anchor) < anchorCost(best)) best = anchor;
  }
  return best;
}

function valueAnchors(field: string | null, v: SigmaValue, out: Anchor[]): boolean {
  switch (v.kind) {
    case 'string': {
      const a = stringAnchor(field, v);
      if (a === null) return false;
      out.push(a);
      return true;
    }
    case 'number':
      if (!SHORT_INTEGER.test(v.text)) return false;
      out.push({ field, kind: 'exact', text: v.text });
      return true;
    case 'expansion':
      // windash/base64offset alternatives are OR-ed: every one needs an anchor.
      return v.values.every((x) => valueAnchors(field, x, out));
    default:
      return false;
  }
}

/** A keyword value as the evaluator searches it (compileKeywordItem): a substring unless written otherwise. */
function keywordValue(v: SigmaValue): SigmaValue {
  if (v.kind === 'string') {
    const parts = [...v.parts];
    if (!startsWithAny(parts)) parts.unshift(ANY);
    if (!endsWithAny(parts)) parts.push(ANY);
    return { ...v, parts: normaliseParts(parts) };
  }
  if (v.kind === 'expansion') return { kind: 'expansion', values: v.values.map(keywordValue) };
  if (v.kind === 'number') return { kind: 'string', parts: [ANY, v.text, ANY], cased: false, binary: false };
  return v;
}

function itemNeed(item: DetectionItem): Need {
  if (item.negated || item.values.length === 0) return null;
  const field = item.field;
  const values = field === null ? item.values.map(keywordValue) : item.values;
  if (item.linking === 'and') {
    // `|all`: every value must match, so any single value's anchors are necessary.
    return cheapest(values.map((v) => (valueAnchors(field, v, []) ? collect(field, v) : null)));
  }
  const out: Anchor[] = [];
  for (const v of values) if (!valueAnchors(field, v, out)) return null;
  return dedupe(out);
}

function collect(field: string | null, v: SigmaValue): Anchor[] {
  const out: Anchor[] = [];
  valueAnchors(field, v, out);
  return dedupe(out);
}

function dedupe(anchors: readonly Anchor[]): Anchor[] {
  const seen = new Set<string>();
  return anchors.filter((a) => {
    const key = `${a.field ?? '\u0001'}\u0000${a.kind}\u0000${a.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A guess at how often an anchor lets an event through, plus its checking cost: smaller is better. */
function anchorCost(a: Anchor): number {
  const short = a.text.length < 4 ? 6 : 0;
  if (a.kind === 'exact') return /^-?\d+$/.test(a.text) ? 6 : 1;
  if (a.kind === 'contains') return 3 + short;
  return 2 + short;
}

function cost(need: readonly Anchor[]): number {
  let c = 0;
  for (const a of need) c += anchorCost(a);
  return c;
}

function cheapest(needs: readonly Need[]): Need {
  let best: Need = null;
  for (const n of needs) if (n !== null && (best === null || cost(n) < cost(best))) best = n;
  return best;
}

function anyOf(needs: readonly Need[]): Need {
  const out: Anchor[] = [];
  for (const n of needs) {
    if (n === null) return null;
    out.push(...n);
  }
  return dedupe(out);
}

function nodeNeed(node: DetectionNode): Need {
  if (node.kind === 'item') return itemNeed(node.item);
  const needs = node.children.map(nodeNeed);
  return node.kind === 'and' ? cheapest(needs) : anyOf(needs);
}

function conditionNeed(node: ConditionNode, identifiers: ReadonlyMap<string, Need>): Need {
  switch (node.kind) {
    case 'ref':
      return identifiers.get(node.name) ?? null;
    case 'of': {
      const needs = node.targets.map((t) => identifiers.get(t) ?? null);
      // `all of` an empty list is true for every event, `any of` it false: neither gives anchors.
      if (needs.length === 0) return null;
      return node.quantifier === 'all' ? cheapest(needs) : anyOf(needs);
    }
    case 'not':
      return null;
    case 'and':
      return cheapest(node.operands.map((o) => conditionNeed(o, identifiers)));
    case 'or':
      return anyOf(node.operands.map((o) => conditionNeed(o, identifiers)));
  }
}

/** The rule's necessary anchors (see above), or null when it must always be evaluated. */
export function ruleNeed(rule: SigmaRule): Need {
  const identifiers = new Map<string, Need>();
  for (const [name, ident] of rule.detection.identifiers) identifiers.set(name, nodeNeed(ident.node));
  if (rule.detection.conditions.length === 0) return null;
  return anyOf(rule.detection.conditions.map((c) => conditionNeed(c.ast, identifiers)));
}
