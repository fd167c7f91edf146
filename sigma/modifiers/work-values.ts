import { SigmaError } from '../errors';
import type { SigmaValue, StringValue } from '../model';
import { numberText } from '../number-text';
import { normaliseParts, parseSigmaString, type StringPart } from '../string';
import type { ModifierContext, RawScalar, WorkValue } from './types';

/** Conversions of the value a modifier chain works on, shared by the modifiers. */

export function fail(ctx: ModifierContext, message: string, code: 'modifier-invalid' | 'modifier-value-type' | 'regex-invalid' = 'modifier-value-type'): never {
  throw new SigmaError(code, `modifier '${ctx.name}': ${message}`, ctx.pos, ctx.source);
}

function scalarToString(value: RawScalar): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** The conversion applied to a value no modifier consumed raw. */
export function rawToValue(value: RawScalar): SigmaValue {
  if (value === null) return { kind: 'null' };
  if (typeof value === 'number') return { kind: 'number', value, text: numberText(value) };
  if (typeof value === 'boolean') return { kind: 'boolean', value };
  return { kind: 'string', parts: normaliseParts(parseSigmaString(value)), cased: false, binary: false };
}

export function asString(value: WorkValue, ctx: ModifierContext): StringValue {
  if (value.kind === 'raw') {
    const text = scalarToString(value.value);
    if (text === undefined) fail(ctx, 'null cannot be transformed');
    return rawToValue(text) as StringValue;
  }
  if (value.kind === 'string') return value;
  if (value.kind === 'number' || value.kind === 'boolean') {
    return { kind: 'string', parts: [value.kind === 'number' ? value.text : String(value.value)], cased: false, binary: false };
  }
  return fail(ctx, `expects a string value, got ${value.kind}`);
}

export function mapExpansion(value: WorkValue, fn: (v: WorkValue) => WorkValue): WorkValue {
  if (value.kind === 'expansion') return { kind: 'expansion', values: value.values.map((v) => fn(v) as SigmaValue) };
  return fn(value);
}

export function withParts(value: StringValue, parts: StringPart[]): StringValue {
  return { ...value, parts: normaliseParts(parts) };
}

export function numberOf(value: WorkValue, ctx: ModifierContext): number {
  if (value.kind === 'raw' && typeof value.value === 'number') return value.value;
  if (value.kind === 'number') return value.value;
  return fail(ctx, 'expects a number (a quoted number is a string)');
}
