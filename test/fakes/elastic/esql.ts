/**
 * The ES|QL the fake Elasticsearch understands: the subset detflow's ES|QL backend
 * (sigma/backends/esql.ts) emits and the adapter appends, evaluated the way Elasticsearch documents
 * it. Anything else is refused as Elasticsearch refuses it: `parsing_exception` for text it cannot
 * parse, `verification_exception` for an unknown index, column or function, or an argument of the
 * wrong type — never guessed.
 *
 * References (behaviour, not code): Elasticsearch ES|QL reference — syntax, FROM (index patterns,
 * METADATA directive), WHERE, STATS … BY, SORT, LIMIT (implicit 1000), KEEP; operators ==, !=, <,
 * <=, >, >=, LIKE (`*`, `?`, `\` escapes), RLIKE (Lucene regular expressions, whole value), IN,
 * IS [NOT] NULL, AND/OR/NOT with three-valued logic (null for a missing or multi-valued operand);
 * functions TO_LOWER, COALESCE, CIDR_MATCH, LOCATE, STARTS_WITH, ENDS_WITH, DATE_EXTRACT,
 * DATE_TRUNC, COUNT, MIN, MAX. https://www.elastic.co/docs/reference/query-languages/esql
 */
import net from 'node:net';

export type FieldType = 'keyword' | 'text' | 'long' | 'double' | 'boolean' | 'date' | 'ip';

/** One index as ES|QL sees it: its mapping (dotted path → type) and documents (flattened). */
export interface EsqlIndex {
  readonly name: string;
  readonly mapping: ReadonlyMap<string, FieldType>;
  readonly docs: ReadonlyArray<{ readonly id: string; readonly version: number; readonly fields: ReadonlyMap<string, unknown> }>;
}

export class EsqlError extends Error {
  constructor(
    readonly type: 'parsing_exception' | 'verification_exception',
    reason: string,
  ) {
    super(reason);
  }
}

export interface EsqlAnswer {
  columns: Array<{ name: string; type: string }>;
  values: unknown[][];
}

// ---------------------------------------------------------------------------------------------
// Lexing

type Tok = { k: 'id'; v: string; quoted: boolean } | { k: 'str'; v: string } | { k: 'num'; v: number; raw: string } | { k: 'op'; v: string } | { k: 'end' };

function lex(text: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (text.startsWith('//', i)) {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new EsqlError('parsing_exception', 'unterminated comment');
      i = end + 2;
      continue;
    }
    if (text.startsWith('"""', i)) {
      const end = text.indexOf('"""', i + 3);
      if (end < 0) throw new EsqlError('parsing_exception', 'unterminated triple-quoted string');
      out.push({ k: 'str', v: text.slice(i + 3, end) });
      i = end + 3;
      continue;
    }
    if (c === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new EsqlError('parsing_exception', 'unterminated string literal');
        const d = text[i]!;
        if (d === '"') break;
        if (d === '\\') {
          const e = text[i + 1];
          const map: Record<string, string> = { '\\': '\\', '"': '"', n: '\n', r: '\r', t: '\t' };
          if (e === undefined || !(e in map)) throw new EsqlError('parsing_exception', `invalid escape sequence \\${e ?? ''} in a string literal`);
          v += map[e];
          i += 2;
          continue;
        }
        v += d;
        i++;
      }
      i++;
      out.push({ k: 'str', v });
      continue;
    }
    if (c === '`') {
      let v = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new EsqlError('parsing_exception', 'unterminated quoted identifier');
        if (text[i] === '`' && text[i + 1] === '`') {
          v += '`';
          i += 2;
        } else if (text[i] === '`') break;
        else v += text[i++];
      }
      i++;
      out.push({ k: 'id', v, quoted: true });
      continue;
    }
    const num = /^\d+(\.\d+)?/.exec(text.slice(i));
    if (num) {
      out.push({ k: 'num', v: Number(num[0]), raw: num[0] });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_@][A-Za-z0-9_.@]*/.exec(text.slice(i));
    if (id) {
      out.push({ k: 'id', v: id[0], quoted: false });
      i += id[0].length;
      continue;
    }
    const op = /^(==|!=|<=|>=|<|>|\(|\)|,|=|\*|-|\+)/.exec(text.slice(i));
    if (op) {
      out.push({ k: 'op', v: op[0] });
      i += op[0].length;
      continue;
    }
    throw new EsqlError('parsing_exception', `token recognition error at: '${c}'`);
  }
  out.push({ k: 'end' });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing

