import './regex-engine';
import { translateRegex } from './regex-dialect';
import { regexTokens } from './regex-tokens';

/**
 * Sigma regexes are a PCRE subset. Node has no RE2, so backtracking blow-ups must be caught before
 * a pattern ever runs: `analyseRegex` flags nested quantifiers and quantified alternations whose
 * branches can match the same text, the two shapes behind practically all catastrophic backtracking.
 * What it misses still cannot stall the process: see regex-engine.ts.
 */

export interface RegexFlags {
  readonly ignoreCase: boolean;
  readonly multiline: boolean;
  readonly dotAll: boolean;
}

export interface RegexIssue {
  readonly code: 'nested-quantifier' | 'overlapping-alternation' | 'lookaround' | 'backreference' | 'inline-flags';
  readonly message: string;
}

/** Leading `(?i)`/`(?s)`/`(?m)` groups are PCRE-only; they become JS flags. */
export function extractInlineFlags(pattern: string): { pattern: string; flags: Partial<RegexFlags> } {
  const m = /^\(\?([imsx]+)\)/.exec(pattern);
  if (!m) return { pattern, flags: {} };
  const f = m[1]!;
  return {
    pattern: pattern.slice(m[0].length),
    flags: { ignoreCase: f.includes('i') || undefined, multiline: f.includes('m') || undefined, dotAll: f.includes('s') || undefined },
  };
}

/** Thrown when a pattern holds a construct the evaluator cannot read as the targets do. */
export class RegexTranslationError extends Error {}

/**
 * The pattern as V8 must read it to match what RE2 (the local target) matches: see regex-dialect.ts.
 * Throws RegexTranslationError naming a construct without an exact V8 form, SyntaxError for an
 * invalid pattern.
 */
export function toJsRegExp(pattern: string, flags: RegexFlags): RegExp {
  const inline = extractInlineFlags(pattern);
  const ignoreCase = flags.ignoreCase || inline.flags.ignoreCase === true;
  const multiline = flags.multiline || inline.flags.multiline === true;
  const dotAll = flags.dotAll || inline.flags.dotAll === true;
  const translated = translateRegex(inline.pattern, { multiline, dotAll }, 'v8');
  if (translated.refused !== undefined) throw new RegexTranslationError(translated.refused);
  return new RegExp(translated.pattern, `${ignoreCase ? 'i' : ''}${multiline ? 'm' : ''}${dotAll ? 's' : ''}`);
}

interface GroupFrame {
  /** Whether a quantifier occurs anywhere inside this group (at any depth). */
  hasQuantifier: boolean;
  /** Top-level alternatives of this group, as raw text. */
  branches: string[];
  branchStart: number;
  start: number;
}

function quantifierAt(pattern: string, i: number): number {
  const c = pattern[i];
  if (c === '*' || c === '+') return 1;
  if (c === '?') return 1;
  if (c === '{') {
    const m = /^\{\d*(,\d*)?\}/.exec(pattern.slice(i));
    if (m) return m[0].length;
  }
  return 0;
}

/** `?` and `{0,1}`/`{n}` cannot cause exponential backtracking on their own. */
function isUnbounded(q: string): boolean {
  if (q === '*' || q === '+') return true;
  const m = /^\{(\d*)(,(\d*))?\}$/.exec(q);
  if (!m) return false;
  if (m[2] === undefined) return false;
  if (m[3] === '') return true;
  return Number(m[3]) > 16;
}

/**
 * `{n}`/`{n,m}` with a count of 3 or more: around a group with an unbounded quantifier inside,
 * `(a+){10}` splits a run of input between the iterations in O(n^count) ways.
 */
function repeatsMany(q: string): boolean {
  const m = /^\{(\d*)(,(\d*))?\}$/.exec(q);
  if (!m) return false;
  const most = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]);
  return most >= 3;
}

/** Literal first characters a branch can start with, or null when it starts with a class/any-char. */
function firstChars(branch: string): string | null {
  const c = branch[0];
  if (c === undefined) return '';
  if (c === '\\') return branch.slice(0, 2);
  if (c === '.' || c === '[' || c === '(') return null;
  return c;
}

