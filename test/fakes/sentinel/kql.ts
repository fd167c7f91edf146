/**
 * A small Kusto Query Language interpreter for the fake Log Analytics workspace: the subset that
 * detflow's KQL backend emits (sigma/backends/kql.ts) and the Sentinel adapter adds around it, read
 * as the KQL reference describes it (learn.microsoft.com/kusto/query: string operators, `has`
 * terms, `=~`, `in~`, `matches regex` (RE2), datatable, summarize, bin, order by (descending by
 * default), take, project, extend, let). Anything else is refused with the error Log Analytics
 * gives (`SyntaxError` / `SemanticError` inside a `BadArgumentError`), never guessed at.
 */

export type ColumnType = 'string' | 'long' | 'int' | 'real' | 'bool' | 'datetime' | 'timespan' | 'dynamic' | 'guid';

export class Timespan {
  constructor(readonly ms: number) {}
}

export type KqlValue = string | number | boolean | Date | Timespan | null | readonly unknown[] | { readonly [k: string]: unknown };

export interface Column {
  readonly name: string;
  readonly type: ColumnType;
}

export interface KqlTable {
  readonly columns: readonly Column[];
  readonly rows: ReadonlyArray<Readonly<Record<string, KqlValue>>>;
}

export class KqlError extends Error {
  constructor(
    readonly code: 'SyntaxError' | 'SemanticError',
    message: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------- tokens

type Tok =
  | { k: 'id'; v: string; at: number }
  | { k: 'str'; v: string; at: number }
  | { k: 'num'; v: number; at: number }
  | { k: 'span'; v: number; at: number }
  | { k: 'raw'; fn: string; v: string; at: number }
  | { k: 'op'; v: string; at: number }
  | { k: 'eof'; at: number };

const OPS = ['==', '!=', '=~', '!~', '<=', '>=', '..', '<', '>', '=', '|', '(', ')', '[', ']', ',', ';', ':', '.', '*', '+', '-', '/', '%', '!', '~'];
const SPAN_UNITS: Record<string, number> = {
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  ms: 1,
  milli: 1,
  millis: 1,
};
const RAW_CALLS = new Set(['datetime', 'dynamic', 'timespan', 'guid']);

function tokenize(text: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  const fail = (msg: string): never => {
    throw new KqlError('SyntaxError', `${msg} at position ${i}`);
  };
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    const at = i;
    if ((c === '@' && (text[i + 1] === '"' || text[i + 1] === "'")) || c === '"' || c === "'") {
      const verbatim = c === '@';
      const q = verbatim ? text[i + 1]! : c;
      i += verbatim ? 2 : 1;
      let v = '';
      for (;;) {
        if (i >= text.length) fail('Unterminated string literal');
        const d = text[i]!;
        if (d === '\n' && !verbatim) fail('Unterminated string literal');
        if (d === q) {
          if (verbatim && text[i + 1] === q) {
            v += q;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        if (d === '\\' && !verbatim) {
          const e = text[i + 1];
          const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" };
          if (e === undefined || map[e] === undefined) fail(`Unknown escape \\${e ?? ''}`);
          v += map[e!];
          i += 2;
          continue;
        }
        v += d;
        i++;
      }
      toks.push({ k: 'str', v, at });
      continue;
    }
    if (/[0-9]/.test(c)) {
      const m = /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i))!;
      i += m[0].length;
      const unit = /^[A-Za-z]+/.exec(text.slice(i));
      if (unit) {
        const factor = SPAN_UNITS[unit[0]];
        if (factor === undefined) fail(`Unknown timespan unit '${unit[0]}'`);
        i += unit[0].length;
        toks.push({ k: 'span', v: Number(m[0]) * factor!, at });
      } else toks.push({ k: 'num', v: Number(m[0]), at });
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(text.slice(i))!;
      i += m[0].length;
      const name = m[0];
      let j = i;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (RAW_CALLS.has(name) && text[j] === '(') {
        let depth = 0;
        let k = j;
        let inStr: string | null = null;
        for (; k < text.length; k++) {
          const d = text[k]!;
          if (inStr) {
            if (d === '\\') k++;
            else if (d === inStr) inStr = null;
            continue;
          }
          if (d === '"' || d === "'") inStr = d;
          else if (d === '(') depth++;
          else if (d === ')' && --depth === 0) break;
        }
        if (k >= text.length) fail(`Unterminated ${name}(`);
        toks.push({ k: 'raw', fn: name, v: text.slice(j + 1, k).trim(), at });
        i = k + 1;
        continue;
      }
      toks.push({ k: 'id', v: name, at });
      continue;
    }
    const op = OPS.find((o) => text.startsWith(o, i));
    if (!op) fail(`Unexpected character '${c}'`);
    toks.push({ k: 'op', v: op!, at });
    i += op!.length;
  }
  toks.push({ k: 'eof', at: text.length });
  return toks;
}

// ---------------------------------------------------------------- syntax tree

type Expr =
  | { t: 'lit'; v: KqlValue }
  | { t: 'col'; name: string }
  | { t: 'any' }
  | { t: 'call'; fn: string; args: Expr[] }
  | { t: 'bin'; op: string; l: Expr; r: Expr }
  | { t: 'in'; e: Expr; list: Expr[]; ci: boolean; neg: boolean }
  | { t: 'index'; e: Expr; key: Expr }
  | { t: 'neg'; e: Expr };

interface Named {
  name: string | null;
  e: Expr;
}

type Op =
  | { t: 'where'; e: Expr }
  | { t: 'take'; n: number }
  | { t: 'project'; items: Named[] }
  | { t: 'extend'; items: Named[] }
  | { t: 'summarize'; aggs: Named[]; by: Named[] }
  | { t: 'order'; keys: Array<{ e: Expr; desc: boolean }> }
  | { t: 'count' };

type Source = { t: 'table'; name: string } | { t: 'datatable'; columns: Column[]; values: Expr[] } | { t: 'union'; names: string[] | '*' };

interface Tabular {
  source: Source;
  ops: Op[];
}

type Statement = { t: 'let'; name: string; tabular?: Tabular; scalar?: Expr } | { t: 'query'; q: Tabular };

const STRING_OPS = ['contains', 'contains_cs', 'startswith', 'startswith_cs', 'endswith', 'endswith_cs', 'has', 'has_cs', 'hasprefix', 'hassuffix'];
const TYPES: ReadonlySet<string> = new Set([
  'string',
  'long',
  'int',
  'real',
  'double',
  'bool',
  'boolean',
  'datetime',
  'date',
  'timespan',
  'time',
  'dynamic',
  'guid',
  'decimal',
]);

class Parser {
  private i = 0;
  constructor(
    private readonly toks: Tok[],
    private tabularNames: (name: string) => boolean,
  ) {}

