import type { ConditionNode, DetectionItem, DetectionNode, SigmaRule, SigmaValue, StringValue } from '../../sigma/model';
import { resolvePlaceholders } from '../../sigma/evaluate';
import { toJsRegExp, extractInlineFlags } from '../../sigma/regex';
import { isWildcard, type StringPart } from '../../sigma/string';

/**
 * Event generator for the differential conformance test: derives events from a rule's own
 * selections, without consulting any matcher, so that neither engine decides what it is tested on.
 *
 * The condition is solved symbolically: `plans(node, want)` returns alternative sets of constraints
 * ("this item must hold / must fail") that make `node` evaluate to `want`. Matching events come from
 * plans for `want = true` (one per OR branch, so every selection of `1 of selection_*` is
 * exercised); non-matching events come from plans for `want = false`, which for `a and b` keep all
 * operands but one satisfied and make that one fail — a value is perturbed so that a selection
 * fails, or a filter is made to match. Each matching event also gets a case-swapped twin, because
 * Sigma matching is case-insensitive and that is where SQL backends most often diverge.
 *
 * The labels (`intent`) are what the generator aimed for, not a verdict: a witness can fail to
 * satisfy contradictory constraints. The test compares the engines' verdicts with each other.
 */

export type EventValue = string | number | boolean;
export type GeneratedEvent = Readonly<Record<string, EventValue>>;

export interface LabelledEvent {
  readonly event: GeneratedEvent;
  readonly intent: 'match' | 'case-variant' | 'no-match' | 'empty';
}

export interface GeneratorOptions {
  readonly placeholders?: Readonly<Record<string, readonly string[]>>;
  /** Alternatives kept per sub-expression; bounds the number of events per rule. */
  readonly maxPlans?: number;
}

/** One constraint on one detection item: it must hold (`want`) or fail, via value `pick` for ORs. */
interface Constraint {
  readonly item: DetectionItem;
  readonly want: boolean;
  /** For a satisfied OR-linked item, which value to satisfy (rotates over plans for coverage). */
  readonly pick: number;
}
type Plan = readonly Constraint[];

const DEFAULT_MAX_PLANS = 6;

/** Merges alternatives element-wise (i-th with i-th, wrapping), not as a full product: coverage, bounded. */
function zipMerge(lists: readonly (readonly Plan[])[], max: number): Plan[] {
  if (lists.some((l) => l.length === 0)) return [];
  const n = Math.min(max, Math.max(...lists.map((l) => l.length)));
  return Array.from({ length: n }, (_, i) => lists.flatMap((l) => l[i % l.length]!));
}

function itemPlans(item: DetectionItem, want: boolean, max: number): Plan[] {
  // `neq` negates the whole item, so satisfying it means failing the un-negated test.
  const inner = item.negated ? !want : want;
  const values = item.values.length;
  if (inner && item.linking === 'or') return Array.from({ length: Math.min(values, max) }, (_, pick) => [{ item, want, pick }]);
  if (!inner && item.linking === 'and') return Array.from({ length: Math.min(values, max) }, (_, pick) => [{ item, want, pick }]);
  return [[{ item, want, pick: 0 }]];
}

function nodePlans(node: DetectionNode, want: boolean, max: number): Plan[] {
  if (node.kind === 'item') return itemPlans(node.item, want, max);
  const children = node.children.map((c) => (w: boolean) => nodePlans(c, w, max));
  return combine(node.kind, children, want, max);
}

/** AND/OR over lazily planned operands: the shared core of detection nodes and conditions. */
function combine(kind: 'and' | 'or', operands: readonly ((want: boolean) => Plan[])[], want: boolean, max: number): Plan[] {
  const conjunctive = (kind === 'and') === want;
  if (conjunctive) {
    // and→true / or→false: every operand must take the wanted value.
    return zipMerge(
      operands.map((o) => o(want)),
      max,
    );
  }
  if (kind === 'or') {
    // or→true: any one branch; each branch is an alternative.
    return operands.flatMap((o) => o(true)).slice(0, max);
  }
  // and→false: make one operand fail and keep the others satisfied, so the event is a near miss.
  const satisfied = operands.map((o) => o(true));
  const out: Plan[] = [];
  operands.forEach((o, k) => {
    for (const failing of o(false).slice(0, 2)) {
      const others = satisfied.filter((_, j) => j !== k).map((p) => p[0] ?? []);
      out.push([...failing, ...others.flat()]);
    }
  });
  return out.slice(0, max);
}

