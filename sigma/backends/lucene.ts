import type { CidrValue, CompareValue, FieldRefValue, RegexValue, SigmaRule, SigmaValue, StringValue, TimePartValue } from '../model';
import { analyseRegex, extractInlineFlags } from '../regex';
import type { StringPart } from '../string';
import { QueryBackend, type ConvertOptions, type ItemContext } from './base';
import { luceneRegex } from './esql';

/**
 * Elasticsearch Lucene query-string syntax. Lucene term and wildcard queries are as case-sensitive
 * as the field's index: by default this backend emits lower-cased values and therefore requires
 * fields indexed with a lowercase normalizer (ECS `wildcard`/`keyword` with normalizer, or `.text`
 * sub-fields). Pass `caseSensitiveIndex: true` to get character-class patterns that are exact on
 * case-preserving keyword fields instead.
 */

export interface LuceneOptions extends ConvertOptions {
  readonly caseSensitiveIndex?: boolean;
}

const SPECIAL = /[+\-=&|><!(){}[\]^"~*?:\\/ ]/g;

export class LuceneBackend extends QueryBackend {
  readonly name = 'lucene';
  private caseSensitiveIndex = false;

  convert(rule: SigmaRule, options: LuceneOptions = {}): string {
    this.caseSensitiveIndex = options.caseSensitiveIndex === true;
    return this.convertCondition(rule, options);
  }

  protected field(name: string): string {
    return name.replace(SPECIAL, (m) => `\\${m}`);
  }
  protected and(parts: string[]): string {
    return parts.join(' AND ');
  }
  protected or(parts: string[]): string {
    return parts.join(' OR ');
  }
  protected not(part: string): string {
    return `NOT ${part}`;
  }

  private caseInsensitiveRegex(parts: readonly StringPart[]): string {
    let out = '';
    for (const p of parts) {
      if (typeof p !== 'string') {
        out += p.wildcard === '*' ? '.*' : '.';
        continue;
      }
      for (const ch of p) {
        const lo = ch.toLowerCase();
        const up = ch.toUpperCase();
        if (lo !== up && lo.length === 1 && up.length === 1) out += `[${lo}${up}]`;
        else out += /[.?+*|{}[\]()"\\#@&<>~]/.test(ch) ? `\\${ch}` : ch;
      }
    }
    return `/${out.replace(/\//g, '\\/')}/`;
  }

  protected stringMatch(field: string, v: StringValue): string {
    const f = this.field(field);
    const hasLetters = v.parts.some((p) => typeof p === 'string' && p.toLowerCase() !== p.toUpperCase());
    if (!v.cased && this.caseSensitiveIndex && hasLetters) return `${f}:${this.caseInsensitiveRegex(v.parts)}`;
    const lower = !v.cased && !this.caseSensitiveIndex;
    const text = v.parts.map((p) => (typeof p === 'string' ? (lower ? p.toLowerCase() : p).replace(SPECIAL, (m) => `\\${m}`) : p.wildcard)).join('');
    return `${f}:${text === '' ? '""' : text}`;
  }
  protected numberMatch(field: string, text: string): string {
    return `${this.field(field)}:${text.replace(SPECIAL, (m) => `\\${m}`)}`;
  }
  protected booleanMatch(field: string, value: boolean): string {
    return `${this.field(field)}:${value}`;
  }
  protected nullMatch(field: string): string {
    return `NOT _exists_:${this.field(field)}`;
  }
  protected regexMatch(field: string, v: RegexValue, ctx: ItemContext): string {
    const inline = extractInlineFlags(v.pattern);
    const fold = v.ignoreCase || inline.flags.ignoreCase === true;
    // On a lowercase-normalised index the `i` flag is a lower-cased pattern; on a case-preserving one it has no form.
    if (fold && this.caseSensitiveIndex) this.unsupported(`the i flag on /${v.pattern}/ over a case-preserving index`, ctx.item.pos);
    if ((v.multiline || inline.flags.multiline === true) && /[\^$]/.test(inline.pattern)) this.unsupported(`the m flag with ^ or $ on /${v.pattern}/`, ctx.item.pos);
    if (analyseRegex(v.pattern).some((i) => i.code === 'lookaround' || i.code === 'backreference')) this.unsupported(`regex /${v.pattern}/`, ctx.item.pos);
    const lucene = luceneRegex(inline.pattern, { fold, dotAll: v.dotAll || inline.flags.dotAll === true });
    if (lucene.pattern === undefined) this.unsupported(`regex /${v.pattern}/ in Lucene regex syntax: ${lucene.refused}`, ctx.item.pos);
    return `${this.field(field)}:/${lucene.pattern!.replace(/\//g, '\\/')}/`;
  }
  protected cidrMatch(field: string, v: CidrValue): string {
    return `${this.field(field)}:${v.network.replace(SPECIAL, (m) => `\\${m}`)}`;
  }
  protected compareMatch(field: string, v: CompareValue): string {
    const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[v.op];
    return `${this.field(field)}:${op}${v.value}`;
  }
  protected existsMatch(field: string, exists: boolean): string {
    return `${exists ? '' : 'NOT '}_exists_:${this.field(field)}`;
  }
  protected fieldRefMatch(_field: string, _v: FieldRefValue, ctx: ItemContext): string {
    return this.unsupported('field references (query strings cannot compare two fields)', ctx.item.pos);
  }
  protected timePartMatch(_field: string, _v: TimePartValue, ctx: ItemContext): string {
    return this.unsupported('time-part modifiers', ctx.item.pos);
  }
  protected keywordMatch(v: SigmaValue, ctx: ItemContext): string {
    if (v.kind !== 'string') return this.unsupported(`keyword value of kind ${v.kind}`, ctx.item.pos);
    // Default-field search over analysed text; wildcards turn it into a substring search.
    const text = v.parts.map((p) => (typeof p === 'string' ? p.toLowerCase().replace(SPECIAL, (m) => `\\${m}`) : p.wildcard)).join('');
    return `*${text.replace(/^\*|\*$/g, '')}*`;
  }
}

export function toLucene(rule: SigmaRule, options: LuceneOptions = {}): string {
  return new LuceneBackend().convert(rule, options);
}
