/**
 * Canonical form of SPL, ES|QL and KQL (Kusto) queries, for telling a difference in form from a
 * difference in meaning when detflow's output is compared with pySigma's.
 *
 * Only rewrites that cannot change what a query matches are applied:
 *  - the source preamble (`FROM logs-* | WHERE`, `union * | where`) is dropped: index/table
 *    selection is a deployment setting, not part of the rule's logic;
 *  - whitespace, redundant parentheses, operand order of AND/OR (both commutative) and nesting of
 *    the same operator are normalised; `f IN (a, b)` / `f in~ (a, b)` become `f=a OR f=b` /
 *    `f =~ a or f =~ b`;
 *  - string literals are compared by their decoded value (`@"a\b"` = `"a\\b"`, `"x"` = `x` in SPL),
 *    keywords and operators by lower case;
 *  - the case of a literal is ignored only where the target compares case-insensitively: every
 *    value of an SPL search, KQL `=~`/`contains`/`startswith`/`endswith`/`has`/`in~`. ES|QL
 *    comparisons are case-sensitive, so its literals keep their case.
 */

export type QueryLanguage = 'splunk' | 'esql' | 'kql';

type Token = { t: 'str'; v: string } | { t: 'word'; v: string } | { t: 'op'; v: string } | { t: '(' | ')' | ',' | '|' };

type Node = { k: 'atom'; toks: Token[] } | { k: 'not'; x: Node } | { k: 'and' | 'or'; xs: Node[] };

const OP_CHARS = '=!<>~';

function readQuoted(src: string, i: number, quote: string, escapes: boolean, doubled: boolean): [string, number] {
  let out = '';
  let j = i + 1;
  while (j < src.length) {
    const c = src[j]!;
    if (escapes && c === '\\' && j + 1 < src.length) {
      const n = src[j + 1]!;
      out += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : n === '\\' || n === quote ? n : `\\${n}`;
      j += 2;
      continue;
    }
    if (c === quote) {
      if (doubled && src[j + 1] === quote) {
        out += quote;
        j += 2;
        continue;
      }
      return [out, j + 1];
    }
    out += c;
    j++;
  }
  throw new Error(`unterminated string at ${i}`);
}

export function tokenize(src: string, lang: QueryLanguage): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (lang === 'kql' && c === '@' && (src[i + 1] === '"' || src[i + 1] === "'")) {
      // Kusto verbatim string: no escapes, a doubled quote is a quote.
      const [v, j] = readQuoted(src, i + 1, src[i + 1]!, false, true);
      out.push({ t: 'str', v });
      i = j;
    } else if (lang === 'esql' && src.startsWith('"""', i)) {
      const end = src.indexOf('"""', i + 3);
      if (end < 0) throw new Error('unterminated triple-quoted string');
      out.push({ t: 'str', v: src.slice(i + 3, end) });
      i = end + 3;
    } else if (c === '"' || (lang === 'kql' && c === "'")) {
      const [v, j] = readQuoted(src, i, c, true, false);
      out.push({ t: 'str', v });
      i = j;
    } else if (c === '(' || c === ')' || c === ',' || c === '|') {
      out.push({ t: c });
      i++;
    } else if (OP_CHARS.includes(c)) {
      let j = i;
      while (j < src.length && OP_CHARS.includes(src[j]!)) j++;
      out.push({ t: 'op', v: src.slice(i, j) });
      i = j;
    } else {
      let j = i;
      while (j < src.length && !/[\s(),|"]/.test(src[j]!) && !OP_CHARS.includes(src[j]!)) {
        // `in~`, `!contains` and similar Kusto operators keep their `~`/`!`.
        j++;
        if (src[j] === '~' && lang === 'kql') j++;
      }
      out.push({ t: 'word', v: src.slice(i, j) });
      i = j;
    }
  }
  return out;
}

const isWord = (t: Token | undefined, ...words: string[]): boolean => t?.t === 'word' && words.includes(t.v.toLowerCase());

/** Drops the source selection in front of the filter, which is deployment configuration. */
export function stripPreamble(query: string, lang: QueryLanguage): string {
  const q = query.trim();
  if (lang === 'esql') return q.replace(/^from\s+[^|]*\|\s*where\s+/i, '');
  if (lang === 'kql') return q.replace(/^[A-Za-z_*][\w*\s]*\|\s*where\s+/i, '');
  return q;
}

class Parser {
  private i = 0;
  /** Boolean operators from loosest to tightest: Splunk search binds OR tighter than AND. */
  private readonly levels: Array<'and' | 'or'>;
  constructor(
    private readonly toks: Token[],
    private readonly lang: QueryLanguage,
  ) {
    this.levels = lang === 'splunk' ? ['and', 'or'] : ['or', 'and'];
  }

