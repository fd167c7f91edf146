/**
 * Sigma regexes are written in PCRE, but each target runs them on its own engine. This rewrites a
 * pattern so that every engine reads it the way the local target does (RE2, DuckDB's engine), or
 * names the construct it cannot carry over. The meaning chosen (docs/decisions, "regex semantics"):
 *  - `$` without the `m` flag is the end of the value (RE2, V8, Java); PCRE would also match before
 *    a final newline, so Splunk gets `\z`;
 *  - `.` is any character but `\n`, `\s` is `[\t\n\f\r ]`, `^`/`$` under `m` are around `\n` only
 *    (RE2); V8 would also stop at `\r`, U+2028 and U+2029 and count Unicode spaces in `\s`;
 *  - PCRE-only escapes (`\A`, `\z`, `\Z`, `\h`, `\e`, `\Q…\E`, `\x{…}`) and POSIX classes
 *    (`[[:digit:]]`) mean what PCRE means; V8 would read most of them as literal letters.
 * Lucene's regex (Elastic) is handled in backends/esql.ts: it is anchored and has no escapes.
 */

export type RegexDialect = 'v8' | 're2' | 'pcre';

export type DialectResult = { readonly pattern: string; readonly refused?: undefined } | { readonly refused: string; readonly pattern?: undefined };

export interface DialectFlags {
  readonly multiline: boolean;
  readonly dotAll: boolean;
}

const ENGINE: Record<RegexDialect, string> = { v8: 'the evaluator (V8)', re2: 'RE2', pcre: 'PCRE' };

/** `\h` (PCRE horizontal space) as class members, in V8 and RE2 spelling. */
const H_MEMBERS = { v8: '\\t \\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000', re2: '\\t \\x{a0}\\x{1680}\\x{180e}\\x{2000}-\\x{200a}\\x{202f}\\x{205f}\\x{3000}' };

/** RE2's `\s`; V8's also holds \v and the Unicode spaces. */
const S_MEMBERS = '\\t\\n\\f\\r ';
/** Everything outside S_MEMBERS, in V8's code-unit terms, for a `\S` inside a class. */
const NOT_S_MEMBERS = '\\x00-\\x08\\x0b\\x0e-\\x1f\\x21-\\uffff';

export const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alpha: 'A-Za-z',
  digit: '0-9',
  alnum: '0-9A-Za-z',
  upper: 'A-Z',
  lower: 'a-z',
  space: '\\t\\n\\x0b\\f\\r ',
  blank: ' \\t',
  xdigit: '0-9A-Fa-f',
  punct: '!-\\/:-@\\[-`{-~',
  cntrl: '\\x00-\\x1f\\x7f',
  print: ' -~',
  graph: '!-~',
  word: '0-9A-Za-z_',
  ascii: '\\x00-\\x7f',
};

/** Escapes V8 reads as RE2 and PCRE do; any other letter escape V8 would read as the letter itself. */
const V8_SAME = new Set('dDwWbBnrtfvk');

function literal(text: string, inClass: boolean): string {
  return inClass ? text.replace(/[\\\]^-]/g, (m) => `\\${m}`) : text.replace(/[\\^$.*+?()[\]{}|/-]/g, (m) => `\\${m}`);
}

/**
 * The pattern for `dialect`, given the effective `m`/`s` flags (inline flags already removed from
 * the pattern and merged into them), or the construct it has no exact form for.
 */
