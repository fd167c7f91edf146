/**
 * The slice of Splunk's Search Processing Language the fake Splunk evaluates: what detflow's Splunk
 * backend (sigma/backends/splunk.ts) and adapter (siem/splunk/spl.ts) emit, and nothing else. SPL
 * it cannot interpret is refused with a `SplError` naming the construct (the server answers 400),
 * never guessed at.
 *
 * Semantics follow the Splunk Search Reference (https://help.splunk.com/splunk-enterprise/spl-search-reference/9.4/):
 * - `search`: terms `field=value` (case-insensitive, `*` wildcard, whole-value match), `field!=value`
 *   (the field exists and does not match), `field>n` etc., `field=*` (the field exists),
 *   `field IN (a, b)`, `CASE("…")` (case-sensitive), free-text keywords (matched against `_raw`),
 *   `NOT`, `OR`, `AND`/juxtaposition, parentheses; `field="10.0.0.0/8"` matches by CIDR. Precedence as Splunk documents it for `search`:
 *   NOT, then OR, then AND (`a b OR c` is `a AND (b OR c)`). Multivalue fields (`tag`) match when
 *   any value does.
 * - `makeresults format=json data="[…]"` (Splunk 9.0+), `regex field="…"` (PCRE; the fake takes the
 *   patterns JavaScript can run, with a leading `(?ims)` as flags; `\A` and `\z` too), `where` over
 *   the eval subset the backend emits (see compileWhere), `eval x=floor(field/n)`, `stats` (count, count(f), sum, avg, min, max, dc;
 *   `as`; `by`), `sort [N] [+|-]field`, `head N`, `table`, `fields`.
 */

import { networkMask, parseIp, parseNetwork } from '../../../sigma/net';

export type Value = string | number | boolean | readonly Value[] | null | undefined;
export type Row = Record<string, Value>;

export class SplError extends Error {
  override readonly name = 'SplError';
}

export interface SplContext {
  /** The events of the search's time range, newest first (what a search command at the head of a pipeline reads). */
  readonly events: () => Row[];
}

// --- lexing -----------------------------------------------------------------------------------

/** Splits at pipes outside double quotes. */
export function splitCommands(spl: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < spl.length; i++) {
    const ch = spl[i];
    if (quoted && ch === '\\') {
      i++;
      continue;
    }
    if (ch === '"') quoted = !quoted;
    else if (ch === '|' && !quoted) {
      out.push(spl.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (quoted) throw new SplError('Unbalanced quotes.');
  out.push(spl.slice(start).trim());
  return out;
}

/** The text of a double-quoted SPL string: `\\` and `\"` unescaped. */
export function unquote(text: string): string {
  if (!(text.length >= 2 && text.startsWith('"') && text.endsWith('"'))) return text;
  let out = '';
  for (let i = 1; i < text.length - 1; i++) {
    const ch = text[i]!;
    if (ch === '\\' && (text[i + 1] === '\\' || text[i + 1] === '"')) {
      out += text[i + 1];
      i++;
    } else out += ch;
  }
  return out;
}

type Token = { kind: '(' | ')' } | { kind: 'word'; text: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (ch === '(' || ch === ')') {
      tokens.push({ kind: ch });
      i++;
      continue;
    }
    let word = '';
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        const end = closingQuote(text, i);
        word += text.slice(i, end + 1);
        i = end + 1;
        continue;
      }
      if (c === '(' && /(^|[=<>])CASE$/i.test(word)) {
        const end = closingParen(text, i);
        word += text.slice(i, end + 1);
        i = end + 1;
        continue;
      }
      if (/\s/.test(c) || c === '(' || c === ')') break;
      word += c;
      i++;
    }
    tokens.push({ kind: 'word', text: word });
  }
  return tokens;
}

function closingQuote(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  throw new SplError('Unbalanced quotes.');
}

function closingParen(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '"') i = closingQuote(text, i);
    else if (text[i] === ')') return i;
  }
  throw new SplError('Unbalanced parentheses.');
}

// --- search expressions ---------------------------------------------------------------------

