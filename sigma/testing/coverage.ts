import { formatCondition } from '../condition';
import { compileCondition, compileDetectionItem, compileRule, type CompileOptions, type EventMatcher, type SigmaEvent } from '../evaluate';
import type { ConditionNode, DetectionItem, RawValue, SigmaRule } from '../model';
import { itemsOf } from '../walk';
import type { Fixture } from './fixtures';
import { resolveTarget, type AnalysisOptions, type TestTarget } from './targets';

/**
 * Which parts of a rule the fixtures exercise, computed on the parsed rule model with the engine's
 * own matching (every fixture event is evaluated; expectations play no part in coverage).
 *
 * - selections: a search identifier is covered when some fixture event satisfies it.
 * - values: every value of every detection item, as written. A value is covered when some event
 *   satisfies the item restricted to that value alone (same field, modifiers and case rules), before
 *   `neq` negation: covered means "an event carries the value the rule names". This is independent of
 *   the other items of the selection.
 * - branches (MC/DC-lite): one item per decision point, i.e. each whole condition (`condition[i]`) and
 *   each operand of every `and`, `or`, `not`, `1 of` and `all of` node (an `of` node's operands are the
 *   identifiers its pattern resolved to). Every item has two outcomes, evaluated true and evaluated
 *   false; operands are evaluated on every event regardless of short-circuiting. `total` counts
 *   outcomes (2 per item) and `covered` the outcomes some fixture produced. Independence pairs (an
 *   operand flipping the decision on its own) are not required.
 * - overall_percent: the mean of the three percentages.
 *
 * Correlation targets: the same figures over the base rules they reference (fixture `events` lists
 * are evaluated event by event), each item naming its `rule`.
 */

export interface SelectionCoverageItem {
  readonly rule: string;
  readonly name: string;
  readonly covered: boolean;
  /** Fixtures with at least one event satisfying the selection, in fixture order. */
  readonly by: string[];
}

export interface ValueCoverageItem {
  readonly rule: string;
  readonly selection: string;
  /** null for a keyword (field-less) item. */
  readonly field: string | null;
  readonly modifiers: string[];
  /** The value as written in YAML. */
  readonly value: RawValue['value'];
  readonly covered: boolean;
  readonly by: string[];
}

export interface BranchCoverageItem {
  readonly rule: string;
  /** `condition[i]`, then `.operands[j]`, `.operand` (under not) or `.of[j]` per level. */
  readonly path: string;
  readonly description: string;
  readonly true_by: string[];
  readonly false_by: string[];
}

export interface CoverageSection<T> {
  readonly total: number;
  readonly covered: number;
  /** 0–100, one decimal; 100 when there is nothing to cover. */
  readonly percent: number;
  readonly items: T[];
}

