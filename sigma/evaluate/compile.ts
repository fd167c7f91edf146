import { SigmaError } from '../errors';
import type { ConditionNode, DetectionItem, DetectionNode, SigmaRule } from '../model';
import { compileFieldItem, compileKeywordItem } from './detection-items';
import { LowerCache } from './lower-cache';
import type { CompiledRule, CompileOptions, EventMatcher, ItemCompiler, SigmaEvent } from './types';

const DEFAULT_MAX_REGEX_INPUT = 65_536;

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