  private peek(n = 0): Tok {
    return this.toks[Math.min(this.i + n, this.toks.length - 1)]!;
  }
  private next(): Tok {
    return this.toks[this.i++]!;
  }
  private isOp(v: string, n = 0): boolean {
    const t = this.peek(n);
    return t.k === 'op' && t.v === v;
  }
  private isId(v: string, n = 0): boolean {
    const t = this.peek(n);
    return t.k === 'id' && t.v === v;
  }
  private fail(msg: string): never {
    const t = this.peek();
    const what = t.k === 'eof' ? 'end of query' : `'${String(t.v)}'`;
    throw new KqlError('SyntaxError', `${msg}; found ${what} at position ${t.at}`);
  }
  private expectOp(v: string): void {
    if (!this.isOp(v)) this.fail(`Expected '${v}'`);
    this.i++;
  }
  private ident(): string {
    const t = this.peek();
    if (t.k === 'id') {
      this.i++;
      return t.v;
    }
    if (this.isOp('[') && this.peek(1).k === 'str' && this.isOp(']', 2)) {
      const name = (this.peek(1) as { v: string }).v;
      this.i += 3;
      return name;
    }
    return this.fail('Expected a name');
  }

  statements(): Statement[] {
    const out: Statement[] = [];
    while (this.peek().k !== 'eof') {
      if (this.isOp(';')) {
        this.i++;
        continue;
      }
      if (this.isId('let')) {
        this.i++;
        const name = this.ident();
        this.expectOp('=');
        const tabular = this.startsTabular();
        const st: Statement = tabular ? { t: 'let', name, tabular: this.tabular() } : { t: 'let', name, scalar: this.expr() };
        out.push(st);
        const lets = this.tabularNames;
        if (tabular) this.tabularNames = (n) => n === name || lets(n);
      } else out.push({ t: 'query', q: this.tabular() });
      if (!this.isOp(';') && this.peek().k !== 'eof') this.fail("Expected ';' or the end of the query");
    }
    return out;
  }

  private startsTabular(): boolean {
    const t = this.peek();
    if (t.k !== 'id') return false;
    if (t.v === 'datatable' || t.v === 'union') return true;
    return this.tabularNames(t.v) && (this.isOp('|', 1) || this.isOp(';', 1) || this.peek(1).k === 'eof');
  }

  private tabular(): Tabular {
    const source = this.source();
    const ops: Op[] = [];
    while (this.isOp('|')) {
      this.i++;
      ops.push(this.operator());
    }
    return { source, ops };
  }

  private source(): Source {
    if (this.isId('datatable')) {
      this.i++;
      this.expectOp('(');
      const columns: Column[] = [];
      for (;;) {
        const name = this.ident();
        this.expectOp(':');
        const type = this.ident();
        if (!TYPES.has(type)) this.fail(`Unknown type '${type}'`);
        columns.push({ name, type: normaliseType(type) });
        if (this.isOp(',')) {
          this.i++;
          continue;
        }
        break;
      }
      this.expectOp(')');
      this.expectOp('[');
      const values: Expr[] = [];
      while (!this.isOp(']')) {
        values.push(this.unary());
        if (this.isOp(',')) this.i++;
        else if (!this.isOp(']')) this.fail("Expected ',' or ']' in the datatable's values");
      }
      this.i++;
      return { t: 'datatable', columns, values };
    }
    if (this.isId('union')) {
      this.i++;
      if (this.isOp('*')) {
        this.i++;
        return { t: 'union', names: '*' };
      }
      const names = [this.ident()];
      while (this.isOp(',')) {
        this.i++;
        names.push(this.ident());
      }
      return { t: 'union', names };
    }
    return { t: 'table', name: this.ident() };
  }

