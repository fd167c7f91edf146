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
import { extractInlineFlags } from '../regex';
import { translateRegex } from '../regex-dialect';
import { escapeRegex, type StringPart } from '../string';
import { PREC_AND, PREC_ATOM, PREC_NOT, QueryBackend, type ConvertOptions, type Expr, type ItemContext } from './base';

/**
 * Splunk SPL. Most of Sigma is `search` syntax: field values are case-insensitive with `*`
 * wildcards, which matches Sigma's default; `CASE()` gives case-sensitive matching. What `search`
 * cannot say (a regex, a field reference, the single-character wildcard `?`, a literal `*`) is an
 * eval expression in `| where`: top-level AND-ed leaves become their own filter (`| regex`,
 * `| where`), and a top-level conjunct that holds such a leaf inside OR/NOT moves whole into one
 * `| where`, where its search-expressible parts keep their search meaning through `searchmatch()`
 * (decision record 0076). Eval comparisons are case-sensitive and null-propagating, so every
 * `match()` carries its own `(?i)` and an `isnotnull()` guard: NOT of an absent field is true, as in
 * Sigma.
 */

/** Thrown while rendering `search` syntax when a leaf needs an eval expression; caught by the conjunct. */
class NeedsWhere extends Error {}

export interface SplunkOptions extends ConvertOptions {
  /** Search prefix for the logsource, e.g. `index=wineventlog source="XmlWinEventLog:Microsoft-Windows-Sysmon/Operational"`. */
  readonly prefix?: string;
}