export type Expr =
  | { t: 'lit'; v: unknown }
  | { t: 'field'; name: string }
  | { t: 'call'; fn: string; args: Expr[]; star?: boolean }
  | { t: 'and' | 'or'; l: Expr; r: Expr }
  | { t: 'not'; e: Expr }
  | { t: 'cmp'; op: string; l: Expr; r: Expr }
  | { t: 'like' | 'rlike'; e: Expr; pattern: string; negated: boolean }
  | { t: 'in'; e: Expr; list: Expr[]; negated: boolean }
  | { t: 'isnull'; e: Expr; negated: boolean }
  | { t: 'interval'; n: number; unit: string };

type Command =
  | { c: 'where'; e: Expr }
  | { c: 'stats'; aggs: Array<{ name: string; e: Expr }>; by: Array<{ name: string; e: Expr }> }
  | { c: 'sort'; keys: Array<{ field: string; desc: boolean }> }
  | { c: 'limit'; n: number }
  | { c: 'keep'; fields: string[] };

export interface ParsedQuery {
  readonly sources: string[];
  readonly metadata: string[];
  readonly commands: Command[];
}

const METADATA_FIELDS = new Set(['_id', '_index', '_version']);

/** Splits at pipes outside strings, quoted identifiers and comments. */
function splitPipes(text: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (text.startsWith('"""', i)) {
      const end = text.indexOf('"""', i + 3);
      const stop = end < 0 ? text.length : end + 3;
      cur += text.slice(i, stop);
      i = stop;
      continue;
    }
    if (c === '"' || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += c === '"' && text[j] === '\\' ? 2 : 1;
      cur += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '|') {
      parts.push(cur);
      cur = '';
      i++;
      continue;
    }
    cur += c;
    i++;
  }
  parts.push(cur);
  return parts.map((p) => p.trim());
}

export function parseEsql(query: string): ParsedQuery {
  const [first, ...rest] = splitPipes(query);
  const from = /^FROM\s+([^\s,]+(?:\s*,\s*[^\s,]+)*)(?:\s+METADATA\s+(.+))?$/is.exec(first ?? '');
  if (!from) throw new EsqlError('parsing_exception', `line 1:1: a query must start with FROM <index pattern> (got [${(first ?? '').slice(0, 40)}])`);
  const sources = from[1]!.split(',').map((s) => s.trim());
  for (const s of sources) if (!/^[A-Za-z0-9_.*:+-]+$/.test(s)) throw new EsqlError('parsing_exception', `invalid index pattern [${s}]`);
  const metadata = from[2] ? from[2].split(',').map((s) => s.trim()) : [];
  for (const m of metadata) if (!METADATA_FIELDS.has(m)) throw new EsqlError('verification_exception', `unsupported metadata field [${m}]`);
  return { sources, metadata, commands: rest.map(parseCommand) };
}

