import type { CidrValue, CompareValue, FieldRefValue, RegexValue, SigmaRule, SigmaValue, StringValue, TimePartValue } from '../model';
import { analyseRegex, extractInlineFlags } from '../regex';
import { ANY, endsWithAny, normaliseParts, startsWithAny, type StringPart } from '../string';
import { QueryBackend, ipv4Prefixes, shapeOf, type ConvertOptions, type ItemContext } from './base';

/**
 * DuckDB SQL. Fields come from a caller-supplied expression builder, by default
 * `json_extract_string(raw, '$."Field"')` over a `raw JSON` column (dotted names also try the nested
 * path). Semantics follow the local evaluator: case-insensitive strings via lower()/ILIKE, numbers
 * compared numerically, and NOT treats a missing field as "does not match" (coalesce to false),
 * so `not filter` keeps events that lack the filtered field, like SPL/KQL do.
 */

export interface SqlOptions extends ConvertOptions {
  /** Sigma field name → SQL expression yielding the value as text (or NULL when absent). */
  readonly fieldExpression?: (field: string) => string;
  /** SQL expression that is true when the field is present, even with a JSON null value. */
  readonly existsExpression?: (field: string) => string;
  /** Boolean SQL for a keyword search (pattern is an ILIKE pattern); default scans every JSON leaf of `raw`. */
  readonly keywordExpression?: (likePattern: string) => string;
  readonly table?: string;
}

export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function jsonPath(field: string): string {
  return `'$."${field.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/'/g, "''")}"'`;
}

export function defaultFieldExpression(field: string): string {
  const flat = `json_extract_string(raw, ${jsonPath(field)})`;
  if (!field.includes('.')) return flat;
  const nested = `json_extract_string(raw, '$.${field.split('.').map((s) => `"${s.replace(/"/g, '\\"').replace(/'/g, "''")}"`).join('.')}')`;
  return `coalesce(${flat}, ${nested})`;
}

function defaultExists(field: string): string {
  if (!field.includes('.')) return `json_exists(raw, ${jsonPath(field)})`;
  const nested = `'$.${field.split('.').map((s) => `"${s.replace(/"/g, '\\"').replace(/'/g, "''")}"`).join('.')}'`;
  return `(json_exists(raw, ${jsonPath(field)}) OR json_exists(raw, ${nested}))`;
}

/** Sigma wildcard parts → LIKE pattern with `\` as the escape character. */
export function likePattern(parts: readonly StringPart[]): string {
  return parts
    .map((p) => (typeof p === 'string' ? p.replace(/[\\%_]/g, (m) => `\\${m}`) : p.wildcard === '*' ? '%' : '_'))
    .join('');
}

const TIME_PARTS: Record<TimePartValue['part'], string> = { minute: 'minute', hour: 'hour', day: 'day', week: 'week', month: 'month', year: 'year' };
const OPS: Record<CompareValue['op'] | 'eq', string> = { gt: '>', gte: '>=', lt: '<', lte: '<=', eq: '=' };

export class SqlBackend extends QueryBackend {
  readonly name = 'duckdb-sql';
  private sql: SqlOptions = {};

  convert(rule: SigmaRule, options: SqlOptions = {}): string {
    this.sql = options;
    const where = this.convertCondition(rule, options);
    return `SELECT * FROM ${options.table ?? 'events'} WHERE ${where}`;
  }

  /** Just the boolean expression, for callers composing their own SELECT. */
  where(rule: SigmaRule, options: SqlOptions = {}): string {
    this.sql = options;
    return this.convertCondition(rule, options);
  }

  protected override readonly notIsFunction = true;

  protected field(name: string): string {
    return (this.sql.fieldExpression ?? defaultFieldExpression)(name);
  }
  protected and(parts: string[]): string {
    return parts.join(' AND ');
  }
  protected or(parts: string[]): string {
    return parts.join(' OR ');
  }
  protected not(part: string): string {
    return `NOT coalesce(${part}, false)`;
  }