function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export class SplunkBackend extends QueryBackend {
  readonly name = 'splunk';
  private post: string[] = [];
  /** `search` syntax, or an eval expression inside `| where`. */
  private mode: 'search' | 'where' = 'search';

  convert(rule: SigmaRule, options: SplunkOptions = {}): string {
    this.post = [];
    this.mode = 'search';
    const search = this.convertCondition(rule, options) || '*';
    const head = [options.prefix, search].filter((s) => s !== undefined && s !== '').join(' ');
    return [head, ...this.post].join(' ');
  }

  protected field(name: string): string {
    return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name) ? name : `"${name.replace(/"/g, '\\"')}"`;
  }
  /** Eval names a field in single quotes: bare, `a.b` would be concatenation and `"a"` a string. */
  private evalField(name: string, ctx: ItemContext): string {
    if (name.includes("'")) this.unsupported(`the field name ${name} in an eval expression (it contains a single quote)`, ctx.item.pos);
    return `'${name}'`;
  }
  protected and(parts: string[]): string {
    if (this.mode === 'where') return parts.join(' AND ');
    // Post-filters leave empty strings behind; a search made only of them still needs a term.
    return parts.length === 0 ? '*' : parts.join(' ');
  }
  protected or(parts: string[]): string {
    return parts.join(' OR ');
  }
  protected not(part: string): string {
    return `NOT ${part}`;
  }
  /**
   * Splunk's `search` binds OR tighter than AND (parentheses, NOT, OR, AND), the reverse of the
   * base order: `a b OR c` means `a AND (b OR c)`. An AND inside an OR therefore needs parentheses.
   * In eval every compound operand is parenthesised, so no precedence table is relied upon.
   */
  protected override combine(kind: 'and' | 'or', parts: Expr[]): Expr {
    if (this.mode === 'where') {
      const grouped = parts.length > 1 ? parts.map((p) => (p.prec < PREC_NOT ? { text: this.group(p.text), prec: PREC_ATOM } : p)) : parts;
      return super.combine(kind, grouped);
    }
    const grouped = kind === 'or' && parts.length > 1 ? parts.map((p) => (p.prec === PREC_AND ? { text: this.group(p.text), prec: PREC_ATOM } : p)) : parts;
    return super.combine(kind, grouped);
  }

  // --- search or where, per top-level conjunct ----------------------------------------------

  protected override conditionNode(node: ConditionNode, rule: SigmaRule, topLevel: boolean): Expr {
    return this.placed((top) => super.conditionNode(node, rule, top), topLevel);
  }
  protected override detectionNode(node: DetectionNode, topLevel: boolean): Expr {
    return this.placed((top) => super.detectionNode(node, top), topLevel);
  }
  protected override item(item: DetectionItem, topLevel: boolean): Expr {
    return this.placed((top) => super.item(item, top), topLevel);
  }

  /**
   * Renders a sub-tree in `search` syntax where it can be. A top-level conjunct that cannot becomes
   * one `| where` filter; inside a `where`, a sub-tree that `search` can say becomes one
   * `searchmatch()` so it keeps search's meaning (case-insensitive, wildcards, multivalue fields).
   */
  private placed(render: (topLevel: boolean) => Expr, topLevel: boolean): Expr {
    if (this.mode === 'where') {
      this.mode = 'search';
      try {
        const e = render(false);
        return { text: `searchmatch(${quote(e.text)})`, prec: PREC_ATOM };
      } catch (err) {
        if (!(err instanceof NeedsWhere)) throw err;
      } finally {
        this.mode = 'where';
      }
      return render(false);
    }
    if (!topLevel) return render(false);
    const mark = this.post.length;
    try {
      return render(true);
    } catch (err) {
      if (!(err instanceof NeedsWhere)) throw err;
      this.post.length = mark;
      this.mode = 'where';
      try {
        this.post.push(`| where ${render(false).text}`);
      } finally {
        this.mode = 'search';
      }
      return { text: '', prec: PREC_ATOM };
    }
  }

  /** An eval-only leaf: its own post-filter at the top, a `where` operand inside one, else a retry there. */
  private evalLeaf(command: 'regex' | 'where', searchForm: string, evalForm: string, ctx: ItemContext): string {
    if (this.mode === 'where') return evalForm;
    if (!ctx.topLevel) throw new NeedsWhere();
    this.post.push(command === 'regex' ? searchForm : `| where ${evalForm}`);
    return '';
  }
  private searchLeaf(text: string): string {
    return this.mode === 'where' ? `searchmatch(${quote(text)})` : text;
  }

  /** `search` has no single-character wildcard and cannot escape `*`: such strings need a regex. */
  private needsRegex(parts: readonly StringPart[]): boolean {
    return parts.some((p) => (typeof p === 'string' ? p.includes('*') : p.wildcard === '?'));
  }
  /** The wildcard string as PCRE: `?` is any one character, `*` any run, newlines included. */
  private wildcardRegex(parts: readonly StringPart[], cased: boolean, anchored: boolean): string {
    const body = parts.map((p) => (typeof p === 'string' ? escapeRegex(p) : p.wildcard === '*' ? '.*' : '.')).join('');
    return `(?s${cased ? '' : 'i'})${anchored ? `^${body}\\z` : body}`;
  }
  /** Eval's match() of a field: null when the field is absent, so it is guarded to false. */
  private evalMatch(field: string, pattern: string, ctx: ItemContext): string {
    const f = this.evalField(field, ctx);
    return `(isnotnull(${f}) AND match(${f}, ${quote(pattern)}))`;
  }

  private pattern(parts: readonly StringPart[]): string {
    let out = '';
    for (const p of parts) {
      if (typeof p !== 'string') out += '*';
      else out += p.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    }
    return `"${out}"`;
  }

  protected stringMatch(field: string, v: StringValue, ctx: ItemContext): string {
    if (this.needsRegex(v.parts)) {
      const expr = this.evalMatch(field, this.wildcardRegex(v.parts, v.cased, true), ctx);
      return this.evalLeaf('where', '', expr, ctx);
    }
    const pattern = this.pattern(v.parts);
    return this.searchLeaf(`${this.field(field)}=${v.cased ? `CASE(${pattern})` : pattern}`);
  }
  protected numberMatch(field: string, text: string): string {
    return this.searchLeaf(`${this.field(field)}=${text}`);
  }
  protected booleanMatch(field: string, value: boolean): string {
    return this.searchLeaf(`${this.field(field)}="${value}"`);
  }
  protected nullMatch(field: string): string {
    return this.searchLeaf(`NOT ${this.field(field)}=*`);
  }
  protected regexMatch(field: string, v: RegexValue, ctx: ItemContext): string {
    const inline = extractInlineFlags(v.pattern);
    const multiline = v.multiline || inline.flags.multiline === true;
    const dotAll = v.dotAll || inline.flags.dotAll === true;
    const t = translateRegex(inline.pattern, { multiline, dotAll }, 'pcre');
    if (t.refused !== undefined) this.unsupported(`regex /${v.pattern}/: ${t.refused}`, ctx.item.pos);
    const flags = `${v.ignoreCase || inline.flags.ignoreCase ? 'i' : ''}${multiline ? 'm' : ''}${dotAll ? 's' : ''}`;
    const pattern = flags ? `(?${flags})${t.pattern!}` : t.pattern!;
    return this.evalLeaf('regex', `| regex ${this.field(field)}=${quote(pattern)}`, this.evalMatch(field, pattern, ctx), ctx);
  }
  protected cidrMatch(field: string, v: CidrValue): string {
    return this.searchLeaf(`${this.field(field)}=${quote(v.network)}`);
  }
  protected compareMatch(field: string, v: CompareValue): string {
    const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[v.op];
    return this.searchLeaf(`${this.field(field)}${op}${v.value}`);
  }
  protected existsMatch(field: string, exists: boolean): string {
    return this.searchLeaf(exists ? `${this.field(field)}=*` : `NOT ${this.field(field)}=*`);
  }
  protected fieldRefMatch(field: string, v: FieldRefValue, ctx: ItemContext): string {
    // like() would read % and _ inside the other field's value as wildcards: only equality is exact.
    if (v.match !== 'equals') this.unsupported(`fieldref with ${v.match}`, ctx.item.pos);
    const a = this.evalField(field, ctx);
    const b = this.evalField(v.field, ctx);
    const q = (f: string) => (v.cased ? f : `lower(${f})`);
    // A comparison with an absent field is null, and NOT null is not true: guarded like match().
    const guarded = `(isnotnull(${a}) AND isnotnull(${b}) AND ${q(a)}==${q(b)})`;
    return this.evalLeaf('where', '', this.mode === 'where' ? guarded : `${q(a)}==${q(b)}`, ctx);
  }
  protected timePartMatch(_field: string, _v: TimePartValue, ctx: ItemContext): string {
    return this.unsupported('time-part modifiers on arbitrary fields', ctx.item.pos);
  }
  protected keywordMatch(v: SigmaValue, ctx: ItemContext): string {
    if (v.kind === 'number') return this.searchLeaf(quote(v.text));
    if (v.kind === 'boolean') return this.searchLeaf(quote(String(v.value)));
    if (v.kind !== 'string') return this.unsupported(`keyword value of kind ${v.kind}`, ctx.item.pos);
    // A keyword is a substring of the raw event; search cannot say `?` or a literal `*`, a regex on _raw can.
    if (this.needsRegex(v.parts)) return this.evalLeaf('where', '', this.evalMatch('_raw', this.wildcardRegex(v.parts, v.cased, false), ctx), ctx);
    // Free-text terms in SPL match whole terms; the *…* makes them substring searches like Sigma keywords.
    const parts: StringPart[] = [...v.parts];
    if (typeof parts[0] === 'string' || parts[0]?.wildcard !== '*') parts.unshift({ wildcard: '*' });
    const last = parts[parts.length - 1];
    if (typeof last === 'string' || last?.wildcard !== '*') parts.push({ wildcard: '*' });
    const pattern = this.pattern(parts);
    return this.searchLeaf(v.cased ? `CASE(${pattern})` : pattern);
  }
}

export function toSplunk(rule: SigmaRule, options: SplunkOptions = {}): string {
  return new SplunkBackend().convert(rule, options);
}