function parseCommand(text: string): Command {
  const m = /^([A-Za-z]+)\s*([\s\S]*)$/.exec(text);
  if (!m) throw new EsqlError('parsing_exception', `mismatched input [${text.slice(0, 20)}]`);
  const name = m[1]!.toUpperCase();
  const p = new Parser(lex(m[2]!));
  let cmd: Command;
  switch (name) {
    case 'WHERE':
      cmd = { c: 'where', e: p.expr() };
      break;
    case 'STATS': {
      const aggs: Array<{ name: string; e: Expr }> = [];
      const by: Array<{ name: string; e: Expr }> = [];
      do aggs.push(p.named());
      while (p.eat(','));
      if (p.word('BY')) {
        do by.push(p.named());
        while (p.eat(','));
      }
      cmd = { c: 'stats', aggs, by };
      break;
    }
    case 'SORT': {
      const keys: Array<{ field: string; desc: boolean }> = [];
      do {
        const field = p.ident();
        const desc = p.word('DESC') ? true : (p.word('ASC'), false);
        keys.push({ field, desc });
      } while (p.eat(','));
      cmd = { c: 'sort', keys };
      break;
    }
    case 'LIMIT': {
      const t = p.next();
      if (t.k !== 'num' || !Number.isInteger(t.v)) throw new EsqlError('parsing_exception', 'LIMIT takes an integer');
      cmd = { c: 'limit', n: t.v };
      break;
    }
    case 'KEEP': {
      const fields: string[] = [];
      do fields.push(p.ident());
      while (p.eat(','));
      cmd = { c: 'keep', fields };
      break;
    }
    default:
      throw new EsqlError('parsing_exception', `this fake does not implement the ES|QL command [${name}]`);
  }
  p.done();
  return cmd;
}