function conditionPlans(node: ConditionNode, want: boolean, rule: SigmaRule, max: number): Plan[] {
  switch (node.kind) {
    case 'ref':
      return nodePlans(rule.detection.identifiers.get(node.name)!.node, want, max);
    case 'not':
      return conditionPlans(node.operand, !want, rule, max);
    case 'of': {
      const refs = node.targets.map((t) => (w: boolean) => nodePlans(rule.detection.identifiers.get(t)!.node, w, max));
      return combine(node.quantifier === 'all' ? 'and' : 'or', refs, want, max);
    }
    case 'and':
    case 'or':
      return combine(
        node.kind,
        node.operands.map((o) => (w: boolean) => conditionPlans(o, w, rule, max)),
        want,
        max,
      );
  }
}

// --- witnesses -------------------------------------------------------------------------------

/** The simplest text a Sigma wildcard string matches: `*` → nothing, `?` → one letter. */
function stringWitness(parts: readonly StringPart[], fill = ''): string {
  let filled = false;
  return parts
    .map((p) => {
      if (!isWildcard(p)) return p;
      if (p.wildcard === '?') return 'k';
      // The first inner `*` carries the other constraints on the same field (see fieldValue).
      if (!filled && fill) {
        filled = true;
        return fill;
      }
      return '';
    })
    .join('');
}

type Shape = 'equals' | 'contains' | 'startswith' | 'endswith' | 'pattern';
function shape(parts: readonly StringPart[]): { shape: Shape; text: string } {
  const wild = parts.filter(isWildcard);
  const lits = parts.filter((p): p is string => !isWildcard(p));
  const first = parts[0];
  const last = parts[parts.length - 1];
  const starAt = (p: StringPart | undefined): boolean => p !== undefined && isWildcard(p) && p.wildcard === '*';
  if (wild.length === 0) return { shape: 'equals', text: lits.join('') };
  if (lits.length === 1 && parts.length === 3 && starAt(first) && starAt(last)) return { shape: 'contains', text: lits[0]! };
  if (lits.length === 1 && parts.length === 2 && starAt(last)) return { shape: 'startswith', text: lits[0]! };
  if (lits.length === 1 && parts.length === 2 && starAt(first)) return { shape: 'endswith', text: lits[0]! };
  return { shape: 'pattern', text: '' };
}

/** A character that differs from `c` even case-insensitively, so the perturbation really breaks a match. */
function otherChar(c: string): string {
  if (/[0-9]/.test(c)) return c === '7' ? '3' : '7';
  if (/[a-z]/i.test(c)) return c.toLowerCase() === 'q' ? 'Z' : 'Q';
  return c === '_' ? '~' : '_';
}

/** Replaces one character in the middle of the text: a near miss rather than an unrelated value. */
function perturb(text: string): string {
  if (text === '') return 'detflow-absent-value';
  const i = Math.floor(text.length / 2);
  return text.slice(0, i) + otherChar(text[i]!) + text.slice(i + 1);
}

/**
 * A small regex sampler: follows the first alternative, takes the minimum repetition count (or one,
 * in the second attempt), picks the first member of a class. It covers the SigmaHQ regexes; the
 * caller checks the sample with the real regex and falls back to a non-matching value otherwise.
 */
