import { SigmaError, type SourcePosition } from './errors';
import type { ConditionNode } from './model';

/**
 * Condition grammar (spec §4), precedence from loosest to tightest: or < and < not < `x of` < ().
 *   or_expr  := and_expr ("or" and_expr)*
 *   and_expr := not_expr ("and" not_expr)*
 *   not_expr := "not" not_expr | atom
 *   atom     := "(" or_expr ")" | ("1"|"any"|"all") "of" (PATTERN|"them") | IDENT
 */

type TokenKind = 'lparen' | 'rparen' | 'word' | 'end';
interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly offset: number;
}

const WORD_CHAR = /[A-Za-z0-9_*\-]/;
const IDENT_RE = /^[A-Za-z0-9_-]+$/;
const PATTERN_RE = /^[A-Za-z0-9_*-]+$/;
const KEYWORDS = new Set(['and', 'or', 'not', 'of', 'them']);

export interface ConditionParseOptions {
  /** Where the condition text starts in the file, so token errors point at the exact column. */
  readonly basePos?: SourcePosition;
  /** Name of the thing conditions refer to, for messages ("identifier", "rule"). */
  readonly refNoun?: string;
  readonly source?: string;
}

function posAt(base: SourcePosition | undefined, offset: number): SourcePosition {
  if (!base) return { line: 1, column: offset + 1 };
  return { line: base.line, column: base.column + offset };
}

export function tokenizeCondition(text: string, options: ConditionParseOptions = {}): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (c === '(') {
      tokens.push({ kind: 'lparen', text: c, offset: i++ });
    } else if (c === ')') {
      tokens.push({ kind: 'rparen', text: c, offset: i++ });
    } else if (c === '|') {
      // Checked before anything else so `sel | count() > 5` reports the legacy syntax, not the `>`.
      throw new SigmaError(
        'condition-legacy-aggregation',
        'legacy aggregation syntax (`| count() ...`, `| near ...`) is not Sigma 2.x; use a correlation rule',
        posAt(options.basePos, i),
        options.source,
      );
    } else if (WORD_CHAR.test(c)) {
      const start = i;
      while (i < text.length && WORD_CHAR.test(text[i]!)) i++;
      tokens.push({ kind: 'word', text: text.slice(start, i), offset: start });
    } else {
      throw new SigmaError('condition-syntax', `unexpected character '${c}' in condition`, posAt(options.basePos, i), options.source);
    }
  }
  tokens.push({ kind: 'end', text: '', offset: text.length });
  return tokens;
}

