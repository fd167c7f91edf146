import type { CidrValue, CompareValue, FieldRefValue, RegexValue, SigmaRule, SigmaValue, StringValue, TimePartValue } from '../model';
import { analyseRegex, extractInlineFlags } from '../regex';
import type { StringPart } from '../string';
import { QueryBackend, shapeOf, type ConvertOptions, type ItemContext } from './base';

/**
 * Elasticsearch ES|QL: `FROM <index> | WHERE <expr>`. Case-insensitivity is exact through
 * TO_LOWER(); LIKE takes `*`/`?` wildcards. RLIKE uses Lucene regular expressions, which are
 * anchored and lack \d, \s, flags and lookarounds: only patterns that translate exactly are accepted.
 */

export interface EsqlOptions extends ConvertOptions {
  readonly index?: string;
}

export function esqlString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

/** ES|QL LIKE pattern: `*` any, `?` one; `\` escapes. */
function esqlLike(parts: readonly StringPart[], lower: boolean): string {
  return parts.map((p) => (typeof p === 'string' ? (lower ? p.toLowerCase() : p).replace(/[\\*?]/g, (m) => `\\${m}`) : p.wildcard)).join('');
}

/**
 * Lucene's RegExp has no character escapes: `\n` is the letter n. Control characters are written
 * as themselves, and `\s` is RE2's set (Java's would add \v). Lucene 9 reads `\d`/`\w` itself,
 * but spelled out the pattern also runs on older clusters.
 */
const CLASS_ESCAPES: Record<string, string> = { d: '0-9', w: 'A-Za-z0-9_', s: ' \t\n\f\r' };
const CHAR_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', e: '\x1b' };
/** The negated escapes, as negated classes (only outside a class: Lucene cannot subtract inside one). */
const NEGATED_ESCAPES: Record<string, string> = { D: '0-9', W: 'A-Za-z0-9_', S: ' \t\n\f\r' };

/** How a pattern is read: `fold` for the `i` flag over a TO_LOWER()-ed value, `dotAll` for `s`. */
export interface LuceneRegexOptions {
  readonly fold?: boolean;
  readonly dotAll?: boolean;
}

/** `(a|b)` or `(?:a|b)` spanning the whole pattern → `a|b`, so each alternative keeps its own anchors. */
function unwrapWholeGroup(pattern: string): string {
  if (!pattern.startsWith('(') || (pattern[1] === '?' && pattern[2] !== ':')) return pattern;
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') i++;
    else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) {
      if (i !== pattern.length - 1) return pattern;
      return unwrapWholeGroup(pattern.slice(pattern[1] === '?' ? 3 : 1, -1));
    }
  }
  return pattern;
}

const isUpperAscii = (c: string): boolean => c >= 'A' && c <= 'Z';

/** Top-level alternatives of a pattern (outside groups and classes). */
function topLevelBranches(pattern: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') i++;
    else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++;
    } else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) {
      out.push(pattern.slice(start, i));
      start = i + 1;
    }
  }
  out.push(pattern.slice(start));
  return out;
}