function sampleRegex(pattern: string, greedyOne: boolean): string {
  let i = 0;
  const src = pattern;
  const classChar = (): string => {
    // At '[': returns one member (or a non-member for a negated class) and advances past ']'.
    i++;
    const negated = src[i] === '^';
    if (negated) i++;
    const members: Array<[number, number]> = [];
    let firstLiteral = true;
    while (i < src.length && (src[i] !== ']' || firstLiteral)) {
      firstLiteral = false;
      let c = src[i]!;
      let code: number;
      if (c === '\\') {
        const e = src[i + 1]!;
        i += 2;
        if (e === 'd') {
          members.push([48, 57]);
          continue;
        }
        if (e === 'w') {
          members.push([97, 122], [65, 90], [48, 57], [95, 95]);
          continue;
        }
        if (e === 's') {
          members.push([32, 32], [9, 9]);
          continue;
        }
        c = e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e;
        code = c.charCodeAt(0);
      } else {
        code = c.charCodeAt(0);
        i++;
      }
      if (src[i] === '-' && src[i + 1] !== ']' && i + 1 < src.length) {
        i++;
        let hi = src[i]!;
        if (hi === '\\') {
          i++;
          hi = src[i]!;
        }
        i++;
        members.push([code, hi.charCodeAt(0)]);
      } else members.push([code, code]);
    }
    i++; // ']'
    if (!negated) return String.fromCharCode(members[0]?.[0] ?? 97);
    for (const candidate of 'aZ0 -_x.') {
      const code = candidate.charCodeAt(0);
      if (!members.some(([lo, hi]) => code >= lo && code <= hi)) return candidate;
    }
    return '\u00e9';
  };
  const atom = (): string => {
    const c = src[i]!;
    if (c === '(') {
      i++;
      if (src[i] === '?') {
        // Non-capturing / flag / lookaround groups: skip the group header, drop lookarounds.
        const look = src[i + 1] === '=' || src[i + 1] === '!' || (src[i + 1] === '<' && (src[i + 2] === '=' || src[i + 2] === '!'));
        while (i < src.length && src[i] !== ':' && src[i] !== ')' && !(look && (src[i] === '=' || src[i] === '!'))) i++;
        if (src[i] === ')') {
          i++;
          return ''; // inline flags such as (?i)
        }
        i++;
        const body = alternation();
        i++; // ')'
        return look ? '' : body;
      }
      const body = alternation();
      i++;
      return body;
    }
    if (c === '[') return classChar();
    if (c === '.') {
      i++;
      return 'a';
    }
    if (c === '^' || c === '$') {
      i++;
      return '';
    }
    if (c === '\\') {
      const e = src[i + 1]!;
      i += 2;
      switch (e) {
        case 'd':
          return '1';
        case 'w':
          return 'a';
        case 's':
          return ' ';
        case 'D':
        case 'W':
          return '-';
        case 'S':
          return 'a';
        case 'b':
        case 'B':
        case 'A':
        case 'z':
        case 'Z':
          return '';
        case 'n':
          return '\n';
        case 't':
          return '\t';
        case 'r':
          return '\r';
        case 'x': {
          const hex = src.slice(i, i + 2);
          i += 2;
          return String.fromCharCode(parseInt(hex, 16));
        }
        case 'u': {
          const hex = src.slice(i, i + 4);
          i += 4;
          return String.fromCharCode(parseInt(hex, 16));
        }
        default:
          return e;
      }
    }
    i++;
    return c;
  };
  const quantified = (): string => {
    const a = atom();
    const q = src[i];
    let min = 1;
    let optional = false;
    if (q === '*' || q === '+' || q === '?') {
      min = q === '+' ? 1 : 0;
      optional = q !== '+';
      i++;
    } else if (q === '{' && /^\{\d+(,\d*)?\}/.test(src.slice(i))) {
      const m = /^\{(\d+)(,\d*)?\}/.exec(src.slice(i))!;
      min = Number(m[1]);
      i += m[0].length;
    } else return a;
    if (src[i] === '?' || src[i] === '+') i++; // lazy / possessive
    const count = optional && greedyOne ? 1 : min;
    return a.repeat(count);
  };
  const sequence = (): string => {
    let out = '';
    while (i < src.length && src[i] !== '|' && src[i] !== ')') out += quantified();
    return out;
  };
  const alternation = (): string => {
    const first = sequence();
    while (src[i] === '|') {
      i++;
      sequence();
    }
    return first;
  };
  return alternation();
}

function regexWitness(value: Extract<SigmaValue, { kind: 'regex' }>): string | undefined {
  const { pattern } = extractInlineFlags(value.pattern);
  let re: RegExp;
  try {
    re = toJsRegExp(value.pattern, value);
  } catch {
    return undefined;
  }
  for (const greedyOne of [false, true]) {
    try {
      const s = sampleRegex(pattern, greedyOne);
      if (re.test(s)) return s;
    } catch {
      // malformed for the sampler: try the other strategy, then give up
    }
  }
  return undefined;
}

function ipInNetwork(value: Extract<SigmaValue, { kind: 'cidr' }>): string | undefined {
  if (value.version !== 4) return undefined;
  const host = value.address | (value.prefix < 32 ? 1n : 0n);
  return [24n, 16n, 8n, 0n].map((s) => String((host >> s) & 255n)).join('.');
}

/** The concrete alternatives a value stands for (expansions, placeholders) as plain values. */
function alternatives(value: SigmaValue, item: DetectionItem, options: GeneratorOptions): SigmaValue[] {
  if (value.kind === 'expansion') return value.values.flatMap((v) => alternatives(v, item, options));
  if (value.kind === 'placeholder') return resolvePlaceholders(value, options.placeholders, item.pos);
  return [value];
}

interface FieldWants {
  positives: SigmaValue[];
  negatives: SigmaValue[][];
}