  parse(): Node {
    const n = this.binary(0);
    return n;
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }
  rest(): Token[] {
    return this.toks.slice(this.i);
  }
  private peek(): Token | undefined {
    return this.toks[this.i];
  }
  private startsOperand(t: Token | undefined): boolean {
    return t !== undefined && t.t !== ')' && t.t !== '|' && t.t !== ',' && !isWord(t, 'and', 'or');
  }
  private binary(level: number): Node {
    if (level === this.levels.length) return this.unary();
    const op = this.levels[level]!;
    const xs = [this.binary(level + 1)];
    for (;;) {
      const t = this.peek();
      if (isWord(t, op)) {
        this.i++;
        xs.push(this.binary(level + 1));
      } else if (op === 'and' && this.lang === 'splunk' && this.startsOperand(t)) {
        xs.push(this.binary(level + 1)); // implicit AND by juxtaposition
      } else break;
    }
    return xs.length === 1 ? xs[0]! : { k: op, xs };
  }
  private unary(): Node {
    const t = this.peek();
    if (isWord(t, 'not')) {
      this.i++;
      return { k: 'not', x: this.unary() };
    }
    if (t?.t === '(') {
      this.i++;
      const n = this.binary(0);
      if (this.peek()?.t !== ')') throw new Error('expected )');
      this.i++;
      return n;
    }
    return this.atom();
  }
  private balanced(into: Token[]): void {
    let depth = 0;
    do {
      const t = this.toks[this.i++];
      if (!t) throw new Error('unbalanced parentheses');
      if (t.t === '(') depth++;
      if (t.t === ')') depth--;
      into.push(t);
    } while (depth > 0);
  }
  private atom(): Node {
    const toks: Token[] = [];
    if (this.lang === 'splunk') {
      // field=value | field IN (list) | bare term
      toks.push(this.toks[this.i++]!);
      if (this.peek()?.t === 'op') {
        toks.push(this.toks[this.i++]!);
        const v = this.toks[this.i++];
        if (!v) throw new Error('missing value');
        toks.push(v);
      } else if (isWord(this.peek(), 'in') && this.toks[this.i + 1]?.t === '(') {
        toks.push(this.toks[this.i++]!);
        this.balanced(toks);
      }
      return { k: 'atom', toks };
    }
    for (;;) {
      const t = this.peek();
      if (!t || t.t === ')' || t.t === '|' || isWord(t, 'and', 'or') || (toks.length > 0 && isWord(t, 'not') && this.lang !== 'esql')) break;
      if (t.t === '(') {
        if (toks.length === 0) break;
        this.balanced(toks); // function call arguments or an IN list
        continue;
      }
      toks.push(t);
      this.i++;
    }
    if (toks.length === 0) throw new Error(`empty operand at token ${this.i}`);
    return { k: 'atom', toks };
  }
}

const KEYWORDS = new Set([
  'in',
  'in~',
  '!in',
  '!in~',
  'like',
  'rlike',
  'not',
  'is',
  'null',
  'true',
  'false',
  'contains',
  'contains_cs',
  '!contains',
  '!contains_cs',
  'startswith',
  'startswith_cs',
  '!startswith',
  'endswith',
  'endswith_cs',
  '!endswith',
  'has',
  'has_cs',
  '!has',
  'has_any',
  'has_all',
  'matches',
  'regex',
  'to_lower',
  'to_upper',
  'tolower',
  'toupper',
  'isnull',
  'isnotnull',
  'isempty',
  'isnotempty',
  'cidr_match',
  'ipv4_is_in_range',
  'ipv4_is_match',
  'where',
  'search',
  'field',
]);
/** Kusto operators that compare case-insensitively; their literals are compared lower-cased. */
const KQL_CASELESS = new Set(['=~', '!~', 'contains', '!contains', 'startswith', '!startswith', 'endswith', '!endswith', 'has', '!has', 'in~', '!in~', 'has_any', 'has_all']);

function tokenText(t: Token): string {
  switch (t.t) {
    case 'str':
      return JSON.stringify(t.v);
    case 'word':
      return KEYWORDS.has(t.v.toLowerCase()) ? t.v.toLowerCase() : t.v;
    case 'op':
      return t.v;
    default:
      return t.t;
  }
}

