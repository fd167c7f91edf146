import { isSigmaError, type SigmaError } from '../errors';
import { compileRule } from '../evaluate';
import { collectLeaves } from '../evaluate/detection-items';
import { mappedFieldReader } from '../evaluate/field-mapping';
import type { CompiledRule, CompileOptions, SigmaEvent } from '../evaluate';
import type { SigmaRule } from '../model';
import { ruleNeed, type Anchor, type Need } from './anchors';
import { Automaton, type Pattern } from './automaton';

/**
 * Whole-ruleset evaluation: many rules over one event stream, with the result of evaluating every
 * rule's `compileRule` matcher on every event, but most rules never run for a given event.
 *
 *  1. Routing by logsource. An event carries its logsource beside it, as the local target stores it
 *     (`ls_product`, `ls_category`, `ls_service`, compared lower-cased): a rule applies when each
 *     attribute its logsource names equals the event's (an event without that attribute gets no
 *     rule that names it). The rules of each distinct event logsource are gathered once and cached.
 *  2. Literal prefilter. Each rule has a disjunction of necessary anchors (anchors.ts); per route,
 *     the anchors are indexed by field: exact values in a hash map, prefixes, suffixes and substrings
 *     in one Aho–Corasick automaton over the lower-cased value. An event marks the rules whose
 *     anchors it satisfies; only those, and the rules without anchors, are evaluated in full.
 * Exactness: a rule that is not marked cannot match (its anchors are necessary), and a marked rule
 * is decided by its own compiled matcher, so the result is exactly the naive one.
 */

/** The logsource an event belongs to; omitted, no rule is excluded by its logsource. */
export interface EventLogsource {
  readonly product?: string;
  readonly category?: string;
  readonly service?: string;
}

export interface RejectedRule {
  readonly rule: SigmaRule;
  readonly error: SigmaError;
}

export interface RulesetStats {
  readonly rules: number;
  /** Rules with necessary anchors (evaluated only when one is present). */
  readonly anchored: number;
  readonly anchors: number;
}

export interface CompiledRuleset {
  /** The rules that compiled, in input order; `match` returns indices into this list. */
  readonly rules: readonly CompiledRule[];
  /** Rules `compileRule` refused (with its error); they match nothing. */
  readonly rejected: readonly RejectedRule[];
  readonly stats: RulesetStats;
  /** Indices (ascending) of the rules that match the event. */
  match(event: SigmaEvent, logsource?: EventLogsource): number[];
}

const KEYS = ['product', 'category', 'service'] as const;

/** A logsource with each attribute it names lower-cased (as the local store keeps events' logsources). */
export function lowerCasedLogsource(logsource: EventLogsource): EventLogsource {
  const lowered: { product?: string; category?: string; service?: string } = {};
  for (const k of KEYS) {
    const v = logsource[k];
    if (v !== undefined) lowered[k] = v.toLowerCase();
  }
  return lowered;
}

/** Whether a rule's logsource admits an event's (see above); an omitted event logsource admits all. */
export function logsourceApplies(rule: EventLogsource, event: EventLogsource | undefined): boolean {
  if (event === undefined) return true;
  for (const k of KEYS) {
    const want = rule[k];
    if (want === undefined) continue;
    const have = event[k];
    if (have === undefined || have.toLowerCase() !== want.toLowerCase()) return false;
  }
  return true;
}

/** The reference: every compiled rule's logsource and matcher on the event (what `match` must equal). */
export function matchEveryRule(rules: readonly CompiledRule[], event: SigmaEvent, logsource?: EventLogsource): number[] {
  const out: number[] = [];
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    if (logsourceApplies(r.rule.logsource, logsource) && r.match(event)) out.push(i);
  }
  return out;
}

interface FieldIndex {
  readonly read: (event: SigmaEvent) => unknown;
  readonly exact: Map<string, Int32Array> | null;
  readonly automaton: Automaton | null;
  /** Rules per automaton pattern id. */
  readonly patternRules: readonly Int32Array[];
}

interface Route {
  /** Rules of this route without anchors, ascending. */
  readonly always: Int32Array;
  /** Fields read as one own property of the event: looked up from the event's keys when many. */
  readonly byName: ReadonlyMap<string, FieldIndex>;
  /** Mapped or dotted fields, read with their reader. */
  readonly others: readonly FieldIndex[];
  /** Keyword anchors, checked on the leaves a keyword search looks at. */
  readonly keywords: FieldIndex | null;
}

function toText(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw.toLowerCase();
  if (typeof raw === 'number' || typeof raw === 'boolean' || typeof raw === 'bigint') return String(raw).toLowerCase();
  return undefined;
}

function buildRoute(ruleIds: readonly number[], needs: readonly Need[], options: CompileOptions): Route {
  const always: number[] = [];
  const byField = new Map<string | null, Array<{ anchor: Anchor; rule: number }>>();
  for (const r of ruleIds) {
    const need = needs[r];
    if (need === null || need === undefined) {
      always.push(r);
      continue;
    }
    for (const anchor of need) {
      let list = byField.get(anchor.field);
      if (!list) byField.set(anchor.field, (list = []));
      list.push({ anchor, rule: r });
    }
  }
  const byName = new Map<string, FieldIndex>();
  const others: FieldIndex[] = [];
  let keywords: FieldIndex | null = null;
  for (const [field, list] of byField) {
    const exact = new Map<string, number[]>();
    const patterns = new Map<string, { pattern: Pattern; rules: number[] }>();
    for (const { anchor, rule } of list) {
      if (anchor.kind === 'exact') {
        const rules = exact.get(anchor.text) ?? [];
        rules.push(rule);
        exact.set(anchor.text, rules);
      } else {
        const key = `${anchor.kind}\u0000${anchor.text}`;
        const entry = patterns.get(key) ?? { pattern: { text: anchor.text, kind: anchor.kind }, rules: [] };
        entry.rules.push(rule);
        patterns.set(key, entry);
      }
    }
    const entries = [...patterns.values()];
    const index: FieldIndex = {
      read: field === null ? () => undefined : mappedFieldReader(field, options.fieldMapping),
      exact: exact.size === 0 ? null : new Map([...exact].map(([k, v]) => [k, Int32Array.from(v)])),
      automaton: entries.length === 0 ? null : new Automaton(entries.map((e) => e.pattern)),
      patternRules: entries.map((e) => Int32Array.from(e.rules)),
    };
    if (field === null) keywords = index;
    else if (options.fieldMapping?.[field] === undefined && !field.includes('.')) byName.set(field, index);
    else others.push(index);
  }
  return { always: Int32Array.from(always), byName, others, keywords };
}

