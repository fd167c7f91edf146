import type { CidrValue, CompareValue, FieldRefValue, RegexValue, SigmaRule, SigmaValue, StringValue, TimePartValue } from '../model';
import { extractInlineFlags } from '../regex';
import { translateRegex } from '../regex-dialect';
import { type StringPart } from '../string';
import { PREC_AND, PREC_ATOM, QueryBackend, type ConvertOptions, type Expr, type ItemContext } from './base';

/**
 * Splunk SPL search syntax. Field values in `search` are case-insensitive with `*` wildcards, which
 * matches Sigma's default; `CASE()` gives case-sensitive matching. SPL search has no single-char
 * wildcard and no way to escape `*`, so `?` and literal stars are rejected. Regexes and field
 * references only exist as pipeline commands (`| regex`, `| where`), so they are accepted only where
 * they are AND-ed at the top of the query.
 */

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

  convert(rule: SigmaRule, options: SplunkOptions = {}): string {
    this.post = [];
    const search = this.convertCondition(rule, options) || '*';
    const head = [options.prefix, search].filter((s) => s !== undefined && s !== '').join(' ');
    return [head, ...this.post].join(' ');
  }

  protected field(name: string): string {
    return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name) ? name : `"${name.replace(/"/g, '\\"')}"`;
  }
  protected and(parts: string[]): string {
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
   */
  protected override combine(kind: 'and' | 'or', parts: Expr[]): Expr {
    const grouped = kind === 'or' && parts.length > 1 ? parts.map((p) => (p.prec === PREC_AND ? { text: this.group(p.text), prec: PREC_ATOM } : p)) : parts;
    return super.combine(kind, grouped);
  }

  private pattern(parts: readonly StringPart[], ctx: ItemContext): string {
    let out = '';
    for (const p of parts) {
      if (typeof p !== 'string') {
        if (p.wildcard === '?') this.unsupported("the single-character wildcard '?'", ctx.item.pos);
        out += '*';
      } else {
        if (p.includes('*')) this.unsupported("a literal '*' (SPL cannot escape it)", ctx.item.pos);
        out += p.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
      }
    }
    return `"${out}"`;
  }

  protected stringMatch(field: string, v: StringValue, ctx: ItemContext): string {
    const pattern = this.pattern(v.parts, ctx);
    return `${this.field(field)}=${v.cased ? `CASE(${pattern})` : pattern}`;
  }
  protected numberMatch(field: string, text: string): string {
    return `${this.field(field)}=${text}`;
  }
  protected booleanMatch(field: string, value: boolean): string {
    return `${this.field(field)}="${value}"`;
  }
  protected nullMatch(field: string): string {
    return `NOT ${this.field(field)}=*`;
  }
  private postFilter(command: string, what: string, ctx: ItemContext): string {
    if (!ctx.topLevel) this.unsupported(`${what} inside OR/NOT (only as a top-level AND filter)`, ctx.item.pos);
    this.post.push(command);
    return '';
  }
  protected regexMatch(field: string, v: RegexValue, ctx: ItemContext): string {
    const inline = extractInlineFlags(v.pattern);
    const multiline = v.multiline || inline.flags.multiline === true;
    const dotAll = v.dotAll || inline.flags.dotAll === true;
    const t = translateRegex(inline.pattern, { multiline, dotAll }, 'pcre');
    if (t.refused !== undefined) this.unsupported(`regex /${v.pattern}/: ${t.refused}`, ctx.item.pos);
    const flags = `${v.ignoreCase || inline.flags.ignoreCase ? 'i' : ''}${multiline ? 'm' : ''}${dotAll ? 's' : ''}`;
    const pattern = flags ? `(?${flags})${t.pattern!}` : t.pattern!;
    return this.postFilter(`| regex ${this.field(field)}=${quote(pattern)}`, 'a regex', ctx);
  }
  protected cidrMatch(field: string, v: CidrValue): string {
    return `${this.field(field)}=${quote(v.network)}`;
  }
  protected compareMatch(field: string, v: CompareValue): string {
    const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[v.op];
    return `${this.field(field)}${op}${v.value}`;
  }
  protected existsMatch(field: string, exists: boolean): string {
    return exists ? `${this.field(field)}=*` : `NOT ${this.field(field)}=*`;
  }
  protected fieldRefMatch(field: string, v: FieldRefValue, ctx: ItemContext): string {
    // like() would read % and _ inside the other field's value as wildcards: only equality is exact.
    if (v.match !== 'equals') this.unsupported(`fieldref with ${v.match}`, ctx.item.pos);
    const q = (f: string) => (v.cased ? `'${f}'` : `lower('${f}')`);
    return this.postFilter(`| where ${q(field)}==${q(v.field)}`, 'a field reference', ctx);
  }
  protected timePartMatch(_field: string, _v: TimePartValue, ctx: ItemContext): string {
    return this.unsupported('time-part modifiers on arbitrary fields', ctx.item.pos);
  }
  protected keywordMatch(v: SigmaValue, ctx: ItemContext): string {
    if (v.kind === 'number') return quote(v.text);
    if (v.kind === 'boolean') return quote(String(v.value));
    if (v.kind !== 'string') return this.unsupported(`keyword value of kind ${v.kind}`, ctx.item.pos);
    // Free-text terms in SPL match whole terms; the *…* makes them substring searches like Sigma keywords.
    const parts: StringPart[] = [...v.parts];
    if (typeof parts[0] === 'string' || parts[0]?.wildcard !== '*') parts.unshift({ wildcard: '*' });
    const last = parts[parts.length - 1];
    if (typeof last === 'string' || last?.wildcard !== '*') parts.push({ wildcard: '*' });
    const pattern = this.pattern(parts, ctx);
    return v.cased ? `CASE(${pattern})` : pattern;
  }
}

export function toSplunk(rule: SigmaRule, options: SplunkOptions = {}): string {
  return new SplunkBackend().convert(rule, options);
}