  private operator(): Op {
    const t = this.next();
    if (t.k !== 'id') this.fail('Expected a tabular operator');
    const name = (t as { v: string }).v;
    switch (name) {
      case 'where':
      case 'filter':
        return { t: 'where', e: this.expr() };
      case 'take':
      case 'limit': {
        const n = this.next();
        if (n.k !== 'num' || !Number.isInteger(n.v)) this.fail('Expected a row count');
        return { t: 'take', n: (n as { v: number }).v };
      }
      case 'project':
        return { t: 'project', items: this.namedList() };
      case 'extend':
        return { t: 'extend', items: this.namedList() };
      case 'summarize': {
        const aggs = this.isId('by') ? [] : this.namedList();
        let by: Named[] = [];
        if (this.isId('by')) {
          this.i++;
          by = this.namedList();
        }
        return { t: 'summarize', aggs, by };
      }
      case 'order':
      case 'sort': {
        if (!this.isId('by')) this.fail("Expected 'by'");
        this.i++;
        const keys: Array<{ e: Expr; desc: boolean }> = [];
        for (;;) {
          const e = this.expr();
          let desc = true;
          if (this.isId('asc') || this.isId('desc')) desc = (this.next() as { v: string }).v === 'desc';
          keys.push({ e, desc });
          if (!this.isOp(',')) break;
          this.i++;
        }
        return { t: 'order', keys };
      }
      case 'count':
        return { t: 'count' };
      default:
        return this.fail(`The fake workspace does not run the '${name}' operator`);
    }
  }

  private namedList(): Named[] {
    const items: Named[] = [];
    for (;;) {
      let name: string | null = null;
      const bracketed = this.isOp('[') && this.peek(1).k === 'str' && this.isOp(']', 2) && this.isOp('=', 3);
      if ((this.peek().k === 'id' && this.isOp('=', 1)) || bracketed) {
        name = this.ident();
        this.i++;
      }
      items.push({ name, e: this.expr() });
      if (!this.isOp(',')) break;
      this.i++;
    }
    return items;
  }

  expr(): Expr {
    let l = this.and();
    while (this.isId('or')) {
      this.i++;
      l = { t: 'bin', op: 'or', l, r: this.and() };
    }
    return l;
  }

  private and(): Expr {
    let l = this.comparison();
    while (this.isId('and')) {
      this.i++;
      l = { t: 'bin', op: 'and', l, r: this.comparison() };
    }
    return l;
  }

  private comparison(): Expr {
    const l = this.additive();
    const t = this.peek();
    if (t.k === 'op' && ['==', '!=', '=~', '!~', '<', '<=', '>', '>='].includes(t.v)) {
      this.i++;
      return { t: 'bin', op: t.v, l, r: this.additive() };
    }
    let neg = false;
    if (this.isOp('!') && this.peek(1).k === 'id') {
      neg = true;
      this.i++;
    }
    const w = this.peek();
    if (w.k === 'id' && STRING_OPS.includes(w.v)) {
      this.i++;
      return { t: 'bin', op: `${neg ? '!' : ''}${w.v}`, l, r: this.additive() };
    }
    if (w.k === 'id' && w.v === 'in') {
      this.i++;
      let ci = false;
      if (this.isOp('~')) {
        ci = true;
        this.i++;
      }
      this.expectOp('(');
      const list: Expr[] = [];
      while (!this.isOp(')')) {
        list.push(this.additive());
        if (this.isOp(',')) this.i++;
        else if (!this.isOp(')')) this.fail("Expected ',' or ')' in the in() list");
      }
      this.i++;
      return { t: 'in', e: l, list, ci, neg };
    }
    if (!neg && w.k === 'id' && w.v === 'matches' && this.isId('regex', 1)) {
      this.i += 2;
      return { t: 'bin', op: 'matches regex', l, r: this.additive() };
    }
    if (neg) this.fail('Expected a string operator after !');
    return l;
  }

  private additive(): Expr {
    let l = this.multiplicative();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.next() as { v: string }).v;
      l = { t: 'bin', op, l, r: this.multiplicative() };
    }
    return l;
  }

  private multiplicative(): Expr {
    let l = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const op = (this.next() as { v: string }).v;
      l = { t: 'bin', op, l, r: this.unary() };
    }
    return l;
  }

  private unary(): Expr {
    if (this.isOp('-')) {
      this.i++;
      return { t: 'neg', e: this.unary() };
    }
    return this.postfix();
  }

  private postfix(): Expr {
    let e = this.primary();
    for (;;) {
      if (this.isOp('[')) {
        this.i++;
        const key = this.expr();
        this.expectOp(']');
        e = { t: 'index', e, key };
      } else if (this.isOp('.') && this.peek(1).k === 'id') {
        this.i++;
        e = { t: 'index', e, key: { t: 'lit', v: this.ident() } };
      } else return e;
    }
  }

  private primary(): Expr {
    const t = this.peek();
    switch (t.k) {
      case 'str':
        this.i++;
        return { t: 'lit', v: t.v };
      case 'num':
        this.i++;
        return { t: 'lit', v: t.v };
      case 'span':
        this.i++;
        return { t: 'lit', v: new Timespan(t.v) };
      case 'raw':
        this.i++;
        return { t: 'lit', v: rawLiteral(t.fn, t.v) };
      case 'op':
        if (t.v === '(') {
          this.i++;
          const e = this.expr();
          this.expectOp(')');
          return e;
        }
        if (t.v === '*') {
          this.i++;
          return { t: 'any' };
        }
        if (t.v === '[' && this.peek(1).k === 'str' && this.isOp(']', 2)) return { t: 'col', name: this.ident() };
        return this.fail('Expected an expression');
      case 'id': {
        this.i++;
        if (t.v === 'true' || t.v === 'false') return { t: 'lit', v: t.v === 'true' };
        if (t.v === 'null') return { t: 'lit', v: null };
        if (this.isOp('(')) {
          this.i++;
          const args: Expr[] = [];
          while (!this.isOp(')')) {
            args.push(this.expr());
            if (this.isOp(',')) this.i++;
            else if (!this.isOp(')')) this.fail("Expected ',' or ')' in the function call");
          }
          this.i++;
          return { t: 'call', fn: t.v, args };
        }
        return { t: 'col', name: t.v };
      }
      default:
        return this.fail('Expected an expression');
    }
  }
}

