import type { CidrValue, CompareValue, FieldRefValue, RegexValue, SigmaRule, SigmaValue, StringValue, TimePartValue } from '../model';
import { analyseRegex, extractInlineFlags, re2Incompatibility } from '../regex';
import { DECIMAL_NUMBER } from '../number-text';
import { translateRegex } from '../regex-dialect';
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
  const nested = `json_extract_string(raw, '$.${field
    .split('.')
    .map((s) => `"${s.replace(/"/g, '\\"').replace(/'/g, "''")}"`)
    .join('.')}')`;
  return `coalesce(${flat}, ${nested})`;
}

function defaultExists(field: string): string {
  if (!field.includes('.')) return `json_exists(raw, ${jsonPath(field)})`;
  const nested = `'$.${field
    .split('.')
    .map((s) => `"${s.replace(/"/g, '\\"').replace(/'/g, "''")}"`)
    .join('.')}'`;
  return `(json_exists(raw, ${jsonPath(field)}) OR json_exists(raw, ${nested}))`;
}

/** Sigma wildcard parts → LIKE pattern with `\` as the escape character. */
export function likePattern(parts: readonly StringPart[]): string {
  return parts.map((p) => (typeof p === 'string' ? p.replace(/[\\%_]/g, (m) => `\\${m}`) : p.wildcard === '*' ? '%' : '_')).join('');
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
  /** Decimal text, digit for digit (number-text.ts): a JSON number reads as its digits. */
  protected numberMatch(field: string, text: string): string {
    return `${this.field(field)} = ${sqlString(text)}`;
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
    const multiline = v.multiline || inline.flags.multiline === true;
    const dotAll = v.dotAll || inline.flags.dotAll === true;
    // The local target's alerts are predicted by the evaluator: both must read the pattern alike.
    for (const dialect of ['re2', 'v8'] as const) {
      const t = translateRegex(inline.pattern, { multiline, dotAll }, dialect);
      if (t.refused !== undefined) this.unsupported(`regex /${v.pattern}/: ${t.refused}`, ctx.item.pos);
    }
    const translated = translateRegex(inline.pattern, { multiline, dotAll }, 're2').pattern!;
    const re2 = re2Incompatibility(translated);
    if (re2) this.unsupported(`regex /${v.pattern}/ (DuckDB's RE2 has no ${re2})`, ctx.item.pos);
    const flags = `${v.ignoreCase || inline.flags.ignoreCase ? 'i' : ''}${multiline ? 'm' : ''}${dotAll ? 's' : ''}`;
    const pattern = flags ? `(?${flags})${translated}` : translated;
    return `regexp_matches(${this.field(field)}, ${sqlString(pattern)})`;
  }
  protected cidrMatch(field: string, v: CidrValue, ctx: ItemContext): string {
    if (v.version === 6) return ipv6CidrMatch(this.field(field), v);
    if (v.prefix === 0) this.unsupported(`cidr ${v.network} (IPv4 networks need a prefix ≥ 1 to expand to text prefixes)`, ctx.item.pos);
    // The whole text must be an IPv4 address as net.ts parses it (trimmed, no leading zeros), so a
    // prefix test alone would take "10.01.2.3" or "10.x".
    const prefixes = ipv4Prefixes(v);
    const rest = 4 - prefixes[0]!.split('.').filter((o) => o !== '').length;
    const alternatives = prefixes.map((p) => p.replace(/\./g, '\\.')).join('|');
    const tail = rest === 0 ? '' : `${IPV4_OCTET}(\\.${IPV4_OCTET}){${rest - 1}}`;
    return `regexp_full_match(${this.field(field)}, ${sqlString(`${JS_TRIM_CLASS}*(${alternatives})${tail}${JS_TRIM_CLASS}*`)})`;
  }
  protected compareMatch(field: string, v: CompareValue): string {
    const f = this.field(field);
    return `CASE WHEN regexp_full_match(${f}, '${DECIMAL_NUMBER}') THEN TRY_CAST(${f} AS DOUBLE) END ${OPS[v.op]} ${v.value}`;
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
    else if (v.kind === 'number') parts = [v.text];
    else if (v.kind === 'boolean') parts = [String(v.value)];
    else return this.unsupported(`keyword value of kind ${v.kind}`, ctx.item.pos);
    if (!startsWithAny(parts)) parts.unshift(ANY);
    if (!endsWithAny(parts)) parts.push(ANY);
    const pattern = sqlString(likePattern(normaliseParts(parts)));
    if (this.sql.keywordExpression) return this.sql.keywordExpression(pattern);
    const op = v.kind === 'string' && v.cased ? 'LIKE' : 'ILIKE';
    return `EXISTS (SELECT 1 FROM json_tree(raw) AS kw WHERE kw.atom IS NOT NULL AND (kw.atom ->> '$') ${op} ${pattern} ESCAPE '\\')`;
  }
}

/** JavaScript's String.prototype.trim() whitespace, as an RE2 class: the evaluator trims with it. */
const JS_TRIM_CLASS = '[\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}]';

/** An IPv4 octet as net.ts reads it: 0–255 without leading zeros. */
const IPV4_OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';

/** One 1–4 digit hex group; IPv6 text is case-insensitive. */
const HEXTET = '[0-9a-fA-F]{1,4}';