  protected stringMatch(field: string, v: StringValue): string {
    const f = this.field(field);
    const shape = shapeOf(v.parts);
    if (v.cased) {
      switch (shape.shape) {
        case 'equals':
          return `${f} = ${sqlString(shape.text)}`;
        case 'contains':
          return `contains(${f}, ${sqlString(shape.text)})`;
        case 'startswith':
          return `starts_with(${f}, ${sqlString(shape.text)})`;
        case 'endswith':
          return `ends_with(${f}, ${sqlString(shape.text)})`;
        case 'wildcard':
          return `${f} LIKE ${sqlString(likePattern(shape.parts))} ESCAPE '\\'`;
      }
    }
    if (shape.shape === 'equals') return `lower(${f}) = ${sqlString(shape.text.toLowerCase())}`;
    return `${f} ILIKE ${sqlString(likePattern(v.parts))} ESCAPE '\\'`;
  }
  protected numberMatch(field: string, value: number): string {
    return `TRY_CAST(${this.field(field)} AS DOUBLE) = ${value}`;
  }
  protected booleanMatch(field: string, value: boolean): string {
    return `lower(${this.field(field)}) = '${value}'`;
  }
  protected nullMatch(field: string): string {
    return `${this.field(field)} IS NULL`;
  }
  protected regexMatch(field: string, v: RegexValue, ctx: ItemContext): string {
    const issues = analyseRegex(v.pattern).filter((i) => i.code === 'lookaround' || i.code === 'backreference');
    if (issues.length > 0) this.unsupported(`regex /${v.pattern}/ (${issues[0]!.message}; DuckDB uses RE2)`, ctx.item.pos);
    const inline = extractInlineFlags(v.pattern);
    let flags = '';
    if (v.ignoreCase || inline.flags.ignoreCase) flags += 'i';
    if (v.multiline || inline.flags.multiline) flags += 'm';
    if (v.dotAll || inline.flags.dotAll) flags += 's';
    const pattern = flags ? `(?${flags})${inline.pattern}` : inline.pattern;
    return `regexp_matches(${this.field(field)}, ${sqlString(pattern)})`;
  }
  protected cidrMatch(field: string, v: CidrValue, ctx: ItemContext): string {
    if (v.version === 6 || v.prefix === 0) this.unsupported(`cidr ${v.network} (only IPv4 networks with a prefix ≥ 1 expand to text prefixes)`, ctx.item.pos);
    const f = this.field(field);
    const parts = ipv4Prefixes(v).map((p) => (p.endsWith('.') ? `starts_with(${f}, ${sqlString(p)})` : `${f} = ${sqlString(p)}`));
    return parts.length === 1 ? parts[0]! : `(${parts.join(' OR ')})`;
  }
  protected compareMatch(field: string, v: CompareValue): string {
    return `TRY_CAST(${this.field(field)} AS DOUBLE) ${OPS[v.op]} ${v.value}`;
  }
  protected existsMatch(field: string, exists: boolean): string {
    const e = (this.sql.existsExpression ?? (this.sql.fieldExpression ? (f: string) => `${this.field(f)} IS NOT NULL` : defaultExists))(field);
    return exists ? e : `NOT ${e}`;
  }
  protected fieldRefMatch(field: string, v: FieldRefValue): string {
    const wrap = (x: string) => (v.cased ? x : `lower(${x})`);
    const a = wrap(this.field(field));
    const b = wrap(this.field(v.field));
    switch (v.match) {
      case 'equals':
        return `${a} = ${b}`;
      case 'contains':
        return `contains(${a}, ${b})`;
      case 'startswith':
        return `starts_with(${a}, ${b})`;
      case 'endswith':
        return `ends_with(${a}, ${b})`;
    }
  }
  protected timePartMatch(field: string, v: TimePartValue): string {
    return `date_part('${TIME_PARTS[v.part]}', TRY_CAST(${this.field(field)} AS TIMESTAMP)) ${OPS[v.op]} ${v.value}`;
  }
  protected keywordMatch(v: SigmaValue, ctx: ItemContext): string {
    let parts: StringPart[];
    if (v.kind === 'string') parts = [...v.parts];
    else if (v.kind === 'number' || v.kind === 'boolean') parts = [String(v.value)];
    else return this.unsupported(`keyword value of kind ${v.kind}`, ctx.item.pos);
    if (!startsWithAny(parts)) parts.unshift(ANY);
    if (!endsWithAny(parts)) parts.push(ANY);
    const pattern = sqlString(likePattern(normaliseParts(parts)));
    if (this.sql.keywordExpression) return this.sql.keywordExpression(pattern);
    const op = v.kind === 'string' && v.cased ? 'LIKE' : 'ILIKE';
    return `EXISTS (SELECT 1 FROM json_tree(raw) AS kw WHERE kw.atom IS NOT NULL AND (kw.atom ->> '$') ${op} ${pattern} ESCAPE '\\')`;
  }
}

export function toDuckDbSql(rule: SigmaRule, options: SqlOptions = {}): string {
  return new SqlBackend().convert(rule, options);
}
