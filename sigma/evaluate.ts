import { SigmaError } from './errors';
import type {
  CidrValue,
  CompareValue,
  ConditionNode,
  DetectionItem,
  DetectionNode,
  FieldRefValue,
  PlaceholderValue,
  RegexValue,
  SigmaRule,
  SigmaValue,
  StringValue,
  TimePartValue,
} from './model';
import { networkMask, parseIp } from './net';
import { analyseRegex, isCatastrophic, toJsRegExp } from './regex';
import { ANY, endsWithAny, hasWildcards, isWildcard, normaliseParts, parseSigmaString, partsToRegexSource, plainText, startsWithAny, type StringPart } from './string';

/**
 * Local evaluation of a rule over JSON events. A rule is compiled once into closures; per event
 * the only allocations are the lower-cased copies of fields that string tests need, and those are
 * memoised per event so several items on the same field share one copy.
 *
 * Semantics chosen where the spec leaves it to the backend:
 *  - `Field: null` matches when the field is absent or null.
 *  - Keywords are case-insensitive substring searches over every string/number leaf of the event
 *    (or only `keywordFields` when given).
 *  - `neq`/`not` on a missing field: the inner test is false, so the negation is true (SPL/KQL
 *    behaviour, not SQL three-valued logic).
 *  - Regexes are unanchored searches over at most `maxRegexInput` characters of the value.
 */

export type SigmaEvent = Readonly<Record<string, unknown>>;
export type EventMatcher = (event: SigmaEvent) => boolean;

export interface CompileOptions {
  /** Values for `expand` placeholders, e.g. `{ Administrators: ['admin1', 'admin2'] }`. */
  readonly placeholders?: Readonly<Record<string, readonly string[]>>;
  /** Sigma field name → event field name(s); several names are tried in order. */
  readonly fieldMapping?: Readonly<Record<string, string | readonly string[]>>;
  /** Restrict keyword searches to these fields. */
  readonly keywordFields?: readonly string[];
  /** Regex input bound in characters (default 65,536). */
  readonly maxRegexInput?: number;
  /** Compile regexes the safety analysis flags as catastrophic instead of rejecting the rule. */
  readonly allowUnsafeRegex?: boolean;
}

export interface CompiledRule {
  readonly rule: SigmaRule;
  readonly match: EventMatcher;
  /** Names of the search identifiers that match (diagnostics; slower than `match`). */
  readonly matchedIdentifiers: (event: SigmaEvent) => string[];
}

const DEFAULT_MAX_REGEX_INPUT = 65_536;

