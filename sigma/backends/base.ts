import { SigmaError, type SourcePosition } from '../errors';
import { resolvePlaceholders } from '../evaluate';
import type {
  CidrValue,
  CompareValue,
  ConditionNode,
  DetectionItem,
  DetectionNode,
  FieldRefValue,
  RegexValue,
  SigmaRule,
  SigmaValue,
  StringValue,
  TimePartValue,
} from '../model';
import { endsWithAny, hasWildcards, plainText, startsWithAny, type StringPart } from '../string';

/**
 * Shared skeleton of the query backends (pySigma style): the condition AST and detection tree are
 * walked once, and every leaf is dispatched to a backend method by value kind. A backend that
 * cannot express a construct throws `backend-unsupported` with the construct's position; it never
 * emits a query that means something else.
 */

export interface ConvertOptions {
  /** Values for `expand` placeholders. */
  readonly placeholders?: Readonly<Record<string, readonly string[]>>;
}

/** How a wildcard string can be matched: plain equality, a substring/prefix/suffix, or a pattern. */
export type StringShape =
  { readonly shape: 'equals' | 'contains' | 'startswith' | 'endswith'; readonly text: string } | { readonly shape: 'wildcard'; readonly parts: readonly StringPart[] };

export function shapeOf(parts: readonly StringPart[]): StringShape {
  if (!hasWildcards(parts)) return { shape: 'equals', text: plainText(parts) };
  const front = startsWithAny(parts);
  const back = endsWithAny(parts);
  const inner = parts.slice(front ? 1 : 0, back ? parts.length - 1 : parts.length);
  if (inner.length > 0 && !hasWildcards(inner)) {
    const text = plainText(inner);
    if (front && back) return { shape: 'contains', text };
    if (back) return { shape: 'startswith', text };
    return { shape: 'endswith', text };
  }
  return { shape: 'wildcard', parts };
}

/** A converted sub-expression and how tightly it binds, so parentheses appear only where needed. */
export interface Expr {
  readonly text: string;
  readonly prec: number;
}
export const PREC_OR = 0;
export const PREC_AND = 1;
export const PREC_NOT = 2;
export const PREC_ATOM = 3;

export interface ItemContext {
  readonly item: DetectionItem;
  /** True when the item sits in a chain of ANDs from the top of the query (Splunk post-filters). */
  readonly topLevel: boolean;
}

export abstract class QueryBackend {
  abstract readonly name: string;
  protected options: ConvertOptions = {};

  protected unsupported(what: string, pos: SourcePosition): never {
    throw new SigmaError('backend-unsupported', `${this.name}: ${what} cannot be expressed`, pos);
  }

  // --- boolean structure -------------------------------------------------------------------
  protected abstract and(parts: string[]): string;
  protected abstract or(parts: string[]): string;
  protected abstract not(part: string): string;
  protected group(part: string): string {
    return `(${part})`;
  }

  // --- leaves --------------------------------------------------------------------------------
  protected abstract stringMatch(field: string, value: StringValue, ctx: ItemContext): string;
  /** `text` is the number's exact decimal text (NumberValue.text). */
  protected abstract numberMatch(field: string, text: string, ctx: ItemContext): string;
  protected abstract booleanMatch(field: string, value: boolean, ctx: ItemContext): string;
  protected abstract nullMatch(field: string, ctx: ItemContext): string;
  protected abstract regexMatch(field: string, value: RegexValue, ctx: ItemContext): string;
  protected abstract cidrMatch(field: string, value: CidrValue, ctx: ItemContext): string;
  protected abstract compareMatch(field: string, value: CompareValue, ctx: ItemContext): string;
  protected abstract existsMatch(field: string, exists: boolean, ctx: ItemContext): string;
  protected abstract fieldRefMatch(field: string, value: FieldRefValue, ctx: ItemContext): string;
  protected abstract timePartMatch(field: string, value: TimePartValue, ctx: ItemContext): string;
  protected abstract keywordMatch(value: SigmaValue, ctx: ItemContext): string;

  /** Field name as the target knows it (pipelines rename before conversion; backends quote). */
  protected abstract field(name: string): string;

  /** Function-style negations (`NOT coalesce(x, false)`, `not(x)`) need no parentheses around x. */
  protected readonly notIsFunction: boolean = false;

  /** Joins with parentheses only where precedence needs them (or < and < not < atom). */
  protected combine(kind: 'and' | 'or', parts: Expr[]): Expr {
    const kept = kind === 'and' ? parts.filter((p) => p.text !== '') : parts;
    if (kept.length === 1) return kept[0]!;
    const need = kind === 'and' ? PREC_AND : PREC_OR;
    const texts = kept.map((p) => (p.prec < need ? this.group(p.text) : p.text));
    return { text: kind === 'and' ? this.and(texts) : this.or(texts), prec: need };
  }

  protected negate(e: Expr): Expr {
    return { text: this.not(this.notIsFunction || e.prec >= PREC_NOT ? e.text : this.group(e.text)), prec: PREC_NOT };
  }

