import { RegexTranslationError, extractInlineFlags, toJsRegExp } from '../regex';
import type { ModifierContext, WorkValue } from './types';
import { fail } from './work-values';

/** `re` and its flag modifiers; `wrapRegex` is what contains/startswith/endswith do to a regex. */

export function regexValue(value: WorkValue, ctx: ModifierContext): WorkValue {
  if (value.kind !== 'raw' || typeof value.value !== 'string') fail(ctx, 'expects a string pattern');
  const pattern = value.value;
  const inline = extractInlineFlags(pattern);
  try {
    toJsRegExp(pattern, { ignoreCase: false, multiline: false, dotAll: false });
  } catch (e) {
    // A construct the evaluator cannot carry over is refused by each consumer (evaluator, backends)
    // naming it; the rule itself stays valid Sigma.
    if (!(e instanceof RegexTranslationError)) fail(ctx, `invalid regular expression: ${(e as Error).message}`, 'regex-invalid');
  }
  return {
    kind: 'regex',
    pattern,
    ignoreCase: inline.flags.ignoreCase ?? false,
    multiline: inline.flags.multiline ?? false,
    dotAll: inline.flags.dotAll ?? false,
  };
}

export function regexFlag(flag: 'ignoreCase' | 'multiline' | 'dotAll') {
  return (value: WorkValue, ctx: ModifierContext): WorkValue => {
    if (value.kind !== 'regex') fail(ctx, 'regex flags are only allowed after `re`', 'modifier-invalid');
    return { ...value, [flag]: true };
  };
}

export function wrapRegex(pattern: string, front: boolean, back: boolean): string {
  let p = pattern;
  if (front && !p.startsWith('^') && !p.startsWith('.*')) p = `.*${p}`;
  if (back && !(p.endsWith('$') && !p.endsWith('\\$')) && !p.endsWith('.*')) p = `${p}.*`;
  return p;
}