type Expr =
  | { kind: 'and' | 'or'; parts: Expr[] }
  | { kind: 'not'; part: Expr }
  | { kind: 'cmp'; field: string; op: '=' | '!=' | '>' | '<' | '>=' | '<='; value: string; cased: boolean }
  | { kind: 'in'; field: string; values: string[] }
  | { kind: 'keyword'; value: string; cased: boolean }
  | { kind: 'all' };

/** Parses the argument of a `search` command. */
export function parseSearch(text: string): Expr {
  const tokens = tokenize(text);
  let pos = 0;
  const peekWord = (w: string) => {
    const t = tokens[pos];
    return t?.kind === 'word' && t.text === w;
  };
  const parseAnd = (): Expr => {
    const parts: Expr[] = [];
    while (pos < tokens.length && tokens[pos]!.kind !== ')') {
      if (peekWord('AND')) {
        pos++;
        continue;
      }
      parts.push(parseOr());
    }
    if (parts.length === 0) throw new SplError("Error in 'search' command: an empty search expression (nothing between parentheses).");
    return parts.length === 1 ? parts[0]! : { kind: 'and', parts };
  };
  const parseOr = (): Expr => {
    const parts = [parseNot()];
    while (peekWord('OR')) {
      pos++;
      if (pos >= tokens.length || tokens[pos]!.kind === ')') throw new SplError("Error in 'search' command: OR without a right operand.");
      parts.push(parseNot());
    }
    return parts.length === 1 ? parts[0]! : { kind: 'or', parts };
  };
  const parseNot = (): Expr => {
    if (peekWord('NOT')) {
      pos++;
      return { kind: 'not', part: parseNot() };
    }
    return parseAtom();
  };
  const parseAtom = (): Expr => {
    const t = tokens[pos];
    if (!t) throw new SplError("Error in 'search' command: the expression ends where a term was expected.");
    if (t.kind === '(') {
      pos++;
      const inner = parseAnd();
      if (tokens[pos]?.kind !== ')') throw new SplError('Unbalanced parentheses.');
      pos++;
      return inner;
    }
    if (t.kind !== 'word') throw new SplError('Unbalanced parentheses.');
    pos++;
    if (t.text === 'OR' || t.text === 'AND') throw new SplError(`Error in 'search' command: ${t.text} without a left operand.`);
    // field IN (a, b, c)
    if (peekWord('IN') && tokens[pos + 1]?.kind === '(') {
      pos += 2;
      const values: string[] = [];
      while (pos < tokens.length && tokens[pos]!.kind !== ')') {
        const v = tokens[pos]!;
        if (v.kind !== 'word') throw new SplError("Error in 'search' command: a nested parenthesis inside IN (…).");
        for (const part of v.text.split(',')) if (part !== '') values.push(unquote(part));
        pos++;
      }
      if (tokens[pos]?.kind !== ')') throw new SplError('Unbalanced parentheses.');
      pos++;
      return { kind: 'in', field: fieldName(t.text), values };
    }
    return term(t.text);
  };
  const expr = parseAnd();
  if (pos < tokens.length) throw new SplError('Unbalanced parentheses.');
  return expr;
}

function fieldName(text: string): string {
  const name = text.startsWith('"') ? unquote(text) : text;
  if (name === '' || (!text.startsWith('"') && !/^[A-Za-z_][A-Za-z0-9_.:-]*$/.test(name))) throw new SplError(`Error in 'search' command: '${text}' is not a field name.`);
  return name;
}

const OPERATORS = ['!=', '>=', '<=', '=', '>', '<'] as const;

function term(text: string): Expr {
  // The first comparison operator outside quotes splits field and value.
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted && ch === '\\') {
      i++;
      continue;
    }
    if (ch === '"') {
      quoted = !quoted;
      continue;
    }
    if (quoted) continue;
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (!op) continue;
    const field = fieldName(text.slice(0, i));
    if (/^(earliest|latest|_index_earliest|_index_latest)$/i.test(field))
      throw new SplError(`the fake takes no time modifier in a search ('${field}'); give earliest_time/latest_time to the job`);
    const { value, cased } = literal(text.slice(i + op.length));
    return { kind: 'cmp', field, op, value, cased };
  }
  const { value, cased } = literal(text);
  if (value === '*' && !cased) return { kind: 'all' };
  return { kind: 'keyword', value, cased };
}

