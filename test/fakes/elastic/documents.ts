/**
 * How the fake Elasticsearch stores documents: an index mapping (dotted path → field type) built
 * from `PUT /<index>` mappings and dynamic mapping, and documents flattened to dotted paths the way
 * ES|QL reads them. Also the slice of the Query DSL the adapter sends (`bool.filter`, `range`,
 * `term`, `terms`, `match_all`) and the aggregations of an alerts search (`date_histogram`, `min`,
 * `max`).
 *
 * References: Elasticsearch mapping (field data types, `properties`, `dynamic_templates` with
 * `match_mapping_type`, dynamic field mapping: strings → text with a `keyword` sub-field, date
 * detection), Query DSL (bool, range with gte/gt/lte/lt and format, term, terms, match_all),
 * aggregations (date_histogram calendar_interval/fixed_interval, min, max).
 * https://www.elastic.co/docs/reference/elasticsearch/mapping-reference ,
 * https://www.elastic.co/docs/reference/query-languages/querydsl
 */
import net from 'node:net';
import type { FieldType } from './esql';

export class EsRequestError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    reason: string,
  ) {
    super(reason);
  }
}

export interface StoredIndex {
  readonly name: string;
  readonly mapping: Map<string, FieldType>;
  readonly stringsAsKeyword: boolean;
  readonly docs: Array<{ id: string; version: number; fields: Map<string, unknown>; visibleAt: number; source: Record<string, unknown> }>;
}

const TYPE_ALIASES: Readonly<Record<string, FieldType>> = {
  keyword: 'keyword',
  constant_keyword: 'keyword',
  wildcard: 'keyword',
  text: 'text',
  match_only_text: 'text',
  long: 'long',
  integer: 'long',
  short: 'long',
  byte: 'long',
  unsigned_long: 'long',
  double: 'double',
  float: 'double',
  half_float: 'double',
  scaled_float: 'double',
  boolean: 'boolean',
  date: 'date',
  date_nanos: 'date',
  ip: 'ip',
};