/** Field lookup: the flat key first, then a dotted walk into nested objects. */
export function getFieldValue(event: SigmaEvent, name: string): unknown {
  const direct = event[name];
  if (direct !== undefined || !name.includes('.')) return direct;
  let cur: unknown = event;
  for (const seg of name.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

function makeGetter(name: string, mapping: CompileOptions['fieldMapping']): (event: SigmaEvent) => unknown {
  const mapped = mapping?.[name];
  const names = mapped === undefined ? [name] : typeof mapped === 'string' ? [mapped] : [...mapped];
  const compiled = names.map((n) => {
    if (!n.includes('.')) return (e: SigmaEvent): unknown => e[n];
    const path = n.split('.');
    return (e: SigmaEvent): unknown => {
      const direct = e[n];
      if (direct !== undefined) return direct;
      let cur: unknown = e;
      for (const seg of path) {
        if (cur === null || typeof cur !== 'object') return undefined;
        cur = (cur as Record<string, unknown>)[seg];
      }
      return cur;
    };
  });
  if (compiled.length === 1) return compiled[0]!;
  return (e) => {
    for (const g of compiled) {
      const v = g(e);
      if (v !== undefined) return v;
    }
    return undefined;
  };
}

type StrTest = (s: string) => boolean;

/** Lowers string parts once at compile time so per-event work is a plain comparison. */
function lowerParts(parts: readonly StringPart[], cased: boolean): StringPart[] {
  return cased ? [...parts] : parts.map((p) => (typeof p === 'string' ? p.toLowerCase() : p));
}

/**
 * Groups an OR-list of wildcard strings by shape: exact values go into a Set, `*x*`/`x*`/`*x` become
 * includes/startsWith/endsWith, anything else is folded into a single anchored regex.
 */
function compileStringSet(values: readonly StringValue[]): StrTest {
  const exact = new Set<string>();
  const contains: string[] = [];
  const prefixes: string[] = [];
  const suffixes: string[] = [];
  const complex: string[] = [];
  let matchAll = false;
  for (const v of values) {
    const parts = lowerParts(v.parts, v.cased);
    const inner = parts.slice(startsWithAny(parts) ? 1 : 0, endsWithAny(parts) ? parts.length - 1 : parts.length);
    if (parts.length > 0 && parts.every((p) => isWildcard(p) && p.wildcard === '*')) matchAll = true;
    else if (!hasWildcards(parts)) exact.add(plainText(parts));
    else if (!hasWildcards(inner)) {
      const text = plainText(inner);
      if (startsWithAny(parts) && endsWithAny(parts)) contains.push(text);
      else if (endsWithAny(parts)) prefixes.push(text);
      else suffixes.push(text);
    } else complex.push(partsToRegexSource(parts).slice(1, -1));
  }
  if (matchAll) return () => true;
  const regex = complex.length > 0 ? new RegExp(`^(?:${complex.join('|')})$`, 's') : undefined;
  const tests: StrTest[] = [];
  if (exact.size === 1) {
    const only = [...exact][0]!;
    tests.push((s) => s === only);
  } else if (exact.size > 1) tests.push((s) => exact.has(s));
  if (contains.length === 1) {
    const n = contains[0]!;
    tests.push((s) => s.includes(n));
  } else if (contains.length > 1) {
    tests.push((s) => {
      for (let i = 0; i < contains.length; i++) if (s.includes(contains[i]!)) return true;
      return false;
    });
  }
  if (prefixes.length > 0) {
    tests.push((s) => {
      for (let i = 0; i < prefixes.length; i++) if (s.startsWith(prefixes[i]!)) return true;
      return false;
    });
  }
  if (suffixes.length > 0) {
    tests.push((s) => {
      for (let i = 0; i < suffixes.length; i++) if (s.endsWith(suffixes[i]!)) return true;
      return false;
    });
  }
  if (regex) tests.push((s) => regex.test(s));
  if (tests.length === 1) return tests[0]!;
  return (s) => {
    for (let i = 0; i < tests.length; i++) if (tests[i]!(s)) return true;
    return false;
  };
}

/** Per-event memo of lower-cased field strings, keyed by a slot number assigned at compile time. */
class LowerCache {
  private generation = 1;
  private readonly gens: number[] = [];
  private readonly values: string[] = [];
  private slots = 0;

  newSlot(): number {
    this.gens.push(0);
    this.values.push('');
    return this.slots++;
  }
  nextEvent(): void {
    this.generation++;
  }
  lower(slot: number, s: string): string {
    if (this.gens[slot] === this.generation) return this.values[slot]!;
    const l = s.toLowerCase();
    this.gens[slot] = this.generation;
    this.values[slot] = l;
    return l;
  }
}

/** Scalar test on one field value (arrays are unrolled by the caller). */
/** `element` is set for array elements, which must bypass the per-field lower-case memo. */
type ScalarTest = (raw: unknown, event: SigmaEvent, element?: boolean) => boolean;

function scalarToText(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean' || typeof raw === 'bigint') return String(raw);
  return undefined;
}

function toNumber(raw: unknown): number {
  if (typeof raw === 'number') return raw;
  if (typeof raw === 'string' && raw.trim() !== '') return Number(raw);
  return NaN;
}

function compareOp(op: 'gt' | 'gte' | 'lt' | 'lte' | 'eq', a: number, b: number): boolean {
  switch (op) {
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
    case 'eq':
      return a === b;
  }
}

export function parseTimestamp(raw: unknown): Date | undefined {
  if (raw instanceof Date) return raw;
  if (typeof raw === 'number') return new Date(raw);
  if (typeof raw !== 'string') return undefined;
  let text = raw.trim().replace(' ', 'T');
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(text)) text += 'Z';
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

function isoWeek(d: Date): number {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - day);
  const yearStart = Date.UTC(t.getUTCFullYear(), 0, 1);
  return Math.ceil(((t.getTime() - yearStart) / 86_400_000 + 1) / 7);
}

export function timePartOf(d: Date, part: TimePartValue['part']): number {
  switch (part) {
    case 'minute':
      return d.getUTCMinutes();
    case 'hour':
      return d.getUTCHours();
    case 'day':
      return d.getUTCDate();
    case 'week':
      return isoWeek(d);
    case 'month':
      return d.getUTCMonth() + 1;
    case 'year':
      return d.getUTCFullYear();
  }
}

/** Turns `%name%` placeholders into concrete string values (cartesian product over placeholders). */
export function resolvePlaceholders(
  value: PlaceholderValue,
  placeholders: CompileOptions['placeholders'],
  pos: DetectionItem['pos'],
): StringValue[] {
  let variants: StringPart[][] = [[]];
  for (const part of value.parts) {
    if (typeof part === 'object' && 'placeholder' in part) {
      const replacement = placeholders?.[part.placeholder];
      if (replacement === undefined) {
        throw new SigmaError('placeholder-unresolved', `placeholder %${part.placeholder}% has no value`, pos);
      }
      const next: StringPart[][] = [];
      for (const v of variants) for (const r of replacement) next.push([...v, ...parseSigmaString(r)]);
      variants = next;
    } else {
      for (const v of variants) v.push(part);
    }
  }
  return variants.map((parts) => ({ kind: 'string', parts: normaliseParts(parts), cased: value.cased, binary: false }));
}

interface ItemCompiler {
  readonly options: CompileOptions;
  readonly cache: LowerCache;
  readonly maxRegexInput: number;
}

export function compileRegex(value: RegexValue, pos: DetectionItem['pos'], allowUnsafe: boolean): RegExp {
  const issues = analyseRegex(value.pattern);
  if (!allowUnsafe && isCatastrophic(issues)) {
    throw new SigmaError('regex-unsafe', `regex /${value.pattern}/ can backtrack catastrophically: ${issues.map((i) => i.message).join('; ')}`, pos);
  }
  try {
    return toJsRegExp(value.pattern, value);
  } catch (e) {
    throw new SigmaError('regex-invalid', `invalid regex /${value.pattern}/: ${(e as Error).message}`, pos);
  }
}

function compileCidr(v: CidrValue): ScalarTest {
  const mask = networkMask(v.version, v.prefix);
  return (raw) => {
    if (typeof raw !== 'string') return false;
    const ip = parseIp(raw);
    return ip !== undefined && ip.version === v.version && (ip.value & mask) === v.address;
  };
}

function compileFieldRef(v: FieldRefValue, compiler: ItemCompiler): ScalarTest {
  const other = makeGetter(v.field, compiler.options.fieldMapping);
  return (raw, event) => {
    let a = scalarToText(raw);
    let b = scalarToText(other(event));
    if (a === undefined || b === undefined) return false;
    if (!v.cased) {
      a = a.toLowerCase();
      b = b.toLowerCase();
    }
    switch (v.match) {
      case 'equals':
        return a === b;
      case 'contains':
        return a.includes(b);
      case 'startswith':
        return a.startsWith(b);
      case 'endswith':
        return a.endsWith(b);
    }
  };
}

/**
 * One value (not string: strings are grouped separately) → scalar test.
 */
function compileNonString(value: Exclude<SigmaValue, StringValue | PlaceholderValue | { kind: 'expansion' }>, item: DetectionItem, compiler: ItemCompiler): ScalarTest {
  switch (value.kind) {
    case 'number': {
      const n = value.value;
      return (raw) => (typeof raw === 'number' ? raw === n : toNumber(raw) === n);
    }
    case 'boolean': {
      const b = value.value;
      const text = String(b);
      return (raw) => raw === b || (typeof raw === 'string' && raw.toLowerCase() === text);
    }
    case 'null':
      return (raw) => raw === null || raw === undefined;
    case 'regex': {
      const re = compileRegex(value, item.pos, compiler.options.allowUnsafeRegex === true);
      const max = compiler.maxRegexInput;
      return (raw) => {
        const s = scalarToText(raw);
        if (s === undefined) return false;
        re.lastIndex = 0;
        return re.test(s.length > max ? s.slice(0, max) : s);
      };
    }
    case 'cidr':
      return compileCidr(value);
    case 'compare': {
      const c: CompareValue = value;
      return (raw) => compareOp(c.op, toNumber(raw), c.value);
    }
    case 'exists':
      // Presence is decided before scalar tests run (see compileFieldItem).
      return () => true;
    case 'fieldref':
      return compileFieldRef(value, compiler);
    case 'timepart': {
      const t = value;
      return (raw) => {
        const d = parseTimestamp(raw);
        return d !== undefined && compareOp(t.op, timePartOf(d, t.part), t.value);
      };
    }
  }
}

/** Compiles a list of values into one OR-ed scalar test, with all plain strings in one fast set. */
function compileValueGroup(values: readonly SigmaValue[], item: DetectionItem, compiler: ItemCompiler, slot: number | undefined): ScalarTest {
  const strings: StringValue[] = [];
  const others: ScalarTest[] = [];
  const flatten = (v: SigmaValue): void => {
    if (v.kind === 'expansion') v.values.forEach(flatten);
    else if (v.kind === 'string') strings.push(v);
    else if (v.kind === 'placeholder') strings.push(...resolvePlaceholders(v, compiler.options.placeholders, item.pos));
    else others.push(compileNonString(v, item, compiler));
  };
  values.forEach(flatten);
  const tests = [...others];
  if (strings.length > 0) {
    const cased = strings.every((s) => s.cased);
    const set = compileStringSet(strings);
    const cache = compiler.cache;
    if (cased) {
      tests.unshift((raw) => {
        const s = scalarToText(raw);
        return s !== undefined && set(s);
      });
    } else if (slot !== undefined) {
      tests.unshift((raw, _event, element) => {
        if (typeof raw === 'string') return set(element === true ? raw.toLowerCase() : cache.lower(slot, raw));
        const s = scalarToText(raw);
        return s !== undefined && set(s.toLowerCase());
      });
    } else {
      tests.unshift((raw) => {
        const s = scalarToText(raw);
        return s !== undefined && set(s.toLowerCase());
      });
    }
  }
  if (tests.length === 1) return tests[0]!;
  return (raw, event, element) => {
    for (let i = 0; i < tests.length; i++) if (tests[i]!(raw, event, element)) return true;
    return false;
  };
}

function compileFieldItem(item: DetectionItem, compiler: ItemCompiler, slots: Map<string, number>): EventMatcher {
  const field = item.field!;
  const get = makeGetter(field, compiler.options.fieldMapping);
  const only = item.values.length === 1 ? item.values[0] : undefined;
  let test: EventMatcher;
  if (only?.kind === 'exists') {
    const want = only.value;
    test = (e) => (get(e) !== undefined) === want;
  } else {
    let slot = slots.get(field);
    if (slot === undefined) {
      slot = compiler.cache.newSlot();
      slots.set(field, slot);
    }
    // AND-linking needs one test per value; OR-linking folds every value into one test.
    const groups = item.linking === 'and' ? item.values.map((v) => compileValueGroup([v], item, compiler, slot)) : [compileValueGroup(item.values, item, compiler, slot)];
    const nullable = item.values.some((v) => v.kind === 'null');
    const applyAll = (raw: unknown, e: SigmaEvent): boolean => {
      for (let i = 0; i < groups.length; i++) if (!groups[i]!(raw, e)) return false;
      return true;
    };
    const single = groups.length === 1 ? groups[0]! : undefined;
    test = (e) => {
      const raw = get(e);
      if (raw === undefined || raw === null) return nullable;
      if (Array.isArray(raw)) {
        // Multi-valued fields: each value test may be satisfied by a different element.
        if (single) return raw.some((x) => single(x, e, true));
        return groups.every((g) => raw.some((x) => g(x, e, true)));
      }
      return single ? single(raw, e) : applyAll(raw, e);
    };
  }
  return item.negated ? (e) => !test(e) : test;
}

function collectLeaves(value: unknown, out: string[], depth: number): void {
  if (depth > 16) return;
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number' || typeof value === 'boolean') out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) collectLeaves(v, out, depth + 1);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) collectLeaves(v, out, depth + 1);
}

function compileKeywordItem(item: DetectionItem, compiler: ItemCompiler): EventMatcher {
  // Keywords are substring searches: wrap each string with `*` where none is written.
  const wrap = (v: SigmaValue): SigmaValue => {
    if (v.kind === 'string') {
      const parts = [...v.parts];
      if (!startsWithAny(parts)) parts.unshift(ANY);
      if (!endsWithAny(parts)) parts.push(ANY);
      return { ...v, parts: normaliseParts(parts) };
    }
    if (v.kind === 'expansion') return { kind: 'expansion', values: v.values.map(wrap) };
    return v;
  };
  const values = item.values.map(wrap);
  const groups = item.linking === 'and' ? values.map((v) => compileValueGroup([v], item, compiler, undefined)) : [compileValueGroup(values, item, compiler, undefined)];
  const fields = compiler.options.keywordFields?.map((f) => makeGetter(f, compiler.options.fieldMapping));
  const test: EventMatcher = (e) => {
    const leaves: string[] = [];
    if (fields) for (const g of fields) collectLeaves(g(e), leaves, 0);
    else collectLeaves(e, leaves, 0);
    return groups.every((g) => leaves.some((leaf) => g(leaf, e)));
  };
  return item.negated ? (e) => !test(e) : test;
}

function compileNode(node: DetectionNode, compiler: ItemCompiler, slots: Map<string, number>): EventMatcher {
  if (node.kind === 'item') {
    return node.item.field === null ? compileKeywordItem(node.item, compiler) : compileFieldItem(node.item, compiler, slots);
  }
  const children = node.children.map((c) => compileNode(c, compiler, slots));
  if (children.length === 1) return children[0]!;
  if (node.kind === 'and') {
    if (children.length === 2) {
      const [a, b] = children as [EventMatcher, EventMatcher];
      return (e) => a(e) && b(e);
    }
    return (e) => {
      for (let i = 0; i < children.length; i++) if (!children[i]!(e)) return false;
      return true;
    };
  }
  return (e) => {
    for (let i = 0; i < children.length; i++) if (children[i]!(e)) return true;
    return false;
  };
}

export function compileCondition(node: ConditionNode, identifiers: ReadonlyMap<string, EventMatcher>): EventMatcher {
  switch (node.kind) {
    case 'ref': {
      const m = identifiers.get(node.name);
      if (!m) throw new SigmaError('condition-undefined-identifier', `undefined identifier '${node.name}'`, node.pos);
      return m;
    }
    case 'of': {
      const ms = node.targets.map((t) => compileCondition({ kind: 'ref', name: t, pos: node.pos }, identifiers));
      return node.quantifier === 'all' ? (e) => ms.every((m) => m(e)) : (e) => ms.some((m) => m(e));
    }
    case 'not': {
      const inner = compileCondition(node.operand, identifiers);
      return (e) => !inner(e);
    }
    case 'and':
    case 'or': {
      const ms = node.operands.map((o) => compileCondition(o, identifiers));
      if (node.kind === 'and') {
        return (e) => {
          for (let i = 0; i < ms.length; i++) if (!ms[i]!(e)) return false;
          return true;
        };
      }
      return (e) => {
        for (let i = 0; i < ms.length; i++) if (ms[i]!(e)) return true;
        return false;
      };
    }
  }
}

/** Compiles a parsed rule into a matcher. Throws SigmaError for rules with errors or unsafe regexes. */
export function compileRule(rule: SigmaRule, options: CompileOptions = {}): CompiledRule {
  const firstError = rule.errors[0];
  if (firstError) throw firstError;
  const cache = new LowerCache();
  const compiler: ItemCompiler = { options, cache, maxRegexInput: options.maxRegexInput ?? DEFAULT_MAX_REGEX_INPUT };
  const slots = new Map<string, number>();
  const identifiers = new Map<string, EventMatcher>();
  for (const [name, ident] of rule.detection.identifiers) identifiers.set(name, compileNode(ident.node, compiler, slots));
  const conditions = rule.detection.conditions.map((c) => compileCondition(c.ast, identifiers));
  let inner: EventMatcher;
  if (conditions.length === 1) inner = conditions[0]!;
  else inner = (e) => conditions.some((c) => c(e));
  const match: EventMatcher = (e) => {
    cache.nextEvent();
    return inner(e);
  };
  const matchedIdentifiers = (e: SigmaEvent): string[] => {
    const out: string[] = [];
    for (const [name, m] of identifiers) {
      cache.nextEvent();
      if (m(e)) out.push(name);
    }
    return out;
  };
  return { rule, match, matchedIdentifiers };
}

/**
 * One detection item compiled on its own, with exactly the semantics it has inside a rule. Test
 * coverage uses it to ask which single values of an item an event exercised. Each call is one event.
 */
export function compileDetectionItem(item: DetectionItem, options: CompileOptions = {}): EventMatcher {
  const cache = new LowerCache();
  const compiler: ItemCompiler = { options, cache, maxRegexInput: options.maxRegexInput ?? DEFAULT_MAX_REGEX_INPUT };
  const test = compileNode({ kind: 'item', item }, compiler, new Map());
  return (e) => {
    cache.nextEvent();
    return test(e);
  };
}