function literal(text: string): { value: string; cased: boolean } {
  const cased = /^CASE\((.*)\)$/is.exec(text);
  if (cased) return { value: literal(cased[1]!).value, cased: true };
  if (text === '') throw new SplError("Error in 'search' command: a comparison without a value.");
  if (text.startsWith('"')) {
    if (!text.endsWith('"') || text.length < 2) throw new SplError(`Error in 'search' command: '${text}' mixes quoted and unquoted text.`);
    return { value: unquote(text), cased: false };
  }
  if (text.includes('"')) throw new SplError(`Error in 'search' command: '${text}' mixes quoted and unquoted text.`);
  return { value: text, cased: false };
}

function wildcard(pattern: string, cased: boolean): RegExp {
  const body = pattern
    .split('*')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, cased ? 's' : 'is');
}

function values(v: Value): string[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return (v as readonly Value[]).flatMap(values);
  return [String(v)];
}

function matches(expr: Expr, row: Row): boolean {
  switch (expr.kind) {
    case 'all':
      return true;
    case 'and':
      return expr.parts.every((p) => matches(p, row));
    case 'or':
      return expr.parts.some((p) => matches(p, row));
    case 'not':
      return !matches(expr.part, row);
    case 'in': {
      const vs = values(row[expr.field]);
      return expr.values.some((p) => vs.some((v) => wildcard(p, false).test(v)));
    }
    case 'keyword': {
      const re = wildcard(expr.value.startsWith('*') || expr.value.endsWith('*') ? expr.value : `*${expr.value}*`, expr.cased);
      const raw = row._raw;
      const texts = raw !== undefined && raw !== null ? values(raw) : Object.entries(row).flatMap(([k, v]) => (k.startsWith('_') ? [] : values(v)));
      return texts.some((t) => re.test(t));
    }
    case 'cmp': {
      const vs = values(row[expr.field]);
      if (expr.op === '=') {
        if (expr.value === '*' && !expr.cased) return vs.length > 0;
        // search matches a value written as a network in CIDR notation by address, not as text.
        const network = expr.value.includes('/') && !expr.cased ? parseNetwork(expr.value) : undefined;
        if (network) {
          const mask = networkMask(network.version, network.prefix);
          return vs.some((v) => {
            const ip = parseIp(v);
            return ip !== undefined && ip.version === network.version && (ip.value & mask) === network.address;
          });
        }
        const re = wildcard(expr.value, expr.cased);
        return vs.some((v) => re.test(v));
      }
      if (expr.op === '!=') {
        if (vs.length === 0) return false;
        const re = wildcard(expr.value, expr.cased);
        return !vs.some((v) => re.test(v));
      }
      const bound = Number(expr.value);
      if (!Number.isFinite(bound)) throw new SplError(`Error in 'search' command: '${expr.field}${expr.op}${expr.value}' compares with a value that is not a number.`);
      return vs.some((v) => {
        const n = Number(v);
        if (v === '' || !Number.isFinite(n)) return false;
        return expr.op === '>' ? n > bound : expr.op === '<' ? n < bound : expr.op === '>=' ? n >= bound : n <= bound;
      });
    }
  }
}

// --- commands -------------------------------------------------------------------------------

type Command = (rows: Row[]) => Row[];

/** Parses a whole search string into commands; throws SplError on anything outside the subset. */
export function compile(spl: string): { generating: boolean; run: (ctx: SplContext) => Row[] } {
  const text = spl.trim();
  if (text === '') throw new SplError('Empty search.');
  const generating = text.startsWith('|');
  const parts = splitCommands(generating ? text.slice(1) : text);
  let source: (ctx: SplContext) => Row[];
  const first = parts.shift()!;
  if (generating) {
    const [name, rest] = commandName(first);
    if (name !== 'makeresults') throw new SplError(`the fake takes only makeresults as a generating command, not '${name}'.`);
    const rows = makeresults(rest);
    source = () => rows.map((r) => ({ ...r }));
  } else {
    const [name, rest] = commandName(first);
    if (name !== 'search') throw new SplError(`Unknown search command '${name}'. A search sent to the REST API starts with 'search' or '|'.`);
    const expr = parseSearch(rest);
    source = (ctx) => ctx.events().filter((r) => matches(expr, r));
  }
  const commands = parts.map(command);
  return {
    generating,
    run: (ctx) => commands.reduce((rows, c) => c(rows), source(ctx)),
  };
}

