import type { ComparisonOp, TimePart } from '../model';
import type { ModifierContext, WorkValue } from './types';
import { fail, numberOf } from './work-values';

/** Numeric comparisons (gt, gte, lt, lte) and time parts of a timestamp (minute ... year). */

export function comparison(op: ComparisonOp) {
  return (value: WorkValue, ctx: ModifierContext): WorkValue => {
    if (value.kind === 'timepart') {
      if (value.op !== 'eq') fail(ctx, 'only one comparison is allowed', 'modifier-invalid');
      return { ...value, op };
    }
    return { kind: 'compare', op, value: numberOf(value, ctx) };
  };
}

export function timePart(part: TimePart) {
  return (value: WorkValue, ctx: ModifierContext): WorkValue => ({ kind: 'timepart', part, op: 'eq', value: numberOf(value, ctx) });
}