class Parser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}
  peek(): Tok {
    return this.toks[this.i]!;
  }
  next(): Tok {
    return this.toks[this.i++]!;
  }
  eat(op: string): boolean {
    const t = this.peek();
    if (t.k === 'op' && t.v === op) {
      this.i++;
      return true;
    }
    return false;
  }
  word(w: string): boolean {
    const t = this.peek();
    if (t.k === 'id' && !t.quoted && t.v.toUpperCase() === w) {
      this.i++;
      return true;
    }
    return false;
  }
  isWord(w: string, offset = 0): boolean {
    const t = this.toks[this.i + offset];
    return t !== undefined && t.k === 'id' && !t.quoted && t.v.toUpperCase() === w;
  }
  expect(op: string): void {
    if (!this.eat(op)) throw new EsqlError('parsing_exception', `expected [${op}] ${this.where()}`);
  }
  ident(): string {
    const t = this.next();
    if (t.k !== 'id') throw new EsqlError('parsing_exception', `expected a field name ${this.where()}`);
    return t.v;
  }
  done(): void {
    if (this.peek().k !== 'end') throw new EsqlError('parsing_exception', `extraneous input ${this.where()}`);
  }
  where(): string {
    const t = this.peek();
    return t.k === 'end' ? 'at end of command' : `at [${'raw' in t ? t.raw : t.k === 'str' ? JSON.stringify(t.v) : String(t.v)}]`;
  }
  /** `name = expr` or `expr` (named after its text). */
  named(): { name: string; e: Expr } {
    const t = this.peek();
    const n = this.toks[this.i + 1];
    if (t.k === 'id' && n?.k === 'op' && n.v === '=') {
      this.i += 2;
      return { name: t.v, e: this.expr() };
    }
    const start = this.i;
    const e = this.expr();
    return {
      name: this.toks
        .slice(start, this.i)
        .map((x) => ('raw' in x ? x.raw : 'v' in x ? String(x.v) : ''))
        .join(''),
      e,
    };
  }
  expr(): Expr {
    let l = this.and();
    while (this.word('OR')) l = { t: 'or', l, r: this.and() };
    return l;
  }
  and(): Expr {
    let l = this.not();
    while (this.word('AND')) l = { t: 'and', l, r: this.not() };
    return l;
  }
  not(): Expr {
    if (this.word('NOT')) return { t: 'not', e: this.not() };
    return this.predicate();
  }
  predicate(): Expr {
    const e = this.primary();
    const negated = this.isWord('NOT') && (this.isWord('LIKE', 1) || this.isWord('RLIKE', 1) || this.isWord('IN', 1));
    if (negated) this.i++;
    const kind = this.word('LIKE') ? 'like' : this.word('RLIKE') ? 'rlike' : null;
    if (kind) {
      const t = this.next();
      if (t.k !== 'str') throw new EsqlError('parsing_exception', `${kind.toUpperCase()} takes a string pattern`);
      return { t: kind, e, pattern: t.v, negated };
    }
    if (this.word('IN')) {
      this.expect('(');
      const list: Expr[] = [];
      do list.push(this.primary());
      while (this.eat(','));
      this.expect(')');
      return { t: 'in', e, list, negated };
    }
    if (this.word('IS')) {
      const neg = this.word('NOT');
      if (!this.word('NULL')) throw new EsqlError('parsing_exception', `expected NULL ${this.where()}`);
      return { t: 'isnull', e, negated: neg };
    }
    const t = this.peek();
    if (t.k === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(t.v)) {
      this.i++;
      return { t: 'cmp', op: t.v, l: e, r: this.primary() };
    }
    return e;
  }
  primary(): Expr {
    const t = this.next();
    if (t.k === 'op' && t.v === '(') {
      const e = this.expr();
      this.expect(')');
      return e;
    }
    if (t.k === 'op' && t.v === '-') {
      const n = this.next();
      if (n.k !== 'num') throw new EsqlError('parsing_exception', 'expected a number after -');
      return { t: 'lit', v: -n.v };
    }
    if (t.k === 'str') return { t: 'lit', v: t.v };
    if (t.k === 'num') {
      const unit = this.peek();
      if (unit.k === 'id' && !unit.quoted && /^(day|days|hour|hours|minute|minutes|second|seconds)$/i.test(unit.v)) {
        this.i++;
        return { t: 'interval', n: t.v, unit: unit.v.toLowerCase().replace(/s$/, '') };
      }
      return { t: 'lit', v: t.v };
    }
    if (t.k === 'id') {
      if (!t.quoted) {
        const w = t.v.toUpperCase();
        if (w === 'TRUE') return { t: 'lit', v: true };
        if (w === 'FALSE') return { t: 'lit', v: false };
        if (w === 'NULL') return { t: 'lit', v: null };
        if (this.eat('(')) {
          if (this.eat('*')) {
            this.expect(')');
            return { t: 'call', fn: w, args: [], star: true };
          }
          const args: Expr[] = [];
          if (!this.eat(')')) {
            do args.push(this.expr());
            while (this.eat(','));
            this.expect(')');
          }
          return { t: 'call', fn: w, args };
        }
      }
      return { t: 'field', name: t.v };
    }
    throw new EsqlError('parsing_exception', `mismatched input ${t.k === 'end' ? '<EOF>' : `[${'v' in t ? String(t.v) : ''}]`}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluation

type Row = Map<string, unknown>;
const SCALAR_FUNCTIONS: Record<string, number | [number, number]> = {
  TO_LOWER: 1,
  COALESCE: [1, 16],
  CIDR_MATCH: [2, 16],
  LOCATE: [2, 3],
  STARTS_WITH: 2,
  ENDS_WITH: 2,
  DATE_EXTRACT: 2,
  DATE_TRUNC: 2,
};
const AGGREGATES = new Set(['COUNT', 'MIN', 'MAX']);

/** Index names an index pattern list resolves to; an unresolved pattern is ES|QL's `Unknown index`. */
export function resolveIndices(sources: readonly string[], names: readonly string[]): string[] {
  const out = new Set<string>();
  for (const s of sources) {
    const re = new RegExp(`^${s.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    const hits = names.filter((n) => re.test(n) && (!n.startsWith('.') || s.startsWith('.')));
    for (const h of hits) out.add(h);
  }
  if (out.size === 0) throw new EsqlError('verification_exception', `Found 1 problem\nline 1:1: Unknown index [${sources.join(',')}]`);
  return [...out];
}

/**
 * Runs a parsed query over the indices it reads. `filter` (a Query DSL document filter, already
 * compiled) keeps the documents FROM reads, before any command.
 */
export function runEsql(query: ParsedQuery, indices: readonly EsqlIndex[], filter: (fields: ReadonlyMap<string, unknown>) => boolean): EsqlAnswer {
  const mapping = new Map<string, FieldType>();
  for (const idx of indices) for (const [f, t] of idx.mapping) if (!mapping.has(f)) mapping.set(f, t);
  for (const m of query.metadata) mapping.set(m, m === '_version' ? 'long' : 'keyword');
  let columns: Array<{ name: string; type: string }> = [...mapping.entries()]
    .filter(([f]) => !METADATA_FIELDS.has(f))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, type]) => ({ name, type }));
  columns.push(...query.metadata.map((m) => ({ name: m, type: mapping.get(m)! })));
  let rows: Row[] = [];
  for (const idx of indices) {
    for (const doc of idx.docs) {
      if (!filter(doc.fields)) continue;
      const row: Row = new Map(doc.fields);
      if (query.metadata.includes('_id')) row.set('_id', doc.id);
      if (query.metadata.includes('_index')) row.set('_index', idx.name);
      if (query.metadata.includes('_version')) row.set('_version', doc.version);
      rows.push(row);
    }
  }
  let limited = false;
  for (const cmd of query.commands) {
    const types = new Map(columns.map((c) => [c.name, c.type as FieldType | 'integer']));
    switch (cmd.c) {
      case 'where':
        verify(cmd.e, types, false);
        rows = rows.filter((r) => evaluate(cmd.e, r) === true);
        break;
      case 'stats': {
        for (const a of cmd.aggs) {
          if (a.e.t !== 'call' || !AGGREGATES.has(a.e.fn)) throw new EsqlError('verification_exception', `expected an aggregate function in STATS, found [${a.name}]`);
          verify(a.e, types, true);
        }
        for (const b of cmd.by) verify(b.e, types, false);
        const groups = new Map<string, { keys: unknown[]; rows: Row[] }>();
        for (const r of rows) {
          const keys = cmd.by.map((b) => evaluate(b.e, r));
          const k = JSON.stringify(keys);
          const g = groups.get(k) ?? { keys, rows: [] };
          g.rows.push(r);
          groups.set(k, g);
        }
        if (cmd.by.length === 0 && groups.size === 0) groups.set('[]', { keys: [], rows: [] });
        const next: Row[] = [];
        for (const g of groups.values()) {
          const row: Row = new Map();
          cmd.aggs.forEach((a) => row.set(a.name, aggregate(a.e as Extract<Expr, { t: 'call' }>, g.rows)));
          cmd.by.forEach((b, i) => row.set(b.name, g.keys[i]));
          next.push(row);
        }
        rows = next;
        columns = [
          ...cmd.aggs.map((a) => ({ name: a.name, type: aggregateType(a.e as Extract<Expr, { t: 'call' }>, types) })),
          ...cmd.by.map((b) => ({
            name: b.name,
            type: b.e.t === 'field' ? (types.get(b.e.name) ?? 'keyword') : b.e.t === 'call' && b.e.fn === 'DATE_TRUNC' ? 'date' : 'keyword',
          })),
        ];
        break;
      }
      case 'sort':
        for (const k of cmd.keys) if (!types.has(k.field)) throw unknownColumn(k.field);
        rows = [...rows].sort((a, b) => {
          for (const k of cmd.keys) {
            const c = compareSort(a.get(k.field), b.get(k.field));
            if (c !== 0) return k.desc ? -c : c;
          }
          return 0;
        });
        break;
      case 'limit':
        rows = rows.slice(0, cmd.n);
        limited = true;
        break;
      case 'keep':
        for (const f of cmd.fields) if (!types.has(f)) throw unknownColumn(f);
        columns = cmd.fields.map((f) => ({ name: f, type: types.get(f)! }));
        break;
    }
  }
  if (!limited) rows = rows.slice(0, 1000); // ES|QL's implicit LIMIT
  return { columns, values: rows.map((r) => columns.map((c) => output(r.get(c.name), c.type))) };
}