/** Rewrites `f in (a, b)` into an OR of equalities; leaves every other atom as it is. */
function expandIn(toks: Token[], lang: QueryLanguage): Node {
  const at = toks.findIndex((t, i) => i === 1 && isWord(t, 'in', 'in~'));
  if (at !== 1 || toks[2]?.t !== '(' || toks[toks.length - 1]?.t !== ')') return { k: 'atom', toks };
  const items = toks.slice(3, -1).filter((t) => t.t !== ',');
  if (items.some((t) => t.t === '(' || t.t === ')')) return { k: 'atom', toks };
  const word = (toks[1] as { v: string }).v.toLowerCase();
  const eq = lang === 'splunk' ? '=' : lang === 'esql' ? '==' : word === 'in~' ? '=~' : '==';
  const xs: Node[] = items.map((v) => ({ k: 'atom', toks: [toks[0]!, { t: 'op', v: eq }, v.t === 'word' ? { t: 'str', v: v.v } : v] }));
  return xs.length === 1 ? xs[0]! : { k: 'or', xs };
}

function normaliseAtom(toks: Token[], lang: QueryLanguage, segment: number): Token[] {
  let out = toks.map((t) => ({ ...t }) as Token);
  if (lang === 'splunk') {
    // A bare value after `=` is the same literal as the quoted one; search values ignore case.
    out = out.map((t, i) => (t.t === 'word' && i > 0 && out[i - 1]?.t === 'op' ? { t: 'str', v: t.v } : t));
    if (segment === 0) out = out.map((t) => (t.t === 'str' ? { t: 'str', v: t.v.toLowerCase() } : t));
  }
  if (lang === 'kql') {
    const op = out.find((t) => (t.t === 'op' || t.t === 'word') && KQL_CASELESS.has(t.v.toLowerCase()));
    if (op) out = out.map((t) => (t.t === 'str' ? { t: 'str', v: t.v.toLowerCase() } : t));
  }
  return out;
}

function canon(n: Node, lang: QueryLanguage, segment: number): string {
  switch (n.k) {
    case 'atom': {
      const expanded = expandIn(n.toks, lang);
      if (expanded.k !== 'atom') return canon(expanded, lang, segment);
      return normaliseAtom(expanded.toks, lang, segment).map(tokenText).join(' ');
    }
    case 'not':
      return `NOT ${canon(n.x, lang, segment)}`;
    case 'and':
    case 'or': {
      const parts: string[] = [];
      const collect = (x: Node): void => {
        if (x.k === n.k) x.xs.forEach(collect);
        else if (x.k === 'atom' && expandIn(x.toks, lang).k === n.k) collect(expandIn(x.toks, lang));
        else parts.push(canon(x, lang, segment));
      };
      n.xs.forEach(collect);
      const uniq = [...new Set(parts)].sort();
      return uniq.length === 1 ? uniq[0]! : `(${uniq.join(n.k === 'and' ? ' AND ' : ' OR ')})`;
    }
  }
}

/** The canonical text of a query; throws when the query is outside the grammar handled here. */
export function canonicalQuery(query: string, lang: QueryLanguage): string {
  const toks = tokenize(stripPreamble(query, lang), lang);
  // Pipeline stages after the first (`| regex ...`, `| where ...`) are kept in order, each parsed.
  const segments: Token[][] = [[]];
  for (const t of toks) {
    if (t.t === '|') segments.push([]);
    else segments[segments.length - 1]!.push(t);
  }
  return segments
    .map((seg, s) => {
      if (s > 0) {
        // `regex field="..."`, `where ...`, `search ...`: command word, then an expression.
        const [head, ...rest] = seg;
        if (rest.length === 0) return head ? tokenText(head) : '';
        const p = new Parser(rest, lang === 'splunk' && !isWord(head, 'search') ? 'esql' : lang);
        const body = canon(p.parse(), lang, s);
        if (!p.done()) throw new Error(`trailing tokens in stage ${s}`);
        return `${head ? tokenText(head) : ''} ${body}`;
      }
      const p = new Parser(seg, lang);
      const body = canon(p.parse(), lang, 0);
      if (!p.done()) throw new Error(`trailing tokens: ${p.rest().map(tokenText).join(' ')}`);
      return body;
    })
    .join(' | ');
}

/** Whitespace-normalised text, for the "identical" bucket. */
export function squash(query: string): string {
  return query.trim().replace(/\s+/g, ' ');
}

/**
 * Case-folded canonical form: literals lower-cased and `TO_LOWER(f)` read as `f`. Two ES|QL queries
 * equal under this but not under `canonicalQuery` differ only in case handling — a real difference
 * in meaning (a case-sensitive `like` misses `CMD.EXE`), reported as its own bucket.
 */
export function caseFoldedQuery(query: string, lang: QueryLanguage): string {
  const folded = stripPreamble(query, lang).replace(/\bto_lower\(\s*([^()]+?)\s*\)/gi, '$1');
  return canonicalQuery(folded, lang).replace(/"(?:[^"\\]|\\.)*"/g, (m) => m.toLowerCase());
}