/** `*` in an `of` pattern is the only wildcard; everything else is literal. */
export function patternToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${body}$`);
}

/** Identifiers an `x of` selector covers; `_`-prefixed ones only when the pattern itself starts with `_`. */
export function resolveSelector(pattern: string, them: boolean, names: readonly string[]): string[] {
  if (them) return names.filter((n) => !n.startsWith('_'));
  const re = patternToRegExp(pattern);
  const allowUnderscore = pattern.startsWith('_');
  return names.filter((n) => re.test(n) && (allowUnderscore || !n.startsWith('_')));
}

/** Deeper nesting than any real rule uses; it bounds recursion so hostile input cannot overflow the stack. */
export const MAX_CONDITION_DEPTH = 100;

class ConditionParser {
  private index = 0;
  private depth = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly names: readonly string[],
    private readonly nameSet: ReadonlySet<string>,
    private readonly options: ConditionParseOptions,
  ) {}

  parse(): ConditionNode {
    const node = this.parseOr();
    const tok = this.peek();
    if (tok.kind !== 'end') throw this.error(tok, `unexpected '${tok.text}' after end of expression`);
    return node;
  }

  private peek(ahead = 0): Token {
    return this.tokens[Math.min(this.index + ahead, this.tokens.length - 1)]!;
  }
  private next(): Token {
    const tok = this.peek();
    if (this.index < this.tokens.length - 1) this.index++;
    return tok;
  }
  private pos(tok: Token): SourcePosition {
    return posAt(this.options.basePos, tok.offset);
  }
  private error(tok: Token, message: string): SigmaError {
    return new SigmaError('condition-syntax', message, this.pos(tok), this.options.source);
  }
  private isWord(tok: Token, word: string): boolean {
    return tok.kind === 'word' && tok.text === word;
  }

  private parseOr(): ConditionNode {
    const first = this.peek();
    const operands = [this.parseAnd()];
    while (this.isWord(this.peek(), 'or')) {
      this.next();
      operands.push(this.parseAnd());
    }
    return operands.length === 1 ? operands[0]! : { kind: 'or', operands, pos: this.pos(first) };
  }

  private parseAnd(): ConditionNode {
    const first = this.peek();
    const operands = [this.parseNot()];
    while (this.isWord(this.peek(), 'and')) {
      this.next();
      operands.push(this.parseNot());
    }
    return operands.length === 1 ? operands[0]! : { kind: 'and', operands, pos: this.pos(first) };
  }

  private nest(tok: Token): void {
    if (++this.depth > MAX_CONDITION_DEPTH) {
      throw new SigmaError('condition-too-deep', `the condition nests more than ${MAX_CONDITION_DEPTH} levels of 'not' and parentheses`, this.pos(tok), this.options.source);
    }
  }

  private parseNot(): ConditionNode {
    const tok = this.peek();
    if (this.isWord(tok, 'not')) {
      this.next();
      this.nest(tok);
      const operand = this.parseNot();
      this.depth--;
      return { kind: 'not', operand, pos: this.pos(tok) };
    }
    return this.parseAtom();
  }

  private parseAtom(): ConditionNode {
    const tok = this.next();
    if (tok.kind === 'lparen') {
      this.nest(tok);
      const inner = this.parseOr();
      this.depth--;
      const close = this.next();
      if (close.kind !== 'rparen') throw this.error(close, `expected ')' to close '(' at column ${this.pos(tok).column}`);
      return inner;
    }
    if (tok.kind !== 'word') {
      throw this.error(tok, tok.kind === 'end' ? 'condition ends where an operand was expected' : `unexpected '${tok.text}'`);
    }
    if ((tok.text === '1' || tok.text === 'any' || tok.text === 'all') && this.isWord(this.peek(), 'of')) {
      this.next();
      const target = this.next();
      if (target.kind !== 'word' || (target.text !== 'them' && (KEYWORDS.has(target.text) || !PATTERN_RE.test(target.text)))) {
        throw this.error(target, `expected an identifier pattern or 'them' after '${tok.text} of'`);
      }
      const them = target.text === 'them';
      const targets = resolveSelector(target.text, them, this.names);
      if (targets.length === 0) {
        throw new SigmaError(
          'condition-pattern-no-match',
          `'${tok.text} of ${target.text}' matches no ${this.options.refNoun ?? 'identifier'}`,
          this.pos(target),
          this.options.source,
        );
      }
      return { kind: 'of', quantifier: tok.text === 'all' ? 'all' : 'any', pattern: target.text, them, targets, pos: this.pos(tok) };
    }
    if (KEYWORDS.has(tok.text)) throw this.error(tok, `unexpected keyword '${tok.text}'`);
    if (!IDENT_RE.test(tok.text)) {
      throw this.error(tok, `'${tok.text}': wildcards are only allowed after '1 of' / 'all of'`);
    }
    if (!this.nameSet.has(tok.text)) {
      throw new SigmaError(
        'condition-undefined-identifier',
        `condition references undefined ${this.options.refNoun ?? 'identifier'} '${tok.text}'`,
        this.pos(tok),
        this.options.source,
      );
    }
    return { kind: 'ref', name: tok.text, pos: this.pos(tok) };
  }
}

/**
 * Parses one condition string against the defined identifier names. Selectors are resolved here, so
 * evaluators and backends never re-run pattern matching.
 */
export function parseCondition(text: string, names: readonly string[], options: ConditionParseOptions = {}): ConditionNode {
  const tokens = tokenizeCondition(text, options);
  return new ConditionParser(tokens, names, new Set(names), options).parse();
}

/** Identifier names a condition refers to, directly or through selectors. */
export function referencedNames(node: ConditionNode, into: Set<string> = new Set()): Set<string> {
  switch (node.kind) {
    case 'ref':
      into.add(node.name);
      break;
    case 'of':
      for (const t of node.targets) into.add(t);
      break;
    case 'not':
      referencedNames(node.operand, into);
      break;
    case 'and':
    case 'or':
      for (const o of node.operands) referencedNames(o, into);
      break;
  }
  return into;
}

/** Canonical, fully parenthesised text form; handy in tests and error messages. */
export function formatCondition(node: ConditionNode): string {
  switch (node.kind) {
    case 'ref':
      return node.name;
    case 'of':
      return `${node.quantifier === 'all' ? 'all' : '1'} of ${node.pattern}`;
    case 'not':
      return `not ${formatCondition(node.operand)}`;
    case 'and':
    case 'or':
      return `(${node.operands.map(formatCondition).join(` ${node.kind} `)})`;
  }
}