function unknownColumn(name: string): EsqlError {
  return new EsqlError('verification_exception', `Found 1 problem\nline 1:1: Unknown column [${name}]`);
}

function output(v: unknown, type: string): unknown {
  if (v === undefined || v === null) return null;
  if (type === 'date' && typeof v === 'number') return new Date(v).toISOString();
  if (Array.isArray(v)) return v.map((x) => output(x, type));
  return v;
}

function typeOf(e: Expr, types: ReadonlyMap<string, string>): string {
  switch (e.t) {
    case 'lit':
      return e.v === null ? 'null' : typeof e.v === 'string' ? 'keyword' : typeof e.v === 'number' ? (Number.isInteger(e.v) ? 'integer' : 'double') : 'boolean';
    case 'field':
      return types.get(e.name) ?? 'keyword';
    case 'call':
      if (e.fn === 'TO_LOWER') return 'keyword';
      if (e.fn === 'COALESCE') return typeOf(e.args[0]!, types);
      if (e.fn === 'LOCATE' || e.fn === 'DATE_EXTRACT') return 'long';
      if (e.fn === 'DATE_TRUNC') return 'date';
      return 'boolean';
    case 'interval':
      return 'time_duration';
    default:
      return 'boolean';
  }
}

/** What Elasticsearch's verifier refuses: unknown columns and functions, wrong arity, wrong argument types. */
function verify(e: Expr, types: ReadonlyMap<string, string>, aggregateContext: boolean): void {
  const stringy = (x: Expr) => ['keyword', 'text', 'null'].includes(typeOf(x, types));
  switch (e.t) {
    case 'lit':
    case 'interval':
      return;
    case 'field':
      if (!types.has(e.name)) throw unknownColumn(e.name);
      return;
    case 'and':
    case 'or':
      verify(e.l, types, false);
      verify(e.r, types, false);
      return;
    case 'not':
      verify(e.e, types, false);
      return;
    case 'isnull':
      verify(e.e, types, false);
      return;
    case 'like':
    case 'rlike':
      verify(e.e, types, false);
      if (!stringy(e.e)) throw new EsqlError('verification_exception', `first argument of [${e.t.toUpperCase()}] must be [string], found type [${typeOf(e.e, types)}]`);
      return;
    case 'in':
      verify(e.e, types, false);
      e.list.forEach((x) => verify(x, types, false));
      return;
    case 'cmp': {
      verify(e.l, types, false);
      verify(e.r, types, false);
      const [a, b] = [typeOf(e.l, types), typeOf(e.r, types)];
      const num = (t: string) => ['long', 'double', 'integer'].includes(t);
      const str = (t: string) => ['keyword', 'text'].includes(t);
      const compatible = a === 'null' || b === 'null' || a === b || (num(a) && num(b)) || (str(a) && str(b)) || (a === 'date' && str(b)) || (str(a) && b === 'date');
      if (!compatible) throw new EsqlError('verification_exception', `first argument of [${e.op}] is [${a}] so second argument must also be [${a}] but was [${b}]`);
      return;
    }
    case 'call': {
      if (AGGREGATES.has(e.fn)) {
        if (!aggregateContext) throw new EsqlError('verification_exception', `aggregate function [${e.fn}] is allowed only in STATS`);
        if (e.star && e.fn !== 'COUNT') throw new EsqlError('parsing_exception', `[${e.fn}(*)] is not valid`);
        if (!e.star && e.args.length !== 1) throw new EsqlError('verification_exception', `[${e.fn}] takes one argument`);
        e.args.forEach((x) => verify(x, types, false));
        return;
      }
      const arity = SCALAR_FUNCTIONS[e.fn];
      if (arity === undefined) throw new EsqlError('verification_exception', `Found 1 problem\nline 1:1: Unknown function [${e.fn}]`);
      const [lo, hi] = typeof arity === 'number' ? [arity, arity] : arity;
      if (e.args.length < lo || e.args.length > hi)
        throw new EsqlError('verification_exception', `[${e.fn}] takes ${lo}${hi !== lo ? `..${hi}` : ''} arguments, got ${e.args.length}`);
      e.args.forEach((x) => verify(x, types, false));
      if (e.fn === 'CIDR_MATCH' && !['ip', 'null'].includes(typeOf(e.args[0]!, types)))
        throw new EsqlError('verification_exception', `first argument of [CIDR_MATCH] must be [ip], found value of type [${typeOf(e.args[0]!, types)}]`);
      if (e.fn === 'DATE_TRUNC' && (e.args[0]!.t !== 'interval' || typeOf(e.args[1]!, types) !== 'date'))
        throw new EsqlError('verification_exception', 'DATE_TRUNC takes a time interval and a date');
      if (e.fn === 'DATE_EXTRACT' && typeOf(e.args[1]!, types) !== 'date') throw new EsqlError('verification_exception', 'second argument of [DATE_EXTRACT] must be [date]');
      if (['TO_LOWER', 'STARTS_WITH', 'ENDS_WITH', 'LOCATE'].includes(e.fn) && !stringy(e.args[0]!))
        throw new EsqlError('verification_exception', `first argument of [${e.fn}] must be [string], found type [${typeOf(e.args[0]!, types)}]`);
      return;
    }
  }
}

