import { compileCondition, compileRule, parseTimestamp, type CompileOptions, type EventMatcher, type SigmaEvent } from './evaluate';
import { SigmaError } from './errors';
import { fieldValue } from './field-access';
import type { CorrelationCondition, SigmaCorrelation, SigmaDocument, SigmaRule } from './model';

/**
 * Correlation rules over an ordered event stream. Each correlation keeps, per group-by tuple, the
 * signals of its referenced rules inside a sliding window of `timespan` (not fixed buckets).
 *
 * Firing policy (the spec leaves it open): conditions are checked whenever a signal arrives; when
 * one holds, an alert is emitted and that group's window is cleared, so one burst yields one alert
 * instead of one per further event. Conditions are therefore "reached at some point within the
 * window"; `lt`/`lte` are evaluated on arrival too, which fits streaming and not batch "at most N"
 * reports. Chained correlations see an inner alert as a signal whose fields are the inner group-by.
 */

export interface CorrelationAlert {
  readonly correlation: SigmaCorrelation;
  /** group-by field → value (null when the field was missing). */
  readonly group: Readonly<Record<string, unknown>>;
  readonly timestamp: number;
  readonly windowStart: number;
  /** Count, distinct count, sum, average or percentile, depending on the type. */
  readonly value: number;
  /** Referenced rules (ids or names as written) that contributed a signal. */
  readonly rules: readonly string[];
  readonly events: number;
}

export interface CorrelationOptions extends CompileOptions {
  /** Event time in epoch milliseconds; default reads @timestamp, timestamp, TimeCreated_SystemTime, UtcTime. */
  readonly timestamp?: (event: SigmaEvent) => number | undefined;
}

const DEFAULT_TIME_FIELDS = ['@timestamp', 'timestamp', 'TimeCreated_SystemTime', 'UtcTime', 'time'];

function defaultTimestamp(event: SigmaEvent): number | undefined {
  for (const f of DEFAULT_TIME_FIELDS) {
    const d = parseTimestamp(fieldValue(event, f));
    if (d) return d.getTime();
  }
  return undefined;
}

export function compareThreshold(condition: Pick<CorrelationCondition, 'op' | 'count'>, value: number): boolean {
  switch (condition.op) {
    case 'gt':
      return value > condition.count;
    case 'gte':
      return value >= condition.count;
    case 'lt':
      return value < condition.count;
    case 'lte':
      return value <= condition.count;
    case 'eq':
      return value === condition.count;
    case 'neq':
      return value !== condition.count;
  }
}

interface Signal {
  readonly ts: number;
  readonly ref: number;
  readonly value: unknown;
}

interface Reference {
  readonly written: string;
  readonly key: string;
  readonly names: readonly string[];
}

interface CorrelationState {
  readonly correlation: SigmaCorrelation;
  readonly refs: readonly Reference[];
  readonly groups: Map<string, Signal[]>;
  readonly expression?: EventMatcher;
}