/** Splits a regex fragment into atoms, each with the quantifier that follows it ('' when none). */
function atomsOf(fragment: string): Array<{ atom: string; quantifier: string }> {
  const out: Array<{ atom: string; quantifier: string }> = [];
  let i = 0;
  while (i < fragment.length) {
    const start = i;
    const c = fragment[i]!;
    if (c === '\\') i += 2;
    else if (c === '[') {
      i++;
      if (fragment[i] === '^') i++;
      if (fragment[i] === ']') i++;
      while (i < fragment.length && fragment[i] !== ']') i += fragment[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '(') {
      let depth = 0;
      do {
        if (fragment[i] === '\\') i++;
        else if (fragment[i] === '(') depth++;
        else if (fragment[i] === ')') depth--;
        i++;
      } while (i < fragment.length && depth > 0);
    } else i++;
    const atom = fragment.slice(start, i);
    const qLen = quantifierAt(fragment, i);
    const quantifier = fragment.slice(i, i + qLen);
    i += qLen;
    if (fragment[i] === '?' || (qLen > 0 && fragment[i] === '+')) i++;
    out.push({ atom, quantifier });
  }
  return out;
}

/** Whether an atom can match the character `ch`; unknown shapes answer yes (conservative). */
function atomCanMatch(atom: string, ch: string): boolean {
  if (atom.startsWith('(')) return true;
  if (atom === '.') return true;
  if (atom.startsWith('[') || /^\\[dwsDWS]$/.test(atom)) {
    try {
      return new RegExp(atom, 'i').test(ch);
    } catch {
      return true;
    }
  }
  const literal = atom.startsWith('\\') ? atom.slice(1) : atom;
  return literal.toLowerCase() === ch.toLowerCase();
}

/**
 * `(\d+\.)+` or `(\w+-)*`: each iteration must end with a literal that no inner repeated atom can
 * consume, so iterations cannot be split in more than one way and backtracking stays linear.
 */
function iterationsAreSeparated(branch: string): boolean {
  const atoms = atomsOf(branch.replace(/^\?:/, ''));
  const last = atoms[atoms.length - 1];
  if (!last || last.quantifier !== '' || last.atom.startsWith('(') || last.atom.startsWith('[') || last.atom === '.') return false;
  if (/^\\[dwsDWSbB]$/.test(last.atom)) return false;
  const sep = last.atom.startsWith('\\') ? last.atom.slice(1) : last.atom;
  if (sep.length !== 1) return false;
  return atoms.slice(0, -1).every((a) => a.quantifier === '' || !atomCanMatch(a.atom, sep));
}

export function analyseRegex(pattern: string): RegexIssue[] {
  const issues: RegexIssue[] = [];
  const stack: GroupFrame[] = [{ hasQuantifier: false, branches: [], branchStart: 0, start: 0 }];
  // Offsets before this belong to a quantifier already read with the atom or group it follows.
  let consumedUntil = 0;
  // Historically this check ends a class at the `]` of `[^]`; re2Incompatibility reads it as PCRE.
  for (const token of regexTokens(pattern, { literalBracketAfterCaret: false })) {
    const i = token.at;
    if (i < consumedUntil) continue;
    if (token.kind === 'escape') {
      if (!token.inClass && /[1-9k]/.test(token.escaped)) {
        issues.push({ code: 'backreference', message: 'backreferences are not supported by RE2-based backends' });
      }
      continue;
    }
    const c = token.char;
    const top = stack[stack.length - 1]!;
    if (c === '(') {
      const ahead = pattern.slice(i + 1, i + 4);
      if (/^\?<?[=!]/.test(ahead)) issues.push({ code: 'lookaround', message: 'lookahead/lookbehind is not allowed in Sigma regexes' });
      else if (ahead.startsWith('?>')) issues.push({ code: 'lookaround', message: 'atomic groups are not allowed in Sigma regexes' });
      else if (/^\?[imsx]+\)/.test(ahead + pattern.slice(i + 4, i + 8)) && i !== 0) {
        issues.push({ code: 'inline-flags', message: 'inline flag groups are only supported at the start of the pattern' });
      }
      stack.push({ hasQuantifier: false, branches: [], branchStart: i + 1, start: i });
      continue;
    }
    if (c === '|') {
      top.branches.push(pattern.slice(top.branchStart, i));
      top.branchStart = i + 1;
      continue;
    }
    if (c === ')') {
      if (stack.length === 1) continue;
      const group = stack.pop()!;
      group.branches.push(pattern.slice(group.branchStart, i));
      const qLen = quantifierAt(pattern, i + 1);
      const q = pattern.slice(i + 1, i + 1 + qLen);
      const parent = stack[stack.length - 1]!;
      if (qLen > 0 && !isUnbounded(q) && repeatsMany(q) && group.hasQuantifier && !(group.branches.length === 1 && iterationsAreSeparated(group.branches[0]!))) {
        issues.push({ code: 'nested-quantifier', message: `nested quantifier at offset ${group.start}: a group repeated ${q} contains an unbounded quantifier` });
      }
      if (qLen > 0 && isUnbounded(q)) {
        if (group.hasQuantifier && !(group.branches.length === 1 && iterationsAreSeparated(group.branches[0]!))) {
          issues.push({ code: 'nested-quantifier', message: `nested quantifier at offset ${group.start}: a quantified group contains another unbounded quantifier` });
        }
        if (group.branches.length > 1) {
          const cleaned = group.branches.map((b) => b.replace(/^\?:/, ''));
          const firsts = cleaned.map(firstChars);
          const seen = new Set<string>();
          let overlap = false;
          for (const f of firsts) {
            if (f === null || f === '' || seen.has(f.toLowerCase())) overlap = true;
            else seen.add(f.toLowerCase());
          }
          if (overlap) {
            issues.push({ code: 'overlapping-alternation', message: `quantified alternation at offset ${group.start} has branches that can match the same text` });
          }
        }
      }
      parent.hasQuantifier ||= group.hasQuantifier || (qLen > 0 && isUnbounded(q));
      consumedUntil = i + 1 + qLen;
      continue;
    }
    const qLen = quantifierAt(pattern, i);
    if (qLen > 0) {
      // A quantifier applies to the previous atom; `+?`/`*?` lazy suffixes are part of it.
      if (isUnbounded(pattern.slice(i, i + qLen))) top.hasQuantifier = true;
      consumedUntil = i + qLen;
      if (pattern[consumedUntil] === '?' || pattern[consumedUntil] === '+') consumedUntil++;
    }
  }
  return issues;
}