function normaliseType(type: string): ColumnType {
  const map: Record<string, ColumnType> = { double: 'real', decimal: 'real', boolean: 'bool', date: 'datetime', time: 'timespan' };
  return map[type] ?? (type as ColumnType);
}

function rawLiteral(fn: string, text: string): KqlValue {
  if (fn === 'datetime') {
    if (text === 'null') return null;
    const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(text) || !/T/.test(text) ? text : `${text}Z`);
    if (!Number.isFinite(t)) throw new KqlError('SyntaxError', `Invalid datetime literal datetime(${text})`);
    return new Date(t);
  }
  if (fn === 'dynamic') {
    try {
      return JSON.parse(text) as KqlValue;
    } catch {
      throw new KqlError('SyntaxError', `The fake workspace reads dynamic() literals in JSON only: dynamic(${text})`);
    }
  }
  if (fn === 'guid') return text;
  const m = /^(\d+(?:\.\d+)?)\s*([A-Za-z]+)$/.exec(text);
  if (!m || SPAN_UNITS[m[2]!] === undefined) throw new KqlError('SyntaxError', `Invalid timespan literal timespan(${text})`);
  return new Timespan(Number(m[1]) * SPAN_UNITS[m[2]!]!);
}

// ---------------------------------------------------------------- evaluation

type Row = Readonly<Record<string, KqlValue>>;

export interface Workspace {
  /** The workspace's tables, already cut to the request's timespan. */
  table(name: string): KqlTable | undefined;
  tableNames(): string[];
  now(): Date;
}

export function runKql(text: string, workspace: Workspace): KqlTable {
  const lets = new Map<string, KqlTable>();
  const scalars = new Map<string, KqlValue>();
  const parser = new Parser(tokenize(text), (n) => workspace.table(n) !== undefined);
  let result: KqlTable | undefined;
  for (const st of parser.statements()) {
    const ctx: Ctx = { workspace, lets, scalars };
    if (st.t === 'let') {
      if (st.tabular) lets.set(st.name, runTabular(st.tabular, ctx));
      else scalars.set(st.name, evaluate(st.scalar!, {}, ctx, null));
    } else result = runTabular(st.q, ctx);
  }
  if (!result) throw new KqlError('SyntaxError', 'The query has no tabular expression to return');
  return result;
}

interface Ctx {
  workspace: Workspace;
  lets: Map<string, KqlTable>;
  scalars: Map<string, KqlValue>;
}

function runTabular(q: Tabular, ctx: Ctx): KqlTable {
  let table = sourceTable(q.source, ctx);
  for (const op of q.ops) table = applyOp(op, table, ctx);
  return table;
}

function sourceTable(s: Source, ctx: Ctx): KqlTable {
  if (s.t === 'table') {
    const t = ctx.lets.get(s.name) ?? ctx.workspace.table(s.name);
    if (!t) throw new KqlError('SemanticError', `'${s.name}': Failed to resolve table or column expression named '${s.name}'`);
    return t;
  }
  if (s.t === 'union') {
    const names = s.names === '*' ? ctx.workspace.tableNames() : s.names;
    const tables = names.map((n) => sourceTable({ t: 'table', name: n }, ctx));
    const columns = new Map<string, Column>();
    for (const t of tables) for (const c of t.columns) if (!columns.has(c.name)) columns.set(c.name, c);
    return { columns: [...columns.values()], rows: tables.flatMap((t) => t.rows) };
  }
  const values = s.values.map((v) => evaluate(v, {}, ctx, null));
  if (values.length % s.columns.length !== 0) {
    throw new KqlError('SemanticError', `datatable: ${values.length} values do not fill rows of ${s.columns.length} columns`);
  }
  const rows: Row[] = [];
  for (let r = 0; r < values.length; r += s.columns.length) {
    const row: Record<string, KqlValue> = {};
    s.columns.forEach((c, i) => {
      const v = values[r + i]!;
      if (v !== null && !fitsType(v, c.type))
        throw new KqlError('SemanticError', `datatable: value ${JSON.stringify(String(v))} of row ${r / s.columns.length + 1} is not of column ${c.name}'s type ${c.type}`);
      row[c.name] = v;
    });
    rows.push(row);
  }
  return { columns: s.columns, rows };
}

function fitsType(v: KqlValue, type: ColumnType): boolean {
  switch (type) {
    case 'string':
    case 'guid':
      return typeof v === 'string';
    case 'long':
    case 'int':
      return typeof v === 'number' && Number.isInteger(v);
    case 'real':
      return typeof v === 'number';
    case 'bool':
      return typeof v === 'boolean';
    case 'datetime':
      return v instanceof Date;
    case 'timespan':
      return v instanceof Timespan;
    case 'dynamic':
      return true;
  }
}

const AGGREGATES = new Set(['count', 'countif', 'sum', 'min', 'max', 'avg', 'dcount']);

