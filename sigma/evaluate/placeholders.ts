import { SigmaError } from '../errors';
import type { DetectionItem, PlaceholderValue, StringValue } from '../model';
import { normaliseParts, parseSigmaString, type StringPart } from '../string';
import type { CompileOptions } from './types';

/** Turns `%name%` placeholders into concrete string values (cartesian product over placeholders). */
export function resolvePlaceholders(value: PlaceholderValue, placeholders: CompileOptions['placeholders'], pos: DetectionItem['pos']): StringValue[] {
  let variants: StringPart[][] = [[]];
  for (const part of value.parts) {
    if (typeof part === 'object' && 'placeholder' in part) {
      const replacement = placeholders?.[part.placeholder];
      if (replacement === undefined) {
        throw new SigmaError('placeholder-unresolved', `placeholder %${part.placeholder}% has no value`, pos);
      }
      const next: StringPart[][] = [];
      for (const v of variants) for (const r of replacement) next.push([...v, ...parseSigmaString(r)]);
      variants = next;
    } else {
      for (const v of variants) v.push(part);
    }
  }
  return variants.map((parts) => ({ kind: 'string', parts: normaliseParts(parts), cased: value.cased, binary: false }));
}
