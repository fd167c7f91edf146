import type { CidrValue, CompareValue, FieldRefValue, RegexValue, SigmaRule, SigmaValue, StringValue, TimePartValue } from '../model';
import { analyseRegex, extractInlineFlags, re2Incompatibility } from '../regex';
import { translateRegex } from '../regex-dialect';
import { escapeRegex } from '../string';
import { QueryBackend, shapeOf, type ConvertOptions, type ItemContext } from './base';

/**
 * Microsoft Sentinel / Defender KQL: `Table | where <expr>`. `==` is case-sensitive in KQL, so the
 * default match uses `=~`, `contains`, `startswith`, `endswith` (all case-insensitive) and the
 * `_cs` variants for `cased`. Wildcards in the middle of a value become an anchored `matches regex`.
 */

export interface KqlOptions extends ConvertOptions {
  readonly table?: string;
}

export function kqlString(text: string): string {
  // Verbatim strings keep Windows paths readable; only the quote needs doubling.
  return `@"${text.replace(/"/g, '""')}"`;
}

const TIME_PARTS: Record<TimePartValue['part'], string> = { minute: 'Minute', hour: 'Hour', day: 'Day', week: 'week_of_year', month: 'Month', year: 'Year' };
const OPS = { gt: '>', gte: '>=', lt: '<', lte: '<=', eq: '==' } as const;

export class KqlBackend extends QueryBackend {
  readonly name = 'kql';

  convert(rule: SigmaRule, options: KqlOptions = {}): string {
    const where = this.convertCondition(rule, options);
    return `${options.table ?? 'union *'} | where ${where}`;
  }

  protected override readonly notIsFunction = true;

  protected field(name: string): string {
    return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `['${name.replace(/'/g, "\\'")}']`;
  }
  protected and(parts: string[]): string {
    return parts.join(' and ');
  }
  protected or(parts: string[]): string {
    return parts.join(' or ');
  }
  protected not(part: string): string {
    return `not(${part})`;
  }
  protected stringMatch(field: string, v: StringValue): string {
    const f = this.field(field);
    const cs = v.cased ? '_cs' : '';
    const shape = shapeOf(v.parts);
    switch (shape.shape) {
      case 'equals':
        return `${f} ${v.cased ? '==' : '=~'} ${kqlString(shape.text)}`;
      case 'contains':
        return `${f} contains${cs} ${kqlString(shape.text)}`;
      case 'startswith':
        return `${f} startswith${cs} ${kqlString(shape.text)}`;
      case 'endswith':
        return `${f} endswith${cs} ${kqlString(shape.text)}`;
      case 'wildcard': {
        const body = shape.parts.map((p) => (typeof p === 'string' ? escapeRegex(p) : p.wildcard === '*' ? '.*' : '.')).join('');
        return `${f} matches regex ${kqlString(`${v.cased ? '' : '(?i)'}(?s)^${body}$`)}`;
      }
    }
  }
  protected numberMatch(field: string, text: string): string {
    return `${this.field(field)} == ${text}`;
  }
  protected booleanMatch(field: string, value: boolean): string {
    return `${this.field(field)} == ${value}`;
  }
  protected nullMatch(field: string): string {
    return `isnull(${this.field(field)})`;
  }
  protected regexMatch(field: string, v: RegexValue, ctx: ItemContext): string {
    if (analyseRegex(v.pattern).some((i) => i.code === 'lookaround' || i.code === 'backreference')) {
      this.unsupported(`regex /${v.pattern}/ (KQL uses RE2: no lookarounds or backreferences)`, ctx.item.pos);
    }
    const inline = extractInlineFlags(v.pattern);
    const multiline = v.multiline || inline.flags.multiline === true;
    const dotAll = v.dotAll || inline.flags.dotAll === true;
    const t = translateRegex(inline.pattern, { multiline, dotAll }, 're2');
    if (t.refused !== undefined) this.unsupported(`regex /${v.pattern}/: ${t.refused}`, ctx.item.pos);
    const re2 = re2Incompatibility(t.pattern!);
    if (re2) this.unsupported(`regex /${v.pattern}/ (KQL's RE2 has no ${re2})`, ctx.item.pos);
    const flags = `${v.ignoreCase || inline.flags.ignoreCase ? 'i' : ''}${multiline ? 'm' : ''}${dotAll ? 's' : ''}`;
    return `${this.field(field)} matches regex ${kqlString(flags ? `(?${flags})${t.pattern!}` : t.pattern!)}`;
  }
  protected cidrMatch(field: string, v: CidrValue): string {
    return `${v.version === 4 ? 'ipv4' : 'ipv6'}_is_in_range(${this.field(field)}, ${kqlString(v.network)})`;
  }
  protected compareMatch(field: string, v: CompareValue): string {
    return `${this.field(field)} ${OPS[v.op]} ${v.value}`;
  }
  protected existsMatch(field: string, exists: boolean): string {
    return `${exists ? 'isnotnull' : 'isnull'}(${this.field(field)})`;
  }
  protected fieldRefMatch(field: string, v: FieldRefValue): string {
    const [a, b] = [this.field(field), this.field(v.field)];
    const w = (x: string) => (v.cased ? x : `tolower(${x})`);
    switch (v.match) {
      case 'equals':
        return v.cased ? `${a} == ${b}` : `${a} =~ ${b}`;
      case 'contains':
        return `indexof(${w(a)}, ${w(b)}) >= 0`;
      case 'startswith':
        return `indexof(${w(a)}, ${w(b)}) == 0`;
      case 'endswith':
        return `(strlen(${a}) >= strlen(${b}) and substring(${w(a)}, strlen(${a}) - strlen(${b})) == ${w(b)})`;
    }
  }
  protected timePartMatch(field: string, v: TimePartValue): string {
    const part = TIME_PARTS[v.part];
    const expr = v.part === 'week' ? `week_of_year(${this.field(field)})` : `datetime_part("${part}", ${this.field(field)})`;
    return `${expr} ${OPS[v.op]} ${v.value}`;
  }
  protected keywordMatch(v: SigmaValue, ctx: ItemContext): string {
    if (v.kind !== 'string') return this.unsupported(`keyword value of kind ${v.kind}`, ctx.item.pos);
    const shape = shapeOf(v.parts);
    if (shape.shape === 'wildcard') {
      // `* matches regex` tests every column, as the search operator's own `"Lab*PC"` does; a
      // keyword is a substring, so the pattern is unanchored.
      const body = shape.parts.map((p) => (typeof p === 'string' ? escapeRegex(p) : p.wildcard === '*' ? '.*' : '.')).join('');
      return `* matches regex ${kqlString(`${v.cased ? '' : '(?i)'}(?s)${body}`)}`;
    }
    return `* contains${v.cased ? '_cs' : ''} ${kqlString(shape.text)}`;
  }
}

export function toKql(rule: SigmaRule, options: KqlOptions = {}): string {
  return new KqlBackend().convert(rule, options);
}