function applyOp(op: Op, table: KqlTable, ctx: Ctx): KqlTable {
  switch (op.t) {
    case 'where':
      check(op.e, table, ctx);
      return { columns: table.columns, rows: table.rows.filter((r) => evaluate(op.e, r, ctx, table) === true) };
    case 'take':
      return { columns: table.columns, rows: table.rows.slice(0, op.n) };
    case 'count':
      return { columns: [{ name: 'Count', type: 'long' }], rows: [{ Count: table.rows.length }] };
    case 'order': {
      for (const k of op.keys) check(k.e, table, ctx);
      const rows = [...table.rows].sort((a, b) => {
        for (const k of op.keys) {
          const c = compare(evaluate(k.e, a, ctx, table), evaluate(k.e, b, ctx, table));
          if (c !== 0) return k.desc ? -c : c;
        }
        return 0;
      });
      return { columns: table.columns, rows };
    }
    case 'extend':
    case 'project': {
      const items = op.items.map((it, i) => {
        check(it.e, table, ctx);
        const name = it.name ?? (it.e.t === 'col' ? it.e.name : `Column${i + 1}`);
        return { name, e: it.e, type: staticType(it.e, table) };
      });
      const kept = op.t === 'extend' ? table.columns.filter((c) => !items.some((it) => it.name === c.name)) : [];
      const columns = [...kept, ...items.map((it) => ({ name: it.name, type: it.type }))];
      const rows = table.rows.map((r) => {
        const out: Record<string, KqlValue> = {};
        for (const c of kept) out[c.name] = r[c.name] ?? null;
        for (const it of items) out[it.name] = evaluate(it.e, r, ctx, table);
        return out;
      });
      return { columns, rows };
    }
    case 'summarize':
      return summarize(op, table, ctx);
  }
}

function summarize(op: Extract<Op, { t: 'summarize' }>, table: KqlTable, ctx: Ctx): KqlTable {
  const by = op.by.map((b) => {
    check(b.e, table, ctx);
    const inner = b.e.t === 'call' && (b.e.fn === 'bin' || b.e.fn === 'floor') ? b.e.args[0] : b.e;
    const name = b.name ?? (inner?.t === 'col' ? inner.name : null);
    if (!name) throw new KqlError('SemanticError', 'summarize: name a grouping expression that is not a column (by name = expression)');
    return { name, e: b.e, type: staticType(b.e, table) };
  });
  const aggs = op.aggs.map((a) => {
    if (a.e.t !== 'call' || !AGGREGATES.has(a.e.fn)) throw new KqlError('SemanticError', `summarize: the fake workspace computes ${[...AGGREGATES].join('(), ')}() only`);
    for (const arg of a.e.args) check(arg, table, ctx);
    const argName = a.e.args[0]?.t === 'col' ? `_${a.e.args[0].name}` : '_';
    const name = a.name ?? `${a.e.fn}${argName}`;
    const type: ColumnType = ['count', 'countif', 'dcount'].includes(a.e.fn) ? 'long' : a.e.fn === 'avg' ? 'real' : a.e.args[0] ? staticType(a.e.args[0], table) : 'long';
    return { name, fn: a.e.fn, args: a.e.args, type };
  });
  const groups = new Map<string, { keys: KqlValue[]; rows: Row[] }>();
  for (const r of table.rows) {
    const keys = by.map((b) => evaluate(b.e, r, ctx, table));
    const id = JSON.stringify(keys.map((k) => (k instanceof Date ? k.getTime() : k instanceof Timespan ? k.ms : k)));
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { keys, rows: [] }));
    g.rows.push(r);
  }
  if (by.length === 0 && groups.size === 0) groups.set('[]', { keys: [], rows: [] });
  const rows = [...groups.values()].map((g) => {
    const out: Record<string, KqlValue> = {};
    by.forEach((b, i) => (out[b.name] = g.keys[i]!));
    for (const a of aggs) out[a.name] = aggregate(a.fn, a.args, g.rows, ctx, table);
    return out;
  });
  return { columns: [...by.map((b) => ({ name: b.name, type: b.type })), ...aggs.map((a) => ({ name: a.name, type: a.type }))], rows };
}

function aggregate(fn: string, args: Expr[], rows: Row[], ctx: Ctx, table: KqlTable): KqlValue {
  const values = () => rows.map((r) => evaluate(args[0]!, r, ctx, table)).filter((v) => v !== null && v !== '');
  switch (fn) {
    case 'count':
      return rows.length;
    case 'countif':
      return rows.filter((r) => evaluate(args[0]!, r, ctx, table) === true).length;
    case 'dcount':
      return new Set(values().map((v) => JSON.stringify(v))).size;
    case 'sum':
      return values().reduce<number>((n, v) => n + Number(v), 0);
    case 'avg': {
      const v = values();
      return v.length ? v.reduce<number>((n, x) => n + Number(x), 0) / v.length : null;
    }
    case 'min':
    case 'max': {
      const v = values();
      if (v.length === 0) return null;
      return v.reduce((best, x) => ((fn === 'min' ? compare(x, best) < 0 : compare(x, best) > 0) ? x : best));
    }
  }
  return null;
}