  /** Converts the detection logic of a rule to a boolean expression in the target language. */
  convertCondition(rule: SigmaRule, options: ConvertOptions = {}): string {
    const first = rule.errors[0];
    if (first) throw first;
    this.options = options;
    // Several conditions are alternatives: none of them is AND-ed at the top of the query.
    const top = rule.detection.conditions.length === 1;
    const conditions = rule.detection.conditions.map((c) => this.conditionNode(c.ast, rule, top));
    return this.combine('or', conditions).text;
  }

  protected conditionNode(node: ConditionNode, rule: SigmaRule, topLevel: boolean): Expr {
    switch (node.kind) {
      case 'ref': {
        const ident = rule.detection.identifiers.get(node.name);
        if (!ident) throw new SigmaError('condition-undefined-identifier', `undefined identifier '${node.name}'`, node.pos);
        return this.detectionNode(ident.node, topLevel);
      }
      case 'of': {
        const all = node.quantifier === 'all';
        const parts = node.targets.map((t) => this.conditionNode({ kind: 'ref', name: t, pos: node.pos }, rule, topLevel && (all || node.targets.length === 1)));
        return this.combine(all ? 'and' : 'or', parts);
      }
      case 'not':
        return this.negate(this.conditionNode(node.operand, rule, false));
      case 'and':
        return this.combine(
          'and',
          node.operands.map((o) => this.conditionNode(o, rule, topLevel)),
        );
      case 'or':
        return this.combine(
          'or',
          node.operands.map((o) => this.conditionNode(o, rule, false)),
        );
    }
  }

  protected detectionNode(node: DetectionNode, topLevel: boolean): Expr {
    if (node.kind === 'item') return this.item(node.item, topLevel);
    if (node.children.length === 1) return this.detectionNode(node.children[0]!, topLevel);
    if (node.kind === 'and')
      return this.combine(
        'and',
        node.children.map((c) => this.detectionNode(c, topLevel)),
      );
    return this.combine(
      'or',
      node.children.map((c) => this.detectionNode(c, false)),
    );
  }

  /** Expansions and placeholders become plain alternatives. */
  protected expand(values: readonly SigmaValue[], item: DetectionItem): SigmaValue[] {
    const out: SigmaValue[] = [];
    for (const v of values) {
      if (v.kind === 'expansion') out.push({ kind: 'expansion', values: this.expand(v.values, item) });
      else if (v.kind === 'placeholder') {
        const resolved = resolvePlaceholders(v, this.options.placeholders, item.pos);
        out.push(resolved.length === 1 ? resolved[0]! : { kind: 'expansion', values: resolved });
      } else out.push(v);
    }
    return out;
  }

  protected value(field: string | null, v: SigmaValue, ctx: ItemContext): Expr {
    if (v.kind === 'expansion')
      return this.combine(
        'or',
        v.values.map((x) => this.value(field, x, { ...ctx, topLevel: false })),
      );
    return { text: this.leaf(field, v, ctx), prec: PREC_ATOM };
  }

  private leaf(field: string | null, v: Exclude<SigmaValue, { kind: 'expansion' }>, ctx: ItemContext): string {
    if (field === null) return this.keywordMatch(v, ctx);
    switch (v.kind) {
      case 'string':
        return this.stringMatch(field, v, ctx);
      case 'number':
        return this.numberMatch(field, v.text, ctx);
      case 'boolean':
        return this.booleanMatch(field, v.value, ctx);
      case 'null':
        return this.nullMatch(field, ctx);
      case 'regex':
        return this.regexMatch(field, v, ctx);
      case 'cidr':
        return this.cidrMatch(field, v, ctx);
      case 'compare':
        return this.compareMatch(field, v, ctx);
      case 'exists':
        return this.existsMatch(field, v.value, ctx);
      case 'fieldref':
        return this.fieldRefMatch(field, v, ctx);
      case 'timepart':
        return this.timePartMatch(field, v, ctx);
      case 'placeholder':
        return this.unsupported('an unresolved placeholder', ctx.item.pos);
    }
  }

  protected item(item: DetectionItem, topLevel: boolean): Expr {
    const values = this.expand(item.values, item);
    const single = values.length === 1;
    const ctx: ItemContext = { item, topLevel: topLevel && !item.negated && (single || item.linking === 'and') };
    const expr = this.combine(
      item.linking === 'and' ? 'and' : 'or',
      values.map((v) => this.value(item.field, v, ctx)),
    );
    return item.negated ? this.negate(expr) : expr;
  }
}

/** IPv4 network → octet-aligned text prefixes ("10.", "172.16." ...) for backends without CIDR. */
export function ipv4Prefixes(v: CidrValue): string[] {
  const aligned = Math.ceil(v.prefix / 8) * 8;
  const count = 1 << (aligned - v.prefix);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const addr = v.address + (BigInt(i) << BigInt(32 - aligned));
    const octets = [24n, 16n, 8n, 0n].slice(0, aligned / 8).map((s) => ((addr >> s) & 0xffn).toString());
    out.push(octets.length === 0 ? '' : octets.join('.') + (aligned < 32 ? '.' : ''));
  }
  return out;
}