/** The mapping of `PUT /<index>`'s `mappings`: explicit properties, and whether strings map to keyword. */
export function readMappings(mappings: unknown): { mapping: Map<string, FieldType>; stringsAsKeyword: boolean } {
  const mapping = new Map<string, FieldType>();
  if (mappings === undefined) return { mapping, stringsAsKeyword: false };
  if (typeof mappings !== 'object' || mappings === null) throw new EsRequestError(400, 'mapper_parsing_exception', 'Failed to parse mapping: mappings must be an object');
  const m = mappings as { properties?: unknown; dynamic_templates?: unknown; dynamic?: unknown };
  for (const key of Object.keys(m))
    if (!['properties', 'dynamic_templates', 'dynamic', '_source', 'date_detection'].includes(key))
      throw new EsRequestError(400, 'mapper_parsing_exception', `Root mapping definition has unsupported parameters:  [${key}]`);
  const walk = (props: unknown, prefix: string) => {
    if (typeof props !== 'object' || props === null) throw new EsRequestError(400, 'mapper_parsing_exception', `properties of [${prefix || '_doc'}] must be an object`);
    for (const [name, def] of Object.entries(props)) {
      const path = prefix ? `${prefix}.${name}` : name;
      const d = def as { type?: string; properties?: unknown };
      if (d.properties !== undefined && (d.type === undefined || d.type === 'object')) walk(d.properties, path);
      else if (typeof d.type === 'string') {
        const t = TYPE_ALIASES[d.type];
        if (!t) throw new EsRequestError(400, 'mapper_parsing_exception', `No handler for type [${d.type}] declared on field [${name}]`);
        mapping.set(path, t);
      } else throw new EsRequestError(400, 'mapper_parsing_exception', `No type specified for field [${name}]`);
    }
  };
  if (m.properties !== undefined) walk(m.properties, '');
  let stringsAsKeyword = false;
  if (m.dynamic_templates !== undefined) {
    if (!Array.isArray(m.dynamic_templates)) throw new EsRequestError(400, 'mapper_parsing_exception', 'dynamic_templates must be an array');
    for (const t of m.dynamic_templates as Array<Record<string, { match_mapping_type?: string; mapping?: { type?: string } }>>) {
      const tpl = Object.values(t)[0];
      if (tpl?.match_mapping_type === 'string' && tpl.mapping?.type === 'keyword') stringsAsKeyword = true;
    }
  }
  return { mapping, stringsAsKeyword };
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Flattens a document to dotted paths (arrays of objects merge into multi-valued paths). */
export function flatten(source: Record<string, unknown>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const put = (path: string, v: unknown) => {
    const prev = out.get(path);
    if (prev === undefined) out.set(path, v);
    else out.set(path, [...(Array.isArray(prev) ? prev : [prev]), ...(Array.isArray(v) ? v : [v])]);
  };
  const walk = (v: unknown, path: string) => {
    if (v === null || v === undefined) return;
    if (Array.isArray(v)) {
      const scalars = v.filter((x) => typeof x !== 'object' || x === null).filter((x) => x !== null);
      if (scalars.length > 0) put(path, scalars);
      for (const x of v) if (typeof x === 'object' && x !== null) walk(x, path);
      return;
    }
    if (typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
      return;
    }
    put(path, v);
  };
  walk(source, '');
  return out;
}

/** A document as an index stores it: typed per the mapping, new fields mapped dynamically. */
export function indexDocument(index: StoredIndex, source: Record<string, unknown>): Map<string, unknown> {
  const flat = flatten(source);
  const fields = new Map<string, unknown>();
  for (const [path, raw] of flat) {
    let type = index.mapping.get(path);
    const sample = Array.isArray(raw) ? raw[0] : raw;
    if (!type) {
      if (typeof sample === 'boolean') type = 'boolean';
      else if (typeof sample === 'number') type = Number.isInteger(sample) ? 'long' : 'double';
      else if (typeof sample === 'string' && !index.stringsAsKeyword && ISO_DATE.test(sample)) type = 'date';
      else if (typeof sample === 'string' && !index.stringsAsKeyword) {
        type = 'text';
        index.mapping.set(`${path}.keyword`, 'keyword');
      } else type = 'keyword';
      index.mapping.set(path, type);
    }
    const convert = (v: unknown): unknown => coerce(v, type, path);
    const value = Array.isArray(raw) ? raw.map(convert) : convert(raw);
    fields.set(path, value);
    if (type === 'text' && index.mapping.get(`${path}.keyword`) === 'keyword') fields.set(`${path}.keyword`, value);
  }
  return fields;
}

function coerce(v: unknown, type: FieldType, path: string): unknown {
  const fail = (what: string) => new EsRequestError(400, 'document_parsing_exception', `failed to parse field [${path}] of type [${type}]: ${what}`);
  switch (type) {
    case 'keyword':
    case 'text':
      if (typeof v === 'object') throw fail('an object where a value was expected');
      return String(v);
    case 'long':
    case 'double': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      if (Number.isNaN(n)) throw fail(`For input string: "${String(v)}"`);
      return type === 'long' ? Math.trunc(n) : n;
    }
    case 'boolean':
      if (v === true || v === 'true') return true;
      if (v === false || v === 'false') return false;
      throw fail(`Failed to parse value [${String(v)}] as only [true] or [false] are allowed.`);
    case 'date': {
      const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : NaN;
      if (Number.isNaN(ms)) throw fail(`failed to parse date field [${String(v)}]`);
      return ms;
    }
    case 'ip':
      if (typeof v !== 'string' || net.isIP(v) === 0) throw fail(`'${String(v)}' is not an IP string literal.`);
      return v;
  }
}

function dateValue(v: unknown, field: string): number {
  const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw new EsRequestError(400, 'parse_exception', `failed to parse date field [${String(v)}] with format [strict_date_optional_time] for [${field}]`);
  return ms;
}

type Predicate = (fields: ReadonlyMap<string, unknown>) => boolean;