/** Every column an expression names must exist (Log Analytics refuses the query otherwise, rows or not). */
function check(e: Expr, table: KqlTable, ctx: Ctx): void {
  switch (e.t) {
    case 'col':
      if (!table.columns.some((c) => c.name === e.name) && !ctx.scalars.has(e.name)) {
        throw new KqlError('SemanticError', `'where' operator: Failed to resolve scalar expression named '${e.name}'`);
      }
      return;
    case 'call':
      if (e.fn === 'column_ifexists') return;
      if (!FUNCTIONS[e.fn] && !AGGREGATES.has(e.fn)) throw new KqlError('SemanticError', `Unknown function: '${e.fn}'`);
      for (const a of e.args) check(a, table, ctx);
      return;
    case 'bin':
      check(e.l, table, ctx);
      check(e.r, table, ctx);
      // A pattern RE2 refuses fails the query whether or not a row reaches it.
      if (e.op === 'matches regex' && e.r.t === 'lit') re2(kqlString(e.r.v));
      return;
    case 'in':
      check(e.e, table, ctx);
      for (const x of e.list) check(x, table, ctx);
      return;
    case 'index':
      check(e.e, table, ctx);
      check(e.key, table, ctx);
      return;
    case 'neg':
      check(e.e, table, ctx);
      return;
    default:
      return;
  }
}

function staticType(e: Expr, table: KqlTable): ColumnType {
  switch (e.t) {
    case 'col':
      return table.columns.find((c) => c.name === e.name)?.type ?? 'string';
    case 'lit':
      return valueType(e.v);
    case 'call':
      if (['bin', 'floor', 'min', 'max'].includes(e.fn) && e.args[0]) return staticType(e.args[0], table);
      if (['count', 'countif', 'dcount', 'strlen', 'indexof', 'tolong', 'toint', 'week_of_year', 'datetime_part'].includes(e.fn)) return 'long';
      if (['isempty', 'isnotempty', 'isnull', 'isnotnull', 'not', 'ipv4_is_in_range'].includes(e.fn)) return 'bool';
      if (['parse_json', 'todynamic'].includes(e.fn)) return 'dynamic';
      if (['todouble', 'toreal', 'avg'].includes(e.fn)) return 'real';
      if (['now', 'ago', 'todatetime'].includes(e.fn)) return 'datetime';
      return 'string';
    case 'bin':
      return ['+', '-', '*', '/', '%'].includes(e.op) ? staticType(e.l, table) : 'bool';
    case 'in':
      return 'bool';
    case 'index':
      return 'dynamic';
    case 'neg':
      return staticType(e.e, table);
    case 'any':
      return 'string';
  }
}

export function valueType(v: KqlValue): ColumnType {
  if (v === null || typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'long' : 'real';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof Date) return 'datetime';
  if (v instanceof Timespan) return 'timespan';
  return 'dynamic';
}

