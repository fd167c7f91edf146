/**
 * The one reading of a regex's characters that the checks in regex.ts share: an escape is the
 * backslash and the character after it, a character class runs from `[` to its closing `]` and is
 * opaque except for its escapes, and every other character is a token of its own.
 */

export type RegexToken =
  | { readonly kind: 'escape'; readonly at: number; /** '' for a trailing backslash. */ readonly escaped: string; readonly inClass: boolean }
  | { readonly kind: 'char'; readonly at: number; readonly char: string };

export interface ClassReading {
  /**
   * Whether a `]` right after `[^` is a literal member, as PCRE and RE2 read it. When false it ends
   * the class (as JavaScript reads `[^]`). A `]` right after `[` is a literal member either way.
   */
  readonly literalBracketAfterCaret: boolean;
}

/** Escapes anywhere and the characters outside classes, in pattern order; `at` is the offset. */
export function regexTokens(pattern: string, classes: ClassReading): RegexToken[] {
  const tokens: RegexToken[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      tokens.push({ kind: 'escape', at: i, escaped: pattern[i + 1] ?? '', inClass });
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (classes.literalBracketAfterCaret && pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++;
      continue;
    }
    tokens.push({ kind: 'char', at: i, char: c });
  }
  return tokens;
}