function commandName(text: string): [string, string] {
  const m = /^([a-z]+)\b\s*([\s\S]*)$/i.exec(text);
  if (!m) throw new SplError(`Unknown search command '${text.split(/\s/)[0] ?? ''}'.`);
  return [m[1]!, m[2]!];
}

function command(text: string): Command {
  if (text === '') throw new SplError('Empty search command between pipes.');
  const [name, rest] = commandName(text);
  switch (name) {
    case 'search': {
      const expr = parseSearch(rest);
      return (rows) => rows.filter((r) => matches(expr, r));
    }
    case 'regex':
      return regexCommand(rest);
    case 'where':
      return whereCommand(rest);
    case 'eval':
      return evalCommand(rest);
    case 'stats':
      return statsCommand(rest);
    case 'sort':
      return sortCommand(rest);
    case 'head': {
      const m = /^(?:limit=)?(\d+)$/.exec(rest.trim());
      if (!m) throw new SplError(`the fake takes 'head N' only, not 'head ${rest}'.`);
      const n = Number(m[1]);
      return (rows) => rows.slice(0, n);
    }
    case 'table':
    case 'fields': {
      const list = rest
        .split(/[\s,]+/)
        .filter((f) => f !== '')
        .map((f) => (f.startsWith('"') ? unquote(f) : f));
      if (list.length === 0 || list.some((f) => f === '-' || f === '+')) throw new SplError(`the fake takes '${name} f1 f2 …' only.`);
      if (list.includes('*')) return (rows) => rows;
      return (rows) => rows.map((r) => Object.fromEntries(list.filter((f) => r[f] !== undefined && r[f] !== null).map((f) => [f, r[f]])));
    }
    case 'makeresults':
      throw new SplError("Error in 'makeresults' command: This command must be the first command of a search.");
    default:
      throw new SplError(`Unknown search command '${name}'.`);
  }
}

function makeresults(args: string): Row[] {
  const m = /^format=json\s+data=("(?:[^"\\]|\\.)*")$/s.exec(args.trim());
  if (!m) throw new SplError(`the fake takes 'makeresults format=json data="[…]"' only, not 'makeresults ${args.slice(0, 60)}'.`);
  let data: unknown;
  try {
    data = JSON.parse(unquote(m[1]!));
  } catch (e) {
    throw new SplError(`Error in 'makeresults' command: the data is not JSON (${(e as Error).message}).`);
  }
  const list = Array.isArray(data) ? data : [data];
  return list.map((o) => {
    if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new SplError("Error in 'makeresults' command: each JSON data item must be an object.");
    return { ...(o as Row) };
  });
}

/** A PCRE pattern as a JavaScript RegExp: a leading `(?ims)` group becomes flags; what JavaScript cannot compile is refused. */
export function pcre(pattern: string): RegExp {
  let flags = '';
  let body = pattern;
  const lead = /^\(\?([ims]+)\)/.exec(body);
  if (lead) {
    flags = [...new Set(lead[1]!.split(''))].join('');
    body = body.slice(lead[0].length);
  }
  // PCRE's absolute anchors have exact JavaScript spellings (no `m`-flag reading applies to them).
  body = body.replace(/(?<!\\)((?:\\\\)*)\\z/g, '$1(?![\\s\\S])').replace(/(?<!\\)((?:\\\\)*)\\A/g, '$1(?<![\\s\\S])');
  const unsupported = pcreOnly(body);
  if (unsupported) throw new SplError(`Error in 'regex' command: the fake cannot run the PCRE construct ${unsupported} in ${pattern}`);
  try {
    return new RegExp(body, flags);
  } catch (e) {
    throw new SplError(`Error in 'regex' command: Encountered the following error while compiling the regex '${pattern}': ${(e as Error).message}`);
  }
}