export interface Coverage {
  readonly selections: CoverageSection<SelectionCoverageItem>;
  readonly values: CoverageSection<ValueCoverageItem>;
  readonly branches: CoverageSection<BranchCoverageItem>;
  readonly overall_percent: number;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
const ratio = (covered: number, total: number): number => (total === 0 ? 100 : (covered / total) * 100);

/** Collects fixture names per key without repeats, keeping fixture order. */
class Witnesses {
  private readonly sets = new Map<string, Set<string>>();
  add(key: string, fixture: string): void {
    let s = this.sets.get(key);
    if (!s) this.sets.set(key, (s = new Set()));
    s.add(fixture);
  }
  get(key: string): string[] {
    return [...(this.sets.get(key) ?? [])];
  }
}

interface DecisionPoint {
  readonly path: string;
  readonly description: string;
  /** Evaluated over a record of identifier name → satisfied. */
  readonly test: EventMatcher;
}

function decisionPoints(conditions: readonly ConditionNode[], names: readonly string[]): DecisionPoint[] {
  // The condition is evaluated by the engine's own compileCondition over "identifier satisfied" flags.
  const flags = new Map<string, EventMatcher>(names.map((n) => [n, (e: SigmaEvent) => e[n] === true]));
  const out: DecisionPoint[] = [];
  const visit = (node: ConditionNode, path: string): void => {
    const text = formatCondition(node);
    // formatCondition parenthesises every and/or; the item's own outer pair adds nothing.
    const description = node.kind === 'and' || node.kind === 'or' ? text.slice(1, -1) : text;
    out.push({ path, description, test: compileCondition(node, flags) });
    if (node.kind === 'not') visit(node.operand, `${path}.operand`);
    else if (node.kind === 'and' || node.kind === 'or') node.operands.forEach((o, j) => visit(o, `${path}.operands[${j}]`));
    else if (node.kind === 'of') node.targets.forEach((t, j) => visit({ kind: 'ref', name: t, pos: node.pos }, `${path}.of[${j}]`));
  };
  conditions.forEach((c, i) => visit(c, `condition[${i}]`));
  return out;
}

interface ValueProbe {
  readonly key: string;
  readonly selection: string;
  readonly item: DetectionItem;
  readonly index: number;
  readonly test: EventMatcher;
}

function valueProbes(rule: SigmaRule, options: CompileOptions): ValueProbe[] {
  const out: ValueProbe[] = [];
  for (const [selection, ident] of rule.detection.identifiers) {
    itemsOf(ident.node).forEach((item, itemIndex) => {
      item.values.forEach((value, index) => {
        const single: DetectionItem = { ...item, values: [value], raw: item.raw.slice(index, index + 1), linking: 'or', negated: false };
        out.push({ key: `${selection}/${itemIndex}/${index}`, selection, item, index, test: compileDetectionItem(single, options) });
      });
    });
  }
  return out;
}

interface RuleCoverage {
  selections: SelectionCoverageItem[];
  values: ValueCoverageItem[];
  branches: BranchCoverageItem[];
}

function coverRule(label: string, rule: SigmaRule, fixtures: readonly Fixture[], options: CompileOptions): RuleCoverage {
  const compiled = compileRule(rule, options);
  const names = [...rule.detection.identifiers.keys()];
  const probes = valueProbes(rule, options);
  const points = decisionPoints(
    rule.detection.conditions.map((c) => c.ast),
    names,
  );
  const selectionBy = new Witnesses();
  const valueBy = new Witnesses();
  const trueBy = new Witnesses();
  const falseBy = new Witnesses();
  for (const fixture of fixtures) {
    for (const event of fixture.events) {
      const flags: Record<string, boolean> = Object.create(null) as Record<string, boolean>;
      for (const n of compiled.matchedIdentifiers(event)) {
        flags[n] = true;
        selectionBy.add(n, fixture.name);
      }
      for (const p of probes) if (p.test(event)) valueBy.add(p.key, fixture.name);
      for (const d of points) (d.test(flags) ? trueBy : falseBy).add(d.path, fixture.name);
    }
  }
  return {
    selections: names.map((name) => {
      const by = selectionBy.get(name);
      return { rule: label, name, covered: by.length > 0, by };
    }),
    values: probes.map((p) => {
      const by = valueBy.get(p.key);
      return {
        rule: label,
        selection: p.selection,
        field: p.item.field,
        modifiers: [...p.item.modifiers],
        value: p.item.raw[p.index]?.value ?? null,
        covered: by.length > 0,
        by,
      };
    }),
    branches: points.map((d) => ({ rule: label, path: d.path, description: d.description, true_by: trueBy.get(d.path), false_by: falseBy.get(d.path) })),
  };
}

function section<T>(items: T[], covered: number, total: number): CoverageSection<T> {
  return { total, covered, percent: round1(ratio(covered, total)), items };
}

/**
 * Coverage of a rule (or of a correlation's base rules, found in `options.documents`) by fixtures.
 * Throws SigmaError when the rule cannot be compiled, as the evaluator would.
 */
export function analyseCoverage(target: TestTarget, fixtures: readonly Fixture[], options: AnalysisOptions = {}): Coverage {
  const compile = options.compile ?? {};
  const parts = resolveTarget(target, options.documents).rules.map(({ label, rule }) => coverRule(label, rule, fixtures, compile));
  const selections = parts.flatMap((p) => p.selections);
  const values = parts.flatMap((p) => p.values);
  const branches = parts.flatMap((p) => p.branches);
  const selectionCovered = selections.filter((s) => s.covered).length;
  const valueCovered = values.filter((v) => v.covered).length;
  const outcomes = branches.reduce((n, b) => n + (b.true_by.length > 0 ? 1 : 0) + (b.false_by.length > 0 ? 1 : 0), 0);
  const result = {
    selections: section(selections, selectionCovered, selections.length),
    values: section(values, valueCovered, values.length),
    branches: section(branches, outcomes, branches.length * 2),
  };
  const overall = (ratio(selectionCovered, selections.length) + ratio(valueCovered, values.length) + ratio(outcomes, branches.length * 2)) / 3;
  return { ...result, overall_percent: round1(overall) };
}