/** Three-valued: true, false, or null (unknown); a missing or multi-valued operand is null. */
export function evaluate(e: Expr, row: Row): unknown {
  switch (e.t) {
    case 'lit':
      return e.v;
    case 'interval':
      return null;
    case 'field': {
      const v = row.get(e.name);
      return v === undefined ? null : v;
    }
    case 'and': {
      const l = evaluate(e.l, row);
      const r = evaluate(e.r, row);
      if (l === false || r === false) return false;
      if (l === null || r === null) return null;
      return true;
    }
    case 'or': {
      const l = evaluate(e.l, row);
      const r = evaluate(e.r, row);
      if (l === true || r === true) return true;
      if (l === null || r === null) return null;
      return false;
    }
    case 'not': {
      const v = evaluate(e.e, row);
      return v === null ? null : !v;
    }
    case 'isnull': {
      const v = evaluate(e.e, row);
      const isNull = v === null;
      return e.negated ? !isNull : isNull;
    }
    case 'like':
    case 'rlike': {
      const v = single(evaluate(e.e, row));
      if (typeof v !== 'string') return null;
      const re = e.t === 'like' ? likeRegex(e.pattern) : luceneRegex(e.pattern);
      const m = re.test(v);
      return e.negated ? !m : m;
    }
    case 'in': {
      const v = single(evaluate(e.e, row));
      if (v === null) return null;
      const values = e.list.map((x) => single(evaluate(x, row)));
      const m = values.some((x) => x === v);
      if (!m && values.includes(null)) return null;
      return e.negated ? !m : m;
    }
    case 'cmp': {
      let l = single(evaluate(e.l, row));
      let r = single(evaluate(e.r, row));
      if (l === null || r === null) return null;
      if (typeof l === 'number' && typeof r === 'string') r = Date.parse(r);
      if (typeof l === 'string' && typeof r === 'number') l = Date.parse(l);
      switch (e.op) {
        case '==':
          return l === r;
        case '!=':
          return l !== r;
        case '<':
          return (l as number) < (r as number);
        case '<=':
          return (l as number) <= (r as number);
        case '>':
          return (l as number) > (r as number);
        default:
          return (l as number) >= (r as number);
      }
    }
    case 'call':
      return call(e, row);
  }
}