/** Fields beyond which reading each one costs more than walking the event's own keys. */
const KEY_WALK = 8;

const MAX_ROUTES = 4096;

/** Compiles every rule once and indexes them for `match` (see above). */
export function compileRuleset(input: readonly SigmaRule[], options: CompileOptions = {}): CompiledRuleset {
  const rules: CompiledRule[] = [];
  const rejected: RejectedRule[] = [];
  for (const rule of input) {
    try {
      rules.push(compileRule(rule, options));
    } catch (e) {
      if (!isSigmaError(e)) throw e;
      rejected.push({ rule, error: e });
    }
  }
  const needs = rules.map((r) => ruleNeed(r.rule));
  // Routes by lower-cased product, then category, then service (undefined is a key of its own).
  type Level<T> = Map<string | undefined, T>;
  let routes: Level<Level<Level<Route>>> = new Map();
  let routeCount = 0;
  let unrouted: Route | undefined;
  const build = (logsource: EventLogsource | undefined): Route => {
    const ids: number[] = [];
    rules.forEach((r, i) => {
      if (logsourceApplies(r.rule.logsource, logsource)) ids.push(i);
    });
    return buildRoute(ids, needs, options);
  };
  const routeFor = (logsource: EventLogsource | undefined): Route => {
    if (logsource === undefined) return (unrouted ??= build(undefined));
    const product = logsource.product?.toLowerCase();
    const category = logsource.category?.toLowerCase();
    const service = logsource.service?.toLowerCase();
    let byCategory = routes.get(product);
    let byService = byCategory?.get(category);
    let route = byService?.get(service);
    if (route === undefined) {
      // Logsources come from data: bound the cache rather than let odd values grow it.
      if (routeCount >= MAX_ROUTES) {
        routes = new Map();
        routeCount = 0;
        byCategory = byService = undefined;
      }
      route = build({ product, category, service });
      if (!byCategory) routes.set(product, (byCategory = new Map()));
      if (!byService) byCategory.set(category, (byService = new Map()));
      byService.set(service, route);
      routeCount++;
    }
    return route;
  };

  const stamps = new Uint32Array(rules.length);
  let generation = 0;
  let marked: number[] = [];
  const mark = (r: number): void => {
    if (stamps[r] !== generation) {
      stamps[r] = generation;
      marked.push(r);
    }
  };
  const markAll = (ids: Int32Array): void => {
    for (let i = 0; i < ids.length; i++) mark(ids[i]!);
  };
  let scanning: readonly Int32Array[] = [];
  const found = (id: number): void => markAll(scanning[id]!);
  const scanText = (f: FieldIndex, text: string): void => {
    if (f.exact !== null) {
      const ids = f.exact.get(text);
      if (ids !== undefined) markAll(ids);
    }
    if (f.automaton !== null) {
      scanning = f.patternRules;
      f.automaton.scan(text, found);
    }
  };

  const scanValue = (f: FieldIndex, raw: unknown): void => {
    if (raw === undefined || raw === null) return;
    if (Array.isArray(raw)) {
      for (const x of raw) {
        const text = toText(x);
        if (text !== undefined) scanText(f, text);
      }
    } else {
      const text = toText(raw);
      if (text !== undefined) scanText(f, text);
    }
  };
  const keywordFields = options.keywordFields?.map((f) => mappedFieldReader(f, options.fieldMapping));

  const match = (event: SigmaEvent, logsource?: EventLogsource): number[] => {
    const route = routeFor(logsource);
    generation = generation === 0xffffffff ? 1 : generation + 1;
    if (generation === 1) stamps.fill(0);
    marked = [];
    markAll(route.always);
    if (route.byName.size > KEY_WALK) {
      // The same values `fieldReader` reads: own properties, by name.
      const names = Object.getOwnPropertyNames(event);
      for (let i = 0; i < names.length; i++) {
        const f = route.byName.get(names[i]!);
        if (f !== undefined) scanValue(f, event[names[i]!]);
      }
    } else for (const f of route.byName.values()) scanValue(f, f.read(event));
    for (const f of route.others) scanValue(f, f.read(event));
    if (route.keywords !== null) {
      const leaves: string[] = [];
      if (keywordFields) for (const read of keywordFields) collectLeaves(read(event), leaves, 0);
      else collectLeaves(event, leaves, 0);
      for (const leaf of leaves) scanText(route.keywords, leaf.toLowerCase());
    }
    const candidates = marked;
    if (candidates.length > 1) candidates.sort((a, b) => a - b);
    const out: number[] = [];
    for (const r of candidates) if (rules[r]!.match(event)) out.push(r);
    return out;
  };

  const anchored = needs.filter((n) => n !== null);
  return {
    rules,
    rejected,
    stats: { rules: rules.length, anchored: anchored.length, anchors: anchored.reduce((s, n) => s + n.length, 0) },
    match,
  };
}