/** One branch (no top-level `|`) → Lucene regex matching the whole value, or undefined. */
function luceneBranch(pattern: string, options: LuceneRegexOptions = {}): { pattern?: string; refused?: string } {
  const no = (refused: string) => ({ refused });
  const fold = options.fold === true;
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const n = pattern[i + 1];
      i++;
      if (n === undefined) return no('a trailing backslash');
      if (n in CLASS_ESCAPES) out += inClass ? CLASS_ESCAPES[n] : `[${CLASS_ESCAPES[n]}]`;
      else if (n in CHAR_ESCAPES) out += CHAR_ESCAPES[n];
      else if (n in NEGATED_ESCAPES) {
        if (inClass) return no(`the escape \\${n} inside a character class`);
        out += `[^${NEGATED_ESCAPES[n]}]`;
      }
      // Anchors, \Q…\E, \h, \x.., backreferences, Unicode classes: no Lucene form.
      else if (/[A-Za-z0-9]/.test(n)) return no(`the escape \\${n}`);
      else out += `\\${n}`;
      continue;
    }
    if (inClass) {
      if (c === '[') return no(pattern[i + 1] === ':' ? 'POSIX classes ([[:name:]])' : "a '[' inside a character class");
      if (c === ']') inClass = false;
      if (fold && c === '-' && pattern[i - 1] !== '[' && pattern[i + 1] !== ']') {
        // The value is lower-cased: a range must hold the lower-case form of every capital it holds.
        const lo = pattern[i - 1]!;
        const hi = pattern[i + 1]!;
        const touchesCapitals = lo <= 'Z' && hi >= 'A';
        const capitalsOnly = isUpperAscii(lo) && isUpperAscii(hi);
        const coversBoth = lo <= 'A' && hi >= 'z';
        if (pattern[i - 2] === '\\' || pattern[i + 1] === '\\' || lo > '\x7f' || hi > '\x7f' || (touchesCapitals && !capitalsOnly && !coversBoth))
          return no(`the range ${lo}-${hi} under the i flag`);
      }
      out += fold ? c.toLowerCase() : c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (pattern[i + 1] === '^') out += pattern[++i];
      if (pattern[i + 1] === ']') return no("a ']' first in a character class");
      continue;
    }
    // Lucene's `.` is any character; RE2's (the local target's) stops at a newline.
    if (c === '.') {
      out += options.dotAll ? '.' : '[^\n]';
      continue;
    }
    // Lucene treats these as operators; PCRE treats them as literals.
    if (c === '@' || c === '&' || c === '~' || c === '<' || c === '>' || c === '#' || c === '"') {
      out += `\\${c}`;
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      if (pattern[i + 2] === ':') {
        out += '(';
        i += 2;
        continue;
      }
      return no(`the group construct (?${pattern[i + 2] ?? ''}`);
    }
    if (c === '^' && i !== 0) return no("'^' inside the pattern (Lucene regexes are anchored as a whole)");
    if (c === '$' && i !== pattern.length - 1) return no("'$' inside the pattern (Lucene regexes are anchored as a whole)");
    out += fold ? c.toLowerCase() : c;
  }
  const anchoredStart = out.startsWith('^');
  const anchoredEnd = out.endsWith('$') && !out.endsWith('\\$');
  if (anchoredStart) out = out.slice(1);
  if (anchoredEnd) out = out.slice(0, -1);
  if (!anchoredStart || !anchoredEnd) out = `(${out})`;
  return { pattern: `${anchoredStart ? '' : '.*'}${out}${anchoredEnd ? '' : '.*'}` };
}

/**
 * PCRE-subset search pattern → Lucene regex over the whole value, or undefined when not exact.
 * Each top-level alternative keeps its own anchors: `^cmd|ps$` is `cmd.*|.*ps`.
 */
export function toLuceneRegex(pattern: string): string | undefined {
  return luceneRegex(pattern).pattern;
}

/** The Lucene regex, or the construct Lucene has no exact form for. */
export function luceneRegex(pattern: string, options: LuceneRegexOptions = {}): { pattern?: string; refused?: string } {
  const branches = topLevelBranches(unwrapWholeGroup(pattern)).map((b) => luceneBranch(b, options));
  const refused = branches.find((b) => b.refused !== undefined);
  if (refused) return refused;
  return { pattern: branches.map((b) => b.pattern).join('|') };
}

const DATE_PARTS: Partial<Record<TimePartValue['part'], string>> = {
  minute: 'minute_of_hour',
  hour: 'hour_of_day',
  day: 'day_of_month',
  month: 'month_of_year',
  year: 'year',
};
const OPS = { gt: '>', gte: '>=', lt: '<', lte: '<=', eq: '==' } as const;

export class EsqlBackend extends QueryBackend {
  readonly name = 'esql';

  convert(rule: SigmaRule, options: EsqlOptions = {}): string {
    return `FROM ${options.index ?? 'logs-*'} | WHERE ${this.convertCondition(rule, options)}`;
  }

  protected override readonly notIsFunction = true;