/** The first construct of a pattern that PCRE has and JavaScript lacks (or reads differently), or null. */
function pcreOnly(body: string): string | null {
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === '\\') {
      const next = body[i + 1] ?? '';
      if ('AZzQEGKhHvVRX'.includes(next) && next !== '') return `\\${next}`;
      i++;
      continue;
    }
    if (ch === '[') {
      for (i++; i < body.length && body[i] !== ']'; i++) if (body[i] === '\\') i++;
      continue;
    }
    if (ch === '(' && body[i + 1] === '?') {
      const rest = body.slice(i + 2);
      if (/^(:|=|!|<=|<!|<[A-Za-z_][A-Za-z0-9_]*>)/.test(rest)) continue;
      return `(?${rest.slice(0, 3)}`;
    }
    if ((ch === '*' || ch === '+' || ch === '?' || ch === '}') && body[i + 1] === '+') return `${ch}+ (possessive)`;
  }
  return null;
}

function regexCommand(args: string): Command {
  const m = /^([A-Za-z_][A-Za-z0-9_.-]*|"(?:[^"\\]|\\.)*")(!?=)("(?:[^"\\]|\\.)*")$/s.exec(args.trim());
  if (!m) throw new SplError(`the fake takes 'regex field="…"' or 'regex field!="…"' only, not 'regex ${args}'.`);
  const field = unquote(m[1]!);
  const negate = m[2] === '!=';
  const re = pcre(unquote(m[3]!));
  return (rows) => rows.filter((r) => values(r[field]).some((v) => re.test(v)) !== negate);
}

// --- where: eval expressions -----------------------------------------------------------------

/** Eval's three-valued logic: null (absent field, failed function) is neither true nor false. */
type EvalValue = string | boolean | null | readonly string[];
type EvalToken = { kind: '(' | ')' | ',' | '==' | '!=' } | { kind: 'name'; text: string } | { kind: 'field'; text: string } | { kind: 'string'; text: string };

function evalTokens(text: string): EvalToken[] {
  const out: EvalToken[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/.test(ch)) i++;
    else if (ch === '(' || ch === ')' || ch === ',') {
      out.push({ kind: ch });
      i++;
    } else if (text.startsWith('==', i) || text.startsWith('!=', i)) {
      out.push({ kind: text.slice(i, i + 2) as '==' | '!=' });
      i += 2;
    } else if (ch === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw new SplError("Error in 'where' command: unbalanced single quotes.");
      out.push({ kind: 'field', text: text.slice(i + 1, close) });
      i = close + 1;
    } else if (ch === '"') {
      const close = closingQuote(text, i);
      out.push({ kind: 'string', text: unquote(text.slice(i, close + 1)) });
      i = close + 1;
    } else {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
      if (!m) throw new SplError(`Error in 'where' command: the fake cannot read '${text.slice(i, i + 20)}'.`);
      out.push({ kind: 'name', text: m[0] });
      i += m[0].length;
    }
  }
  return out;
}

/**
 * `where` over the eval subset the Splunk backend emits: `AND`, `OR`, `NOT`, parentheses, `==`/`!=`,
 * 'field', "string", `lower()`, `isnull()`, `isnotnull()`, `match()` (PCRE, any value of a
 * multivalue field) and `searchmatch()` (the search command's own matching). A row is kept only
 * when the expression is true, not null.
 */