function single(v: unknown): unknown {
  return Array.isArray(v) ? (v.length === 1 ? v[0] : null) : v;
}

function call(e: Extract<Expr, { t: 'call' }>, row: Row): unknown {
  const args = e.args.map((a) => evaluate(a, row));
  switch (e.fn) {
    case 'TO_LOWER': {
      const v = args[0];
      if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x.toLowerCase() : x));
      return typeof v === 'string' ? v.toLowerCase() : null;
    }
    case 'COALESCE':
      return args.find((a) => a !== null) ?? null;
    case 'CIDR_MATCH': {
      const ip = single(args[0]);
      if (typeof ip !== 'string') return null;
      return args.slice(1).some((cidr) => {
        if (typeof cidr !== 'string') return false;
        const [addr, prefix] = cidr.split('/');
        const type = net.isIPv6(addr!) ? 'ipv6' : 'ipv4';
        if (net.isIPv6(ip) !== (type === 'ipv6')) return false;
        const list = new net.BlockList();
        list.addSubnet(addr!, Number(prefix ?? (type === 'ipv6' ? 128 : 32)), type);
        return list.check(ip, type);
      });
    }
    case 'LOCATE': {
      const [s, sub] = [single(args[0]), single(args[1])];
      if (typeof s !== 'string' || typeof sub !== 'string') return null;
      return s.indexOf(sub) + 1;
    }
    case 'STARTS_WITH': {
      const [s, p] = [single(args[0]), single(args[1])];
      return typeof s === 'string' && typeof p === 'string' ? s.startsWith(p) : null;
    }
    case 'ENDS_WITH': {
      const [s, p] = [single(args[0]), single(args[1])];
      return typeof s === 'string' && typeof p === 'string' ? s.endsWith(p) : null;
    }
    case 'DATE_EXTRACT': {
      const [part, t] = [single(args[0]), single(args[1])];
      const ms = typeof t === 'number' ? t : typeof t === 'string' ? Date.parse(t) : NaN;
      if (typeof part !== 'string' || Number.isNaN(ms)) return null;
      const d = new Date(ms);
      const parts: Record<string, number> = {
        minute_of_hour: d.getUTCMinutes(),
        hour_of_day: d.getUTCHours(),
        day_of_month: d.getUTCDate(),
        month_of_year: d.getUTCMonth() + 1,
        year: d.getUTCFullYear(),
      };
      return parts[part.toLowerCase()] ?? null;
    }
    case 'DATE_TRUNC': {
      const unit = e.args[0] as Extract<Expr, { t: 'interval' }>;
      const t = single(args[1]);
      const ms = typeof t === 'number' ? t : typeof t === 'string' ? Date.parse(t) : NaN;
      if (Number.isNaN(ms)) return null;
      const size = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 }[unit.unit]! * unit.n;
      return Math.floor(ms / size) * size;
    }
    default:
      return null;
  }
}

