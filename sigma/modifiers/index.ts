/**
 * Value modifiers, looked up by name in one registry. Per-value modifiers transform a work value
 * left to right; item-level ones (`all`, `neq`, `cased`) only set flags on the detection item.
 */
export { applyModifiers, type ModifiedItem } from './apply';
export { getModifier, MODIFIERS } from './registry';
export type { ModifierContext, ModifierDefinition, RawScalar, WorkValue } from './types';
export { rawToValue } from './work-values';