/** Builds a value satisfying every positive constraint on one field (or undefined: leave absent). */
function fieldValue(w: FieldWants, variant: number): EventValue | undefined | null {
  const pos = w.positives;
  if (pos.some((v) => v.kind === 'null' || (v.kind === 'exists' && !v.value))) return undefined;
  const strings = pos.filter((v): v is StringValue => v.kind === 'string');
  // Regexes are unanchored searches (mostly), so their samples can sit between the string pieces.
  const regexSamples = pos.filter((v) => v.kind === 'regex').map((v) => regexWitness(v as Extract<SigmaValue, { kind: 'regex' }>) ?? 'detflow-no-regex-sample');
  const other = pos.find((v) => v.kind !== 'string' && v.kind !== 'exists' && v.kind !== 'fieldref' && v.kind !== 'regex');
  if (other) {
    switch (other.kind) {
      case 'number':
        return other.value;
      case 'boolean':
        return other.value;
      case 'compare':
        return other.op === 'gt' ? other.value + 1 : other.op === 'lt' ? other.value - 1 : other.value;
      case 'cidr':
        return ipInNetwork(other) ?? '::1';
      case 'timepart': {
        const n = other.op === 'gt' ? other.value + 1 : other.op === 'lt' ? other.value - 1 : other.value;
        const hour = other.part === 'hour' ? n : 12;
        const minute = other.part === 'minute' ? n : 30;
        return `2026-03-${String(other.part === 'day' ? n : 15).padStart(2, '0')}T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00Z`;
      }
      default:
        break;
    }
  }
  if (strings.length === 0 && regexSamples.length === 1) return regexSamples[0]!;
  if (strings.length > 0 || regexSamples.length > 0) {
    const shaped = strings.map((s) => ({ ...shape(s.parts), parts: s.parts }));
    const equals = shaped.find((s) => s.shape === 'equals');
    if (equals) return equals.text;
    const starts = shaped.filter((s) => s.shape === 'startswith').map((s) => s.text);
    const ends = shaped.filter((s) => s.shape === 'endswith').map((s) => s.text);
    const contains = [...shaped.filter((s) => s.shape === 'contains').map((s) => s.text), ...regexSamples];
    const pattern = shaped.find((s) => s.shape === 'pattern');
    // Separators between the pieces vary with the plan, so `contains` is seen both at a word
    // boundary and glued to neighbouring text (regex samples always get a space: many start with \s).
    const sep = variant % 2 === 0 || regexSamples.length > 0 ? ' ' : '';
    const middle = contains.join(sep);
    if (pattern) return stringWitness(pattern.parts, [starts.join(''), middle, ends.join('')].filter(Boolean).join(sep));
    return [starts.join(''), middle, ends.join('')].filter((x) => x !== '').join(sep) || middle;
  }
  if (pos.some((v) => v.kind === 'exists' && v.value)) return 'detflow-present';
  return null; // no value-bearing positive constraint: decided by the negatives
}

/** A value present on the field that fails every listed value (near miss of the first one). */
function failingValue(values: readonly SigmaValue[]): EventValue | undefined {
  const first = values[0];
  if (!first) return undefined;
  if (values.some((v) => v.kind === 'exists' && v.value)) return undefined; // must be absent
  switch (first.kind) {
    case 'string': {
      const s = shape(first.parts);
      return perturb(s.shape === 'pattern' ? stringWitness(first.parts) : s.text);
    }
    case 'number':
      return first.value + 1;
    case 'boolean':
      return !first.value;
    case 'null':
    case 'exists':
      return 'detflow-present';
    case 'compare':
      return first.op === 'gt' || first.op === 'gte' ? first.value - 1 : first.value + 1;
    case 'cidr':
      return first.version === 4 ? `${(Number((first.address >> 24n) & 255n) + 1) % 256}.0.0.1` : '::2';
    case 'regex':
      return 'detflow-no-match';
    case 'fieldref':
      return undefined; // handled with the referenced field
    default:
      return 'detflow-no-match';
  }
}

function swapCase(value: EventValue): EventValue {
  if (typeof value !== 'string') return value;
  let out = '';
  for (const c of value) out += c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
  return out;
}

/** Every field a rule reads, fieldref targets included: the columns of the event table. */
export function referencedFields(rule: SigmaRule): string[] {
  const out = new Set<string>();
  const walk = (n: DetectionNode): void => {
    if (n.kind !== 'item') return n.children.forEach(walk);
    if (n.item.field !== null) out.add(n.item.field);
    for (const v of n.item.values) if (v.kind === 'fieldref') out.add(v.field);
  };
  for (const ident of rule.detection.identifiers.values()) walk(ident.node);
  return [...out];
}

