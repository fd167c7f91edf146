import { SigmaError, type SourcePosition } from '../errors';
import type { SigmaValue } from '../model';
import { MODIFIERS } from './registry';
import type { ModifierDefinition, RawScalar, WorkValue } from './types';
import { rawToValue } from './work-values';

export interface ModifiedItem {
  readonly linking: 'or' | 'and';
  readonly negated: boolean;
  readonly cased: boolean;
  readonly values: SigmaValue[];
}

function applyCased(value: SigmaValue): SigmaValue {
  switch (value.kind) {
    case 'string':
    case 'fieldref':
    case 'placeholder':
      return { ...value, cased: true };
    case 'expansion':
      return { kind: 'expansion', values: value.values.map(applyCased) };
    default:
      return value;
  }
}

/**
 * Validates a modifier chain (unknown names, first-only modifiers, repeats) and applies it to each
 * value. Throws SigmaError with the item's position on the first problem.
 */
export function applyModifiers(chain: readonly string[], values: readonly RawScalar[], field: string | null, pos: SourcePosition, source?: string): ModifiedItem {
  const defs: ModifierDefinition[] = [];
  chain.forEach((name, index) => {
    const def = MODIFIERS.get(name);
    if (!def) throw new SigmaError('modifier-unknown', `unknown modifier '${name}'`, pos, source);
    if (def.first && index !== 0) {
      throw new SigmaError('modifier-invalid', `modifier '${name}' must be the first modifier`, pos, source);
    }
    defs.push(def);
  });
  const names = new Set(chain);
  const linking = names.has('all') ? 'and' : 'or';
  const negated = names.has('neq');
  const cased = names.has('cased');
  if (names.has('exists') && chain.length > 1) {
    throw new SigmaError('modifier-invalid', "'exists' cannot be combined with other modifiers", pos, source);
  }
  const out: SigmaValue[] = [];
  for (const raw of values) {
    let work: WorkValue = { kind: 'raw', value: raw };
    if (raw === null && chain.some((n) => n !== 'all' && n !== 'neq' && n !== 'cased')) {
      throw new SigmaError('modifier-value-type', `null cannot be combined with modifiers (${chain.join('|')})`, pos, source);
    }
    defs.forEach((def, index) => {
      if (def.apply) work = def.apply(work, { name: def.name, index, chain, field, pos, source });
    });
    let value: SigmaValue = work.kind === 'raw' ? rawToValue(work.value) : work;
    if (cased) value = applyCased(value);
    out.push(value);
  }
  return { linking, negated, cased, values: out };
}