export function translateRegex(pattern: string, flags: DialectFlags, dialect: RegexDialect): DialectResult {
  const refuse = (construct: string): DialectResult => ({ refused: `${construct} (${ENGINE[dialect]} has no exact equivalent)` });
  const v8 = dialect === 'v8';
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === undefined) {
        // Left for the engine to reject as the syntax error it is.
        out += '\\';
        break;
      }
      i++;
      if (e === 'Q') {
        const end = pattern.indexOf('\\E', i + 1);
        const text = end < 0 ? pattern.slice(i + 1) : pattern.slice(i + 1, end);
        out += dialect === 'pcre' ? `\\Q${text}\\E` : literal(text, inClass);
        i = end < 0 ? pattern.length : end + 1;
        continue;
      }
      if (e === 'E') continue; // PCRE ignores an \E that ends no \Q
      if (e === 'x' && pattern[i + 1] === '{') {
        const m = /^\{([0-9a-fA-F]{1,6})\}/.exec(pattern.slice(i + 1));
        if (!m) return refuse('the escape \\x{…} without hex digits');
        if (v8) {
          const code = parseInt(m[1]!, 16);
          if (code > 0xffff) return refuse(`the escape \\x{${m[1]}} beyond U+FFFF`);
          out += `\\u${code.toString(16).padStart(4, '0')}`;
        } else out += `\\x{${m[1]}}`;
        i += m[0].length;
        continue;
      }
      if (e === 'x' && v8 && !/^[0-9a-fA-F]{2}/.test(pattern.slice(i + 1, i + 3))) return refuse('the escape \\x without two hex digits');
      if (dialect === 'pcre') {
        // PCRE's \v is a class of vertical spaces; RE2's and V8's is the tab character U+000B.
        out += e === 'v' ? '\\x0b' : `\\${e}`;
        continue;
      }
      if (e === 'h') {
        out += inClass ? H_MEMBERS[dialect] : `[${H_MEMBERS[dialect]}]`;
        continue;
      }
      if (e === 'H') {
        if (inClass) return refuse('\\H inside a character class');
        out += `[^${H_MEMBERS[dialect]}]`;
        continue;
      }
      if (e === 'e') {
        out += '\\x1b';
        continue;
      }
      if (!v8) {
        if (e === 'Z') return refuse('the anchor \\Z (end of value or before a final newline)');
        out += `\\${e}`;
        continue;
      }
      if (inClass) {
        if (e === 's') out += S_MEMBERS;
        else if (e === 'S') out += NOT_S_MEMBERS;
        else if (/[A-Za-z]/.test(e) && !V8_SAME.has(e) && e !== 'x') return refuse(`the escape \\${e} inside a character class`);
        else out += `\\${e}`;
        continue;
      }
      switch (e) {
        case 'A':
          out += flags.multiline ? '(?<![\\s\\S])' : '^';
          continue;
        case 'z':
          out += flags.multiline ? '(?![\\s\\S])' : '$';
          continue;
        case 'Z':
          out += flags.multiline ? '(?=\\n?(?![\\s\\S]))' : '(?=\\n?$)';
          continue;
        case 's':
          out += `[${S_MEMBERS}]`;
          continue;
        case 'S':
          out += `[^${S_MEMBERS}]`;
          continue;
      }
      if (/[A-Za-z]/.test(e) && !V8_SAME.has(e) && e !== 'x') return refuse(`the escape \\${e}`);
      out += `\\${e}`;
      continue;
    }
    if (inClass) {
      if (c === '[' && pattern[i + 1] === ':') {
        const m = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(i));
        if (m) {
          const members = POSIX_CLASSES[m[2]!];
          if (members === undefined) return { refused: `the unknown POSIX class [:${m[2]}:]` };
          if (v8) {
            if (m[1]) return refuse(`the negated POSIX class [:^${m[2]}:]`);
            out += members;
          } else out += m[0];
          i += m[0].length - 1;
          continue;
        }
      }
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += '[';
      if (pattern[i + 1] === '^') {
        out += '^';
        i++;
      }
      // PCRE and RE2 read a `]` first in a class as a member; V8 would close an empty class.
      if (pattern[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (c === '$') {
      if (v8 && flags.multiline) out += '(?![^\\n])';
      else if (dialect === 'pcre' && !flags.multiline) out += '\\z';
      else out += '$';
      continue;
    }
    if (v8 && c === '^' && flags.multiline) {
      out += '(?<![^\\n])';
      continue;
    }
    if (v8 && c === '.' && !flags.dotAll) {
      out += '[^\\n]';
      continue;
    }
    if (v8 && c === '(' && pattern.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
      continue;
    }
    out += c;
  }
  return { pattern: out };
}