function compileWhere(text: string): (row: Row) => EvalValue {
  const tokens = evalTokens(text);
  let pos = 0;
  const peek = () => tokens[pos];
  const isName = (w: string) => {
    const t = peek();
    return t?.kind === 'name' && t.text.toUpperCase() === w;
  };
  const expect = (kind: EvalToken['kind']) => {
    if (peek()?.kind !== kind) throw new SplError(`Error in 'where' command: expected '${kind}' in ${text}`);
    pos++;
  };
  type Node = (row: Row) => EvalValue;
  const truth = (v: EvalValue): boolean | null => (v === null ? null : v === true ? true : v === false ? false : null);
  const or = (): Node => {
    const parts = [and()];
    while (isName('OR')) {
      pos++;
      parts.push(and());
    }
    return parts.length === 1
      ? parts[0]!
      : (r) => {
          const vs = parts.map((p) => truth(p(r)));
          return vs.includes(true) ? true : vs.includes(null) ? null : false;
        };
  };
  const and = (): Node => {
    const parts = [not()];
    while (isName('AND')) {
      pos++;
      parts.push(not());
    }
    return parts.length === 1
      ? parts[0]!
      : (r) => {
          const vs = parts.map((p) => truth(p(r)));
          return vs.includes(false) ? false : vs.includes(null) ? null : true;
        };
  };
  const not = (): Node => {
    if (isName('NOT')) {
      pos++;
      const inner = not();
      return (r) => {
        const v = truth(inner(r));
        return v === null ? null : !v;
      };
    }
    return compare();
  };
  const compare = (): Node => {
    const left = primary();
    const op = peek();
    if (op?.kind !== '==' && op?.kind !== '!=') return left;
    pos++;
    const right = primary();
    return (r) => {
      const a = left(r);
      const b = right(r);
      if (typeof a !== 'string' || typeof b !== 'string') return null;
      return op.kind === '==' ? a === b : a !== b;
    };
  };
  const scalar = (v: Value): EvalValue => {
    if (v === null || v === undefined) return null;
    if (Array.isArray(v)) return values(v);
    return String(v);
  };
  const primary = (): Node => {
    const t = tokens[pos++];
    if (!t) throw new SplError(`Error in 'where' command: the expression ends early: ${text}`);
    if (t.kind === '(') {
      const inner = or();
      expect(')');
      return inner;
    }
    if (t.kind === 'string') return () => t.text;
    if (t.kind === 'field')
      // Like the keyword search, an event without _raw is read through its fields' values.
      return (r) =>
        t.text === '_raw' && (r._raw === undefined || r._raw === null) ? Object.entries(r).flatMap(([k, v]) => (k.startsWith('_') ? [] : values(v))) : scalar(r[t.text]);
    if (t.kind !== 'name') throw new SplError(`Error in 'where' command: unexpected '${t.kind}' in ${text}`);
    expect('(');
    const args: Node[] = [];
    if (peek()?.kind !== ')') {
      args.push(or());
      while (peek()?.kind === ',') {
        pos++;
        args.push(or());
      }
    }
    expect(')');
    const fn = t.text.toLowerCase();
    const arity = (n: number) => {
      if (args.length !== n) throw new SplError(`Error in 'where' command: ${fn}() takes ${n} arguments.`);
    };
    switch (fn) {
      case 'lower':
        arity(1);
        return (r) => {
          const v = args[0]!(r);
          return typeof v === 'string' ? v.toLowerCase() : null;
        };
      case 'isnull':
      case 'isnotnull':
        arity(1);
        return (r) => (args[0]!(r) === null) === (fn === 'isnull');
      case 'match': {
        arity(2);
        const source = tokens[pos - 2];
        if (source?.kind !== 'string') throw new SplError('the fake takes match() with a literal regex only.');
        const re = pcre(source.text);
        return (r) => {
          const v = args[0]!(r);
          if (v === null || typeof v === 'boolean') return null;
          return (typeof v === 'string' ? [v] : v).some((x) => re.test(x));
        };
      }
      case 'searchmatch': {
        arity(1);
        const source = tokens[pos - 2];
        if (source?.kind !== 'string') throw new SplError('the fake takes searchmatch() with a literal search only.');
        const expr = parseSearch(source.text);
        return (r) => matches(expr, r);
      }
      default:
        throw new SplError(`the fake has no eval function ${fn}().`);
    }
  };
  const root = or();
  if (pos !== tokens.length) throw new SplError(`Error in 'where' command: unexpected text after the expression: ${text}`);
  return root;
}

function whereCommand(args: string): Command {
  const test = compileWhere(args);
  return (rows) => rows.filter((r) => test(r) === true);
}

function evalCommand(args: string): Command {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*floor\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\/\s*(\d+)\s*\)$/.exec(args.trim());
  if (!m) throw new SplError(`the fake takes 'eval x=floor(field/n)' only, not 'eval ${args}'.`);
  const [, target, field, divisor] = m as unknown as [string, string, string, string];
  return (rows) =>
    rows.map((r) => {
      const n = Number(r[field]);
      return Number.isFinite(n) && r[field] !== null && r[field] !== undefined ? { ...r, [target]: Math.floor(n / Number(divisor)) } : r;
    });
}

interface Aggregate {
  readonly fn: 'count' | 'sum' | 'avg' | 'min' | 'max' | 'dc';
  readonly field: string | null;
  readonly as: string;
}