  protected field(name: string): string {
    return /^[A-Za-z_@][A-Za-z0-9_.@]*$/.test(name) ? name : `\`${name.replace(/`/g, '``')}\``;
  }
  protected and(parts: string[]): string {
    return parts.join(' AND ');
  }
  protected or(parts: string[]): string {
    return parts.join(' OR ');
  }
  protected not(part: string): string {
    // Three-valued logic would drop events lacking the field; the evaluator keeps them.
    return `NOT COALESCE(${part}, false)`;
  }
  protected stringMatch(field: string, v: StringValue): string {
    const f = v.cased ? this.field(field) : `TO_LOWER(${this.field(field)})`;
    const shape = shapeOf(v.parts);
    if (shape.shape === 'equals') return `${f} == ${esqlString(v.cased ? shape.text : shape.text.toLowerCase())}`;
    return `${f} LIKE ${esqlString(esqlLike(v.parts, !v.cased))}`;
  }
  protected numberMatch(field: string, text: string): string {
    return `${this.field(field)} == ${text}`;
  }
  protected booleanMatch(field: string, value: boolean): string {
    return `${this.field(field)} == ${value}`;
  }
  protected nullMatch(field: string): string {
    return `${this.field(field)} IS NULL`;
  }
  protected regexMatch(field: string, v: RegexValue, ctx: ItemContext): string {
    const inline = extractInlineFlags(v.pattern);
    const fold = v.ignoreCase || inline.flags.ignoreCase === true;
    const dotAll = v.dotAll || inline.flags.dotAll === true;
    // `m` only changes what ^ and $ mean; a pattern without them means the same under it.
    if ((v.multiline || inline.flags.multiline === true) && /[\^$]/.test(inline.pattern)) {
      this.unsupported(`the m flag with ^ or $ on /${v.pattern}/ (RLIKE is anchored at the whole value)`, ctx.item.pos);
    }
    if (analyseRegex(v.pattern).some((i) => i.code === 'lookaround' || i.code === 'backreference')) this.unsupported(`regex /${v.pattern}/`, ctx.item.pos);
    // RLIKE has no flags: `i` is a lower-cased pattern over TO_LOWER(field), as LIKE does for strings.
    const lucene = luceneRegex(inline.pattern, { fold, dotAll });
    if (lucene.pattern === undefined) this.unsupported(`regex /${v.pattern}/ in Lucene regex syntax (RLIKE): ${lucene.refused}`, ctx.item.pos);
    return `${fold ? `TO_LOWER(${this.field(field)})` : this.field(field)} RLIKE ${esqlString(lucene.pattern!)}`;
  }
  protected cidrMatch(field: string, v: CidrValue): string {
    return `CIDR_MATCH(${this.field(field)}, ${esqlString(v.network)})`;
  }
  protected compareMatch(field: string, v: CompareValue): string {
    return `${this.field(field)} ${OPS[v.op]} ${v.value}`;
  }
  protected existsMatch(field: string, exists: boolean): string {
    return `${this.field(field)} IS ${exists ? 'NOT ' : ''}NULL`;
  }
  protected fieldRefMatch(field: string, v: FieldRefValue): string {
    const w = (x: string) => (v.cased ? x : `TO_LOWER(${x})`);
    const [a, b] = [w(this.field(field)), w(this.field(v.field))];
    switch (v.match) {
      case 'equals':
        return `${a} == ${b}`;
      case 'contains':
        return `LOCATE(${a}, ${b}) > 0`;
      case 'startswith':
        return `STARTS_WITH(${a}, ${b})`;
      case 'endswith':
        return `ENDS_WITH(${a}, ${b})`;
    }
  }
  protected timePartMatch(field: string, v: TimePartValue, ctx: ItemContext): string {
    const part = DATE_PARTS[v.part];
    if (!part) return this.unsupported(`the '${v.part}' modifier (no ISO week in DATE_EXTRACT)`, ctx.item.pos);
    return `DATE_EXTRACT(${esqlString(part)}, ${this.field(field)}) ${OPS[v.op]} ${v.value}`;
  }
  protected keywordMatch(_v: SigmaValue, ctx: ItemContext): string {
    return this.unsupported('keyword (field-less) search', ctx.item.pos);
  }
}

export function toEsql(rule: SigmaRule, options: EsqlOptions = {}): string {
  return new EsqlBackend().convert(rule, options);
}