function documentKeys(doc: SigmaDocument): string[] {
  return [doc.id, doc.name].filter((k): k is string => k !== undefined);
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

export interface CorrelationEngine {
  /** Feeds one event (in time order) and returns the alerts it completes. */
  process(event: SigmaEvent, timestamp?: number): CorrelationAlert[];
  /** Convenience: every alert of an ordered stream. */
  run(events: Iterable<SigmaEvent>): CorrelationAlert[];
}

/**
 * Builds an engine for every correlation in `documents`; the rules they reference (by id or name)
 * must be among the documents too. Throws SigmaError `correlation-unresolved-rule` otherwise.
 */
export function createCorrelationEngine(documents: readonly SigmaDocument[], options: CorrelationOptions = {}): CorrelationEngine {
  const byKey = new Map<string, SigmaDocument>();
  for (const d of documents) for (const k of documentKeys(d)) byKey.set(k, d);
  const ruleMatchers = new Map<string, EventMatcher>();
  const states = new Map<string, CorrelationState>();
  const order: CorrelationState[] = [];
  const visiting = new Set<string>();

  const keyOf = (d: SigmaDocument): string => d.id ?? d.name ?? d.title;

  const visit = (corr: SigmaCorrelation): CorrelationState => {
    const key = keyOf(corr);
    const existing = states.get(key);
    if (existing) return existing;
    if (visiting.has(key)) throw new SigmaError('correlation-invalid', `correlation '${corr.title}' references itself`, corr.pos, corr.source);
    visiting.add(key);
    const refs: Reference[] = corr.rules.map((written) => {
      const target = byKey.get(written);
      if (!target || target.kind === 'filter') {
        throw new SigmaError(
          'correlation-unresolved-rule',
          `correlation '${corr.title}' references unknown rule '${written}'`,
          corr.positions.correlation ?? corr.pos,
          corr.source,
        );
      }
      if (target.kind === 'correlation') visit(target);
      else if (!ruleMatchers.has(keyOf(target))) ruleMatchers.set(keyOf(target), compileRule(target as SigmaRule, options).match);
      return { written, key: keyOf(target), names: documentKeys(target) };
    });
    let expression: EventMatcher | undefined;
    if (corr.conditionExpression) {
      // The expression's identifiers are rule names; evaluate it over a "rule present" event.
      const matchers = new Map<string, EventMatcher>(corr.rules.map((r) => [r, (e: SigmaEvent) => e[r] === true]));
      expression = compileCondition(corr.conditionExpression.ast, matchers);
    }
    const state: CorrelationState = { correlation: corr, refs, groups: new Map(), ...(expression ? { expression } : {}) };
    states.set(key, state);
    order.push(state);
    visiting.delete(key);
    return state;
  };
  for (const d of documents) if (d.kind === 'correlation') visit(d);

  const getTs = options.timestamp ?? defaultTimestamp;

  const groupValues = (corr: SigmaCorrelation, ref: Reference, event: SigmaEvent): unknown[] =>
    corr.groupBy.map((g) => {
      const alias = corr.aliases[g];
      const field = alias ? (ref.names.map((n) => alias[n]).find((f) => f !== undefined) ?? g) : g;
      return fieldValue(event, field) ?? null;
    });

  const evaluate = (state: CorrelationState, signals: Signal[]): number | undefined => {
    const corr = state.correlation;
    const cond = corr.condition;
    switch (corr.type) {
      case 'event_count':
        return cond && compareThreshold(cond, signals.length) ? signals.length : undefined;
      case 'value_count': {
        const distinct = new Set(signals.filter((s) => s.value !== undefined && s.value !== null).map((s) => String(s.value)));
        return cond && compareThreshold(cond, distinct.size) ? distinct.size : undefined;
      }
      case 'value_sum':
      case 'value_avg':
      case 'value_percentile':
      case 'value_median': {
        const nums = signals.map((s) => Number(s.value)).filter((n) => Number.isFinite(n));
        if (nums.length === 0 || !cond) return undefined;
        const sum = nums.reduce((a, b) => a + b, 0);
        const v =
          corr.type === 'value_sum' ? sum : corr.type === 'value_avg' ? sum / nums.length : percentile(nums, corr.type === 'value_median' ? 50 : (cond.percentile ?? 50));
        return compareThreshold(cond, v) ? v : undefined;
      }
      case 'temporal': {
        const seen = new Set(signals.map((s) => s.ref));
        if (state.expression) {
          const present: Record<string, boolean> = {};
          state.refs.forEach((r, i) => (present[r.written] = seen.has(i)));
          return state.expression(present) ? seen.size : undefined;
        }
        return cond && compareThreshold(cond, seen.size) ? seen.size : undefined;
      }
      case 'temporal_ordered': {
        // Greedy scan finds whether the rules occur as an ordered subsequence within the window.
        let next = 0;
        for (const s of signals) {
          if (s.ref === next) next++;
          if (next === state.refs.length) break;
        }
        return cond && compareThreshold(cond, next) ? next : undefined;
      }
    }
  };

  const feed = (state: CorrelationState, refIndex: number, event: SigmaEvent, ts: number): CorrelationAlert | undefined => {
    const corr = state.correlation;
    const ref = state.refs[refIndex]!;
    const values = groupValues(corr, ref, event);
    const key = JSON.stringify(values);
    let signals = state.groups.get(key);
    if (!signals) {
      signals = [];
      state.groups.set(key, signals);
    }
    const field = corr.condition?.field;
    signals.push({ ts, ref: refIndex, value: field === undefined ? undefined : fieldValue(event, field) });
    const windowStart = ts - corr.timespanMs;
    let drop = 0;
    while (drop < signals.length && signals[drop]!.ts < windowStart) drop++;
    if (drop > 0) signals.splice(0, drop);
    const value = evaluate(state, signals);
    if (value === undefined) return undefined;
    const group: Record<string, unknown> = {};
    corr.groupBy.forEach((g, i) => (group[g] = values[i]));
    const alert: CorrelationAlert = {
      correlation: corr,
      group,
      timestamp: ts,
      windowStart: signals[0]?.ts ?? ts,
      value,
      rules: [...new Set(signals.map((s) => state.refs[s.ref]!.written))],
      events: signals.length,
    };
    state.groups.delete(key);
    return alert;
  };

  const process = (event: SigmaEvent, timestamp?: number): CorrelationAlert[] => {
    const ts = timestamp ?? getTs(event);
    if (ts === undefined || Number.isNaN(ts)) {
      throw new SigmaError('correlation-invalid', 'event has no timestamp; pass one or set options.timestamp');
    }
    const matched = new Map<string, boolean>();
    for (const [key, m] of ruleMatchers) matched.set(key, m(event));
    const fired = new Map<string, CorrelationAlert>();
    const alerts: CorrelationAlert[] = [];
    // `order` lists inner correlations before the outer ones that reference them.
    for (const state of order) {
      // Later refs first, so one event never completes two consecutive steps of an ordered chain.
      for (let i = state.refs.length - 1; i >= 0; i--) {
        const ref = state.refs[i]!;
        const inner = fired.get(ref.key);
        if (inner) {
          const alert = feed(state, i, inner.group, ts);
          if (alert) {
            fired.set(keyOf(state.correlation), alert);
            alerts.push(alert);
          }
        } else if (matched.get(ref.key)) {
          const alert = feed(state, i, event, ts);
          if (alert) {
            fired.set(keyOf(state.correlation), alert);
            alerts.push(alert);
          }
        }
      }
    }
    return alerts;
  };

  return {
    process,
    run(events) {
      const out: CorrelationAlert[] = [];
      for (const e of events) out.push(...process(e));
      return out;
    },
  };
}