function statsCommand(args: string): Command {
  const byAt = /\s+by\s+/i.exec(args);
  const aggText = byAt ? args.slice(0, byAt.index) : args;
  const by = byAt
    ? args
        .slice(byAt.index + byAt[0].length)
        .split(/[\s,]+/)
        .filter((f) => f !== '')
    : [];
  const aggs: Aggregate[] = [];
  const re = /\s*(count|sum|avg|min|max|dc)(?:\(\s*([A-Za-z_][A-Za-z0-9_.-]*|"(?:[^"\\]|\\.)*")\s*\))?(?:\s+as\s+([A-Za-z_][A-Za-z0-9_]*))?\s*(,|$)/iy;
  let at = 0;
  while (at < aggText.length) {
    re.lastIndex = at;
    const m = re.exec(aggText);
    if (!m || m[0] === '') throw new SplError(`the fake cannot read this stats aggregation: '${aggText.slice(at)}'.`);
    const fn = m[1]!.toLowerCase() as Aggregate['fn'];
    const field = m[2] !== undefined ? unquote(m[2]) : null;
    if (field === null && fn !== 'count') throw new SplError(`Error in 'stats' command: ${fn} needs a field.`);
    aggs.push({ fn, field, as: m[3] ?? (field === null ? fn : `${fn}(${field})`) });
    at = re.lastIndex;
  }
  if (aggs.length === 0) throw new SplError("Error in 'stats' command: no aggregation.");
  return (rows) => {
    const groups = new Map<string, { key: Row; rows: Row[] }>();
    for (const r of rows) {
      const keyValues = by.map((f) => r[f]);
      if (keyValues.some((v) => v === null || v === undefined)) continue;
      const k = JSON.stringify(keyValues);
      const g = groups.get(k) ?? { key: Object.fromEntries(by.map((f, i) => [f, keyValues[i]])), rows: [] };
      g.rows.push(r);
      groups.set(k, g);
    }
    if (by.length === 0 && groups.size === 0) groups.set('[]', { key: {}, rows: [] });
    return [...groups.values()]
      .sort((a, b) => compareValues(JSON.stringify(by.map((f) => a.key[f])), JSON.stringify(by.map((f) => b.key[f]))))
      .map((g) => {
        const out: Row = { ...g.key };
        for (const a of aggs) {
          const vs = a.field === null ? [] : g.rows.flatMap((r) => values(r[a.field!]));
          const nums = vs.map(Number).filter((n) => Number.isFinite(n));
          if (a.fn === 'count') out[a.as] = a.field === null ? g.rows.length : g.rows.filter((r) => values(r[a.field!]).length > 0).length;
          else if (a.fn === 'dc') out[a.as] = new Set(vs).size;
          else if (nums.length > 0) {
            out[a.as] =
              a.fn === 'sum'
                ? nums.reduce((s, n) => s + n, 0)
                : a.fn === 'avg'
                  ? nums.reduce((s, n) => s + n, 0) / nums.length
                  : a.fn === 'min'
                    ? Math.min(...nums)
                    : Math.max(...nums);
          }
        }
        return out;
      });
  };
}

function compareValues(a: unknown, b: unknown): number {
  const x = Number(a);
  const y = Number(b);
  if (Number.isFinite(x) && Number.isFinite(y) && a !== '' && b !== '') return x - y;
  return String(a).localeCompare(String(b));
}

function sortCommand(args: string): Command {
  const m = /^(?:(\d+)\s+)?([+-]?)\s*([A-Za-z_][A-Za-z0-9_.-]*)$/.exec(args.trim());
  if (!m) throw new SplError(`the fake takes 'sort [N] [+|-]field' only, not 'sort ${args}'.`);
  const limit = m[1] === undefined ? 10_000 : Number(m[1]) === 0 ? Infinity : Number(m[1]);
  const desc = m[2] === '-';
  const field = m[3]!;
  return (rows) =>
    [...rows]
      .sort((a, b) => {
        const av = a[field];
        const bv = b[field];
        if (av === undefined || av === null) return 1;
        if (bv === undefined || bv === null) return -1;
        const c = compareValues(av, bv);
        return desc ? -c : c;
      })
      .slice(0, limit);
}

/** The fake's evaluation of one search: compile (throws SplError) and run. */
export function runSearch(spl: string, ctx: SplContext): Row[] {
  return compile(spl).run(ctx);
}