/** Names of the `|expand` placeholders a rule uses (both engines must be given the same values). */
export function placeholderNames(rule: SigmaRule): string[] {
  const names = new Set<string>();
  const walk = (n: DetectionNode): void => {
    if (n.kind !== 'item') return n.children.forEach(walk);
    for (const v of n.item.values) if (v.kind === 'placeholder') for (const p of v.parts) if (typeof p === 'object' && 'placeholder' in p) names.add(p.placeholder);
  };
  for (const ident of rule.detection.identifiers.values()) walk(ident.node);
  return [...names];
}

/** Builds one event from a plan; `variant` varies separators and expansion choices. */
function realise(plan: Plan, variant: number, options: GeneratorOptions): { event: Record<string, EventValue>; casedFields: Set<string> } {
  const wants = new Map<string, FieldWants>();
  const refs: Array<{ field: string; other: string; want: boolean }> = [];
  const casedFields = new Set<string>();
  const get = (f: string): FieldWants => {
    let w = wants.get(f);
    if (!w) wants.set(f, (w = { positives: [], negatives: [] }));
    return w;
  };
  for (const c of plan) {
    const field = c.item.field;
    if (field === null) continue; // keyword searches: no SQL backend under test converts them
    const holds = c.item.negated ? !c.want : c.want;
    const values = c.item.values;
    for (const v of values) if ((v.kind === 'string' || v.kind === 'placeholder') && v.cased) casedFields.add(field);
    const w = get(field);
    if (holds) {
      const chosen = c.item.linking === 'and' ? values : [values[c.pick % values.length]!];
      for (const v of chosen) {
        if (v.kind === 'fieldref') refs.push({ field, other: v.field, want: true });
        else {
          const alts = alternatives(v, c.item, options);
          w.positives.push(alts[variant % alts.length]!);
        }
      }
    } else {
      const failing = c.item.linking === 'and' ? [values[c.pick % values.length]!] : values;
      for (const v of failing) if (v.kind === 'fieldref') refs.push({ field, other: v.field, want: false });
      w.negatives.push(failing.flatMap((v) => (v.kind === 'fieldref' ? [] : alternatives(v, c.item, options))));
    }
  }
  const event: Record<string, EventValue> = {};
  for (const [field, w] of wants) {
    const value = fieldValue(w, variant);
    if (value === undefined) continue;
    if (value !== null) {
      event[field] = value;
      continue;
    }
    // Only negative constraints: a near miss of the first one (present, so the miss is tested
    // on a value rather than on absence), unless a negated `exists`/`null` needs otherwise.
    const negs = w.negatives.filter((n) => n.length > 0);
    if (negs.length === 0) continue;
    const failing = failingValue(negs[0]!);
    if (failing !== undefined) event[field] = failing;
  }
  for (const r of refs) {
    const target = event[r.other] ?? (event[r.other] = 'detflow-ref-value');
    event[r.field] = r.want ? target : `${String(target)}-differs`;
  }
  return { event, casedFields };
}

function key(e: GeneratedEvent): string {
  return JSON.stringify(Object.entries(e).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Matching, case-swapped, non-matching and empty events for one rule, deduplicated. */
export function generateEvents(rule: SigmaRule, options: GeneratorOptions = {}): LabelledEvent[] {
  const max = options.maxPlans ?? DEFAULT_MAX_PLANS;
  const conditions = rule.detection.conditions.map((c) => (w: boolean) => conditionPlans(c.ast, w, rule, max));
  // Several conditions are OR-ed.
  const matchPlans = combine('or', conditions, true, max);
  const missPlans = combine('or', conditions, false, max * 2);
  const seen = new Set<string>();
  const out: LabelledEvent[] = [];
  const add = (event: GeneratedEvent, intent: LabelledEvent['intent']): void => {
    const k = key(event);
    if (seen.has(k)) return;
    seen.add(k);
    out.push({ event, intent });
  };
  matchPlans.forEach((plan, i) => {
    const { event, casedFields } = realise(plan, i, options);
    add(event, 'match');
    const swapped: Record<string, EventValue> = {};
    for (const [f, v] of Object.entries(event)) swapped[f] = casedFields.has(f) ? v : swapCase(v);
    add(swapped, 'case-variant');
  });
  missPlans.forEach((plan, i) => add(realise(plan, i, options).event, 'no-match'));
  add({}, 'empty');
  return out;
}