/** A Query DSL query as a document predicate; queries this fake does not implement are refused by name. */
export function compileQuery(q: unknown, mapping: ReadonlyMap<string, FieldType>): Predicate {
  if (typeof q !== 'object' || q === null || Array.isArray(q)) throw new EsRequestError(400, 'parsing_exception', 'query malformed, must start with start_object');
  const entries = Object.entries(q);
  if (entries.length !== 1) throw new EsRequestError(400, 'parsing_exception', `[${entries.map(([k]) => k).join(',')}] query malformed, no end_object or more than one query`);
  const [kind, body] = entries[0]!;
  const asObject = (v: unknown): Record<string, unknown> => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new EsRequestError(400, 'parsing_exception', `[${kind}] query malformed`);
    return v as Record<string, unknown>;
  };
  switch (kind) {
    case 'match_all':
      return () => true;
    case 'bool': {
      const b = asObject(body);
      const list = (k: string) => (b[k] === undefined ? [] : Array.isArray(b[k]) ? (b[k] as unknown[]) : [b[k]]);
      for (const k of Object.keys(b))
        if (!['filter', 'must', 'must_not', 'should', 'minimum_should_match'].includes(k))
          throw new EsRequestError(400, 'parsing_exception', `[bool] query does not support [${k}]`);
      const must = [...list('filter'), ...list('must')].map((x) => compileQuery(x, mapping));
      const mustNot = list('must_not').map((x) => compileQuery(x, mapping));
      const should = list('should').map((x) => compileQuery(x, mapping));
      return (f) => must.every((p) => p(f)) && !mustNot.some((p) => p(f)) && (should.length === 0 || should.some((p) => p(f)));
    }
    case 'range': {
      const b = asObject(body);
      const [[field, spec]] = Object.entries(b) as [[string, Record<string, unknown>]];
      for (const k of Object.keys(spec))
        if (!['gte', 'gt', 'lte', 'lt', 'format', 'time_zone'].includes(k)) throw new EsRequestError(400, 'parsing_exception', `[range] query does not support [${k}]`);
      if (spec.format !== undefined && !['strict_date_optional_time', 'epoch_millis', 'strict_date_optional_time||epoch_millis'].includes(String(spec.format)))
        throw new EsRequestError(400, 'parsing_exception', `this fake does not implement the date format [${String(spec.format)}]`);
      const isDate = mapping.get(field) === 'date';
      const bound = (k: string) => (spec[k] === undefined ? undefined : isDate ? dateValue(spec[k], field) : Number(spec[k]));
      const [gte, gt, lte, lt] = [bound('gte'), bound('gt'), bound('lte'), bound('lt')];
      return (f) => {
        const raw = f.get(field);
        const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is number => typeof v === 'number');
        return values.some((v) => (gte === undefined || v >= gte) && (gt === undefined || v > gt) && (lte === undefined || v <= lte) && (lt === undefined || v < lt));
      };
    }
    case 'term':
    case 'terms': {
      const b = asObject(body);
      const [[field, spec]] = Object.entries(b) as [[string, unknown]];
      const wanted = kind === 'terms' ? (spec as unknown[]) : [typeof spec === 'object' && spec !== null && 'value' in spec ? (spec as { value: unknown }).value : spec];
      return (f) => {
        const raw = f.get(field);
        return (Array.isArray(raw) ? raw : [raw]).some((v) => v !== undefined && wanted.includes(v));
      };
    }
    default:
      throw new EsRequestError(400, 'parsing_exception', `unknown query [${kind}] (or not implemented by this fake)`);
  }
}

/** The aggregations of a search: date_histogram, min, max. */
export function aggregate(aggs: unknown, docs: ReadonlyArray<ReadonlyMap<string, unknown>>, mapping: ReadonlyMap<string, FieldType>): Record<string, unknown> {
  if (typeof aggs !== 'object' || aggs === null) throw new EsRequestError(400, 'parsing_exception', 'aggregations must be an object');
  const out: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(aggs)) {
    const entries = Object.entries(def as Record<string, unknown>);
    if (entries.length !== 1) throw new EsRequestError(400, 'parsing_exception', `Expected one aggregation type under [${name}]`);
    const [type, spec] = entries[0]! as [string, Record<string, unknown>];
    const field = String(spec.field);
    if (!mapping.has(field)) {
      out[name] = type === 'date_histogram' ? { buckets: [] } : { value: null };
      continue;
    }
    const values = docs.flatMap((d) => {
      const v = d.get(field);
      return (Array.isArray(v) ? v : [v]).filter((x): x is number => typeof x === 'number');
    });
    if (type === 'min' || type === 'max') {
      const value = values.length === 0 ? null : type === 'min' ? Math.min(...values) : Math.max(...values);
      out[name] = { value, ...(value !== null && mapping.get(field) === 'date' ? { value_as_string: new Date(value).toISOString() } : {}) };
      continue;
    }
    if (type === 'date_histogram') {
      for (const k of Object.keys(spec))
        if (!['field', 'calendar_interval', 'fixed_interval', 'time_zone', 'min_doc_count', 'format'].includes(k))
          throw new EsRequestError(400, 'x_content_parse_exception', `[date_histogram] unknown field [${k}]`);
      const interval = String(spec.calendar_interval ?? spec.fixed_interval ?? '');
      const size = { '1d': 86_400_000, day: 86_400_000, '1h': 3_600_000, hour: 3_600_000 }[interval];
      if (!size) throw new EsRequestError(400, 'illegal_argument_exception', `this fake implements day and hour intervals, not [${interval}]`);
      if (spec.time_zone !== undefined && !['UTC', 'Z', '+00:00'].includes(String(spec.time_zone)))
        throw new EsRequestError(400, 'illegal_argument_exception', 'this fake implements time_zone UTC only');
      const counts = new Map<number, number>();
      for (const v of values) counts.set(Math.floor(v / size) * size, (counts.get(Math.floor(v / size) * size) ?? 0) + 1);
      const keys = [...counts.keys()].sort((a, b) => a - b);
      out[name] = { buckets: keys.map((key) => ({ key_as_string: new Date(key).toISOString(), key, doc_count: counts.get(key)! })) };
      continue;
    }
    throw new EsRequestError(400, 'x_content_parse_exception', `Unknown aggregation type [${type}] (or not implemented by this fake)`);
  }
  return out;
}