/**
 * Why RE2 (DuckDB's and KQL's regex engine) refuses a pattern that JavaScript accepts, or undefined
 * when it takes it: the escapes, groups and quantifiers it lacks, and repeat counts over 1,000.
 */
export function re2Incompatibility(pattern: string): string | undefined {
  for (const token of regexTokens(pattern, { literalBracketAfterCaret: true })) {
    if (token.kind === 'escape') {
      if (/[cuZeGhRKkX]/.test(token.escaped)) return `the escape \\${token.escaped}`;
      continue;
    }
    const { char: c, at: i } = token;
    if (c === '(' && /^\?<[A-Za-z]/.test(pattern.slice(i + 1, i + 4))) return 'named groups written (?<name>…) (RE2 wants (?P<name>…))';
    if ((c === '+' || c === '*' || c === '?' || c === '}') && pattern[i + 1] === '+' && i > 0) return 'possessive quantifiers';
    if (c === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i));
      if (m && (Number(m[1]) > 1000 || (m[2] !== undefined && m[2] !== '' && Number(m[2]) > 1000))) return `the repeat count ${m[0]} (at most 1000)`;
    }
  }
  return undefined;
}

/** Issues that make a pattern unsafe to run on a backtracking engine. */
export function isCatastrophic(issues: readonly RegexIssue[]): boolean {
  return issues.some((i) => i.code === 'nested-quantifier' || i.code === 'overlapping-alternation');
}