/**
 * The textual IPv6 grammar net.ts's parseIpv6 accepts once an IPv4 tail is rewritten as two
 * hextets: eight groups, or at most seven around a single `::`. Each alternative fixes how many
 * groups sit left of the `::`, which is what keeps `1::2::3` and `1:2:3:4::5:6:7:8` out.
 */
const IPV6_GRAMMAR = [
  `(${HEXTET}:){7}${HEXTET}`,
  `(${HEXTET}:){1,7}:`,
  `(${HEXTET}:){1,6}:${HEXTET}`,
  `(${HEXTET}:){1,5}(:${HEXTET}){1,2}`,
  `(${HEXTET}:){1,4}(:${HEXTET}){1,3}`,
  `(${HEXTET}:){1,3}(:${HEXTET}){1,4}`,
  `(${HEXTET}:){1,2}(:${HEXTET}){1,5}`,
  `${HEXTET}:(:${HEXTET}){1,6}`,
  `:((:${HEXTET}){1,7}|:)`,
].join('|');

/**
 * SQL for the address in `text` as 32 lowercase hex digits, NULL when `text` is not an IPv6
 * address by the rules of the local evaluator (sigma/net.ts parseIp), so DuckDB needs no `inet`
 * extension and the SQL runs on any connection. Three steps, each a one-element list_transform so
 * that its input is computed once and named (DuckDB has no LET; repeating the field expression
 * would re-read the JSON for every use):
 *  1. `ip6_text`: trimmed like JS trim(), zone id (`%eth0`) dropped;
 *  2. `ip6_tail`: an IPv4 tail (`::ffff:10.1.2.3`) becomes two hex groups (`::ffff:a01:203`);
 *     octets above 255 or longer than three digits make the whole address NULL, as in parseIpv4;
 *  3. `ip6_hex`: text outside IPV6_GRAMMAR is NULL; otherwise `::` becomes the missing `0:`
 *     groups (counted from the hex groups present), every group is left-padded to four digits
 *     (prefix each with `000`, keep the last four) and the colons go.
 */
export function ipv6HexExpression(text: string): string {
  const named = (value: string, name: string, body: string) => `list_transform([${value}], lambda ${name}: ${body})[1]`;
  const cleaned = `regexp_replace(regexp_replace(${text}, '^${JS_TRIM_CLASS}+|${JS_TRIM_CLASS}+$', '', 'g'), '%[^\\n\\r\\x{2028}\\x{2029}]*$', '')`;
  const tail = `regexp_extract(ip6_text, '^(.*:)(\\d+)\\.(\\d+)\\.(\\d+)\\.(\\d+)$', ['head', 'o1', 'o2', 'o3', 'o4'])`;
  const octet = (k: number) => `TRY_CAST(ip6_tail.o${k} AS INTEGER)`;
  const octetsValid = [1, 2, 3, 4]
    .map((k) => `length(ip6_tail.o${k}) <= 3 AND ${octet(k)} <= 255 AND NOT (length(ip6_tail.o${k}) > 1 AND starts_with(ip6_tail.o${k}, '0'))`)
    .join(' AND ');
  const withoutTail = `CASE WHEN ip6_tail.head = '' THEN ip6_text WHEN ${octetsValid} THEN ip6_tail.head || printf('%x:%x', ${octet(1)} * 256 + ${octet(2)}, ${octet(3)} * 256 + ${octet(4)}) END`;
  const groups = `len(regexp_extract_all(ip6_hex, '[0-9a-fA-F]+'))`;
  const expanded = `trim(replace(ip6_hex, '::', ':' || repeat('0:', 8 - ${groups})), ':')`;
  const padded = `regexp_replace(regexp_replace(':' || ${expanded}, ':', ':000', 'g'), ':0*([0-9a-fA-F]{4})', '\\1', 'g')`;
  const hex = `CASE WHEN regexp_full_match(ip6_hex, ${sqlString(IPV6_GRAMMAR)}) THEN lower(${padded}) END`;
  return named(cleaned, 'ip6_text', named(tail, 'ip6_tail', named(withoutTail, 'ip6_hex', hex)));
}

/**
 * IPv6 `cidr`: the first `prefix` bits of the address equal the network's. On the 32-digit hex
 * form that is a fixed run of whole nibbles plus, when the prefix is not a multiple of 4, one
 * nibble whose high bits are fixed, i.e. a small set of digits: fe80::/10 → `^fe[89ab]`.
 * IPv4 text never matches (it is NULL in ipv6HexExpression), as in the evaluator.
 */
function ipv6CidrMatch(text: string, v: CidrValue): string {
  const network = v.address.toString(16).padStart(32, '0');
  const whole = Math.floor(v.prefix / 4);
  const rest = v.prefix % 4;
  const hex = ipv6HexExpression(text);
  if (rest === 0) return whole === 0 ? `${hex} IS NOT NULL` : `starts_with(${hex}, ${sqlString(network.slice(0, whole))})`;
  const high = parseInt(network[whole]!, 16);
  const keep = (0xf << (4 - rest)) & 0xf;
  const digits = Array.from({ length: 16 }, (_, d) => d)
    .filter((d) => (d & keep) === high)
    .map((d) => d.toString(16))
    .join('');
  return `regexp_matches(${hex}, ${sqlString(`^${network.slice(0, whole)}[${digits}]`)})`;
}

export function toDuckDbSql(rule: SigmaRule, options: SqlOptions = {}): string {
  return new SqlBackend().convert(rule, options);
}