function aggregate(e: Extract<Expr, { t: 'call' }>, rows: Row[]): unknown {
  if (e.fn === 'COUNT') {
    if (e.star) return rows.length;
    return rows.reduce((n, r) => {
      const v = evaluate(e.args[0]!, r);
      return n + (v === null ? 0 : Array.isArray(v) ? v.length : 1);
    }, 0);
  }
  const values = rows
    .map((r) => single(evaluate(e.args[0]!, r)))
    .filter((v) => v !== null)
    .map((v) => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : v));
  if (values.length === 0) return null;
  return values.reduce((a, b) => ((e.fn === 'MAX' ? (b as number) > (a as number) : (b as number) < (a as number)) ? b : a));
}

function aggregateType(e: Extract<Expr, { t: 'call' }>, types: ReadonlyMap<string, string>): string {
  if (e.fn === 'COUNT') return 'long';
  return typeOf(e.args[0]!, types);
}

function compareSort(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return 1; // nulls last
  if (b === undefined || b === null) return -1;
  return (a as number | string) < (b as number | string) ? -1 : 1;
}

/** LIKE: the whole value; `*` any run, `?` one character, `\` escapes the next. */
export function likeRegex(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) out += escapeRe(pattern[++i]!);
    else if (c === '*') out += '[\\s\\S]*';
    else if (c === '?') out += '[\\s\\S]';
    else out += escapeRe(c);
  }
  return new RegExp(`^${out}$`);
}

/**
 * Lucene regular expression over the whole value: `.`, `*`, `+`, `?`, `{n,m}`, `|`, groups,
 * character classes; `\` makes the next character literal. The optional operators Lucene enables
 * for ES|QL (`@`, `&`, `~`, `<>`, `#`) are refused here, as detflow escapes them.
 */
export function luceneRegex(pattern: string): RegExp {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const n = pattern[++i];
      if (n === undefined) throw new EsqlError('parsing_exception', 'RLIKE pattern ends with a lone backslash');
      out += escapeRe(n);
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c === '[' ? '\\[' : c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      continue;
    }
    if ('@&~<>#"'.includes(c)) throw new EsqlError('parsing_exception', `this fake does not implement the Lucene regex operator [${c}]`);
    out += c === '.' ? '[\\s\\S]' : c;
  }
  try {
    return new RegExp(`^(?:${out})$`);
  } catch (err) {
    throw new EsqlError('parsing_exception', `invalid RLIKE pattern [${pattern}]: ${(err as Error).message}`);
  }
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