/** KQL's string form of a value (tostring). */
export function kqlString(v: KqlValue | undefined): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) return v.toISOString().replace('.000Z', 'Z');
  if (v instanceof Timespan) {
    const s = Math.floor(v.ms / 1000);
    const pad = (n: number) => String(n).padStart(2, '0');
    const days = Math.floor(s / 86400);
    return `${days ? `${days}.` : ''}${pad(Math.floor((s % 86400) / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
  }
  return JSON.stringify(v);
}

function scalarOf(v: KqlValue): number | string | boolean | null {
  if (v instanceof Date) return v.getTime();
  if (v instanceof Timespan) return v.ms;
  if (v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  return JSON.stringify(v);
}

function compare(a: KqlValue, b: KqlValue): number {
  const x = scalarOf(a);
  const y = scalarOf(b);
  if (x === y) return 0;
  if (x === null) return -1;
  if (y === null) return 1;
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  return String(x) < String(y) ? -1 : 1;
}

function isTermChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9]/.test(c);
}

/** `has`: the needle occurs as a whole term (bounded by non-alphanumerics), case-insensitively unless `_cs`. */
function hasTerm(hay: string, needle: string, cased: boolean, mode: 'term' | 'prefix' | 'suffix'): boolean {
  const h = cased ? hay : hay.toLowerCase();
  const n = cased ? needle : needle.toLowerCase();
  if (n === '') return true;
  for (let i = h.indexOf(n); i >= 0; i = h.indexOf(n, i + 1)) {
    const startOk = !isTermChar(h[i - 1]);
    const endOk = !isTermChar(h[i + n.length]);
    if ((mode === 'term' && startOk && endOk) || (mode === 'prefix' && startOk) || (mode === 'suffix' && endOk)) return true;
  }
  return false;
}

function stringOp(op: string, hay: string, needle: string): boolean {
  const cased = op.endsWith('_cs');
  const base = op.replace(/_cs$/, '');
  const h = cased ? hay : hay.toLowerCase();
  const n = cased ? needle : needle.toLowerCase();
  switch (base) {
    case 'contains':
      return h.includes(n);
    case 'startswith':
      return h.startsWith(n);
    case 'endswith':
      return h.endsWith(n);
    case 'has':
      return hasTerm(hay, needle, cased, 'term');
    case 'hasprefix':
      return hasTerm(hay, needle, cased, 'prefix');
    case 'hassuffix':
      return hasTerm(hay, needle, cased, 'suffix');
  }
  throw new KqlError('SemanticError', `Unknown string operator ${op}`);
}

const regexCache = new Map<string, RegExp>();

/** RE2, as KQL's `matches regex` reads it, in JavaScript terms; what RE2 refuses is refused. */
export function re2(pattern: string): RegExp {
  const cached = regexCache.get(pattern);
  if (cached) return cached;
  let body = pattern;
  let flags = '';
  for (let m = /^\(\?([imsU]+)\)/.exec(body); m; m = /^\(\?([imsU]+)\)/.exec(body)) {
    if (m[1]!.includes('U')) throw new KqlError('SemanticError', 'The fake workspace does not run RE2 ungreedy (?U) patterns');
    for (const f of m[1]!) if (!flags.includes(f)) flags += f;
    body = body.slice(m[0].length);
  }
  if (/\(\?[=!]|\(\?<[=!]/.test(body)) throw new KqlError('SemanticError', `Invalid regex '${pattern}': RE2 has no lookaround`);
  if (/\\[1-9]/.test(body)) throw new KqlError('SemanticError', `Invalid regex '${pattern}': RE2 has no backreferences`);
  if (/\(\?[a-zA-Z-]+[:)]/.test(body.replace(/\(\?P?<[A-Za-z_]\w*>/g, ''))) {
    throw new KqlError('SemanticError', `The fake workspace reads inline flags only at the start of a pattern: '${pattern}'`);
  }
  let re: RegExp;
  try {
    re = new RegExp(body.replace(/\(\?P</g, '(?<'), flags);
  } catch (err) {
    throw new KqlError('SemanticError', `Invalid regex '${pattern}': ${(err as Error).message}`);
  }
  regexCache.set(pattern, re);
  return re;
}

function ipv4(text: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text.trim());
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

type Fn = (args: KqlValue[], ctx: Ctx) => KqlValue;

const FUNCTIONS: Readonly<Record<string, Fn>> = {
  isempty: ([v]) => v === null || v === undefined || v === '',
  isnotempty: ([v]) => !(v === null || v === undefined || v === ''),
  isnull: ([v]) => v === null || v === undefined,
  isnotnull: ([v]) => !(v === null || v === undefined),
  not: ([v]) => v !== true,
  tolower: ([v]) => kqlString(v ?? null).toLowerCase(),
  toupper: ([v]) => kqlString(v ?? null).toUpperCase(),
  tostring: ([v]) => kqlString(v ?? null),
  strlen: ([v]) => kqlString(v ?? null).length,
  strcat: (args) => args.map((a) => kqlString(a)).join(''),
  indexof: ([s, sub]) => kqlString(s ?? null).indexOf(kqlString(sub ?? null)),
  substring: ([s, start, len]) => {
    const text = kqlString(s ?? null);
    const from = Math.max(0, Number(start));
    return len === undefined || len === null ? text.slice(from) : text.slice(from, from + Number(len));
  },
  tolong: ([v]) => (v === null || v === '' || Number.isNaN(Number(scalarOf(v!))) ? null : Math.trunc(Number(scalarOf(v!)))),
  toint: ([v]) => (v === null || v === '' || Number.isNaN(Number(scalarOf(v!))) ? null : Math.trunc(Number(scalarOf(v!)))),
  todouble: ([v]) => (v === null || v === '' || Number.isNaN(Number(scalarOf(v!))) ? null : Number(scalarOf(v!))),
  toreal: ([v]) => (v === null || v === '' || Number.isNaN(Number(scalarOf(v!))) ? null : Number(scalarOf(v!))),
  long: ([v]) => (v === null ? null : Number(v)),
  int: ([v]) => (v === null ? null : Number(v)),
  real: ([v]) => (v === null ? null : Number(v)),
  double: ([v]) => (v === null ? null : Number(v)),
  bool: ([v]) => (v === null ? null : v === true),
  todatetime: ([v]) => {
    if (v instanceof Date) return v;
    const t = Date.parse(kqlString(v ?? null));
    return Number.isFinite(t) ? new Date(t) : null;
  },
  parse_json: ([v]) => parseJson(v ?? null),
  todynamic: ([v]) => parseJson(v ?? null),
  bin: ([v, size]) => binOf(v ?? null, size ?? null),
  floor: ([v, size]) => binOf(v ?? null, size ?? null),
  now: (_args, ctx) => ctx.workspace.now(),
  ago: ([span], ctx) => new Date(ctx.workspace.now().getTime() - (span instanceof Timespan ? span.ms : 0)),
  ipv4_is_in_range: ([ip, range]) => {
    const [net, bits] = kqlString(range ?? null).split('/');
    const a = ipv4(kqlString(ip ?? null));
    const n = ipv4(net ?? '');
    if (a === null || n === null) return null;
    const prefix = bits === undefined ? 32 : Number(bits);
    const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
    return (a & mask) >>> 0 === (n & mask) >>> 0;
  },
  datetime_part: ([part, v]) => {
    if (!(v instanceof Date)) return null;
    const p = kqlString(part ?? null).toLowerCase();
    const map: Record<string, () => number> = {
      year: () => v.getUTCFullYear(),
      month: () => v.getUTCMonth() + 1,
      day: () => v.getUTCDate(),
      hour: () => v.getUTCHours(),
      minute: () => v.getUTCMinutes(),
      second: () => v.getUTCSeconds(),
    };
    const f = map[p];
    if (!f) throw new KqlError('SemanticError', `datetime_part: unknown part '${p}'`);
    return f();
  },
  week_of_year: ([v]) => {
    if (!(v instanceof Date)) return null;
    const d = new Date(Date.UTC(v.getUTCFullYear(), v.getUTCMonth(), v.getUTCDate()));
    const day = d.getUTCDay() || 7;
    d.setUTCDate(d.getUTCDate() + 4 - day);
    const yearStart = Date.UTC(d.getUTCFullYear(), 0, 1);
    return Math.ceil(((d.getTime() - yearStart) / 86_400_000 + 1) / 7);
  },
};

function parseJson(v: KqlValue): KqlValue {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as KqlValue;
  } catch {
    return v;
  }
}

function binOf(v: KqlValue, size: KqlValue): KqlValue {
  if (v === null) return null;
  if (v instanceof Date && size instanceof Timespan) return new Date(Math.floor(v.getTime() / size.ms) * size.ms);
  if (typeof v === 'number' && typeof size === 'number') return Math.floor(v / size) * size;
  throw new KqlError('SemanticError', 'bin(): the value and the bin size must be a datetime and a timespan, or two numbers');
}

function evaluate(e: Expr, row: Row, ctx: Ctx, table: KqlTable | null): KqlValue {
  switch (e.t) {
    case 'lit':
      return e.v;
    case 'col':
      if (table && table.columns.some((c) => c.name === e.name)) return row[e.name] ?? null;
      if (ctx.scalars.has(e.name)) return ctx.scalars.get(e.name)!;
      throw new KqlError('SemanticError', `Failed to resolve scalar expression named '${e.name}'`);
    case 'any':
      throw new KqlError('SemanticError', "'*' stands for every column only on the left of a string operator");
    case 'neg': {
      const v = evaluate(e.e, row, ctx, table);
      if (v instanceof Timespan) return new Timespan(-v.ms);
      return v === null ? null : -Number(v);
    }
    case 'index': {
      const base = evaluate(e.e, row, ctx, table);
      const key = evaluate(e.key, row, ctx, table);
      const obj = typeof base === 'string' ? parseJson(base) : base;
      if (obj === null || typeof obj !== 'object' || obj instanceof Date || obj instanceof Timespan) return null;
      const v = (obj as Record<string, unknown>)[String(key)];
      return v === undefined ? null : (v as KqlValue);
    }
    case 'in': {
      const v = kqlString(evaluate(e.e, row, ctx, table));
      const list = e.list.map((x) => kqlString(evaluate(x, row, ctx, table)));
      const found = e.ci ? list.some((x) => x.toLowerCase() === v.toLowerCase()) : list.includes(v);
      return e.neg ? !found : found;
    }
    case 'call': {
      if (e.fn === 'column_ifexists') {
        const name = kqlString(evaluate(e.args[0]!, row, ctx, table));
        if (table?.columns.some((c) => c.name === name)) return row[name] ?? null;
        return evaluate(e.args[1]!, row, ctx, table);
      }
      const fn = FUNCTIONS[e.fn];
      if (!fn) throw new KqlError('SemanticError', `Unknown function: '${e.fn}'`);
      return fn(
        e.args.map((a) => evaluate(a, row, ctx, table)),
        ctx,
      );
    }
    case 'bin':
      return binary(e, row, ctx, table);
  }
}

function binary(e: Extract<Expr, { t: 'bin' }>, row: Row, ctx: Ctx, table: KqlTable | null): KqlValue {
  if (e.op === 'and') return evaluate(e.l, row, ctx, table) === true && evaluate(e.r, row, ctx, table) === true;
  if (e.op === 'or') return evaluate(e.l, row, ctx, table) === true || evaluate(e.r, row, ctx, table) === true;
  const r = evaluate(e.r, row, ctx, table);
  const negated = e.op.startsWith('!') && e.op !== '!=' && e.op !== '!~';
  const op = negated ? e.op.slice(1) : e.op;
  const test = (l: KqlValue): boolean => {
    switch (op) {
      case '==':
        return l !== null && r !== null && compare(l, r) === 0 && typeof scalarOf(l) === typeof scalarOf(r);
      case '!=':
        return l !== null && r !== null && !(compare(l, r) === 0 && typeof scalarOf(l) === typeof scalarOf(r));
      case '=~':
        return kqlString(l).toLowerCase() === kqlString(r).toLowerCase();
      case '!~':
        return kqlString(l).toLowerCase() !== kqlString(r).toLowerCase();
      case '<':
        return l !== null && r !== null && compare(l, r) < 0;
      case '<=':
        return l !== null && r !== null && compare(l, r) <= 0;
      case '>':
        return l !== null && r !== null && compare(l, r) > 0;
      case '>=':
        return l !== null && r !== null && compare(l, r) >= 0;
      case 'matches regex':
        return re2(kqlString(r)).test(kqlString(l));
      default:
        return stringOp(op, kqlString(l), kqlString(r));
    }
  };
  if (['+', '-', '*', '/', '%'].includes(op)) return arithmetic(op, evaluate(e.l, row, ctx, table), r);
  if (e.l.t === 'any') {
    // The search operator's documentation spells `search "Lab*PC"` as `where * matches regex …`.
    if (!STRING_OPS.includes(op) && op !== 'matches regex') throw new KqlError('SemanticError', "'*' stands for every column only on the left of a string operator");
    const hit = (table?.columns ?? []).some((c) => test(row[c.name] ?? null));
    return negated ? !hit : hit;
  }
  const result = test(evaluate(e.l, row, ctx, table));
  return negated ? !result : result;
}

function arithmetic(op: string, l: KqlValue, r: KqlValue): KqlValue {
  if (l === null || r === null) return null;
  if (l instanceof Date && r instanceof Timespan) return new Date(op === '-' ? l.getTime() - r.ms : l.getTime() + r.ms);
  if (l instanceof Date && r instanceof Date && op === '-') return new Timespan(l.getTime() - r.getTime());
  const [a, b] = [Number(scalarOf(l)), Number(scalarOf(r))];
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0 ? null : a / b;
    default:
      return b === 0 ? null : a % b;
  }
}

/** A value as the query API writes it in a row (datetimes ISO 8601, dynamic as JSON text). */
export function wireValue(v: KqlValue | undefined): unknown {
  if (v === undefined || v === null) return null;
  if (v instanceof Date || v instanceof Timespan) return kqlString(v);
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
}
