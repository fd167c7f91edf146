import type { SourcePosition } from '../errors';
import type { SigmaValue } from '../model';

export type RawScalar = string | number | boolean | null;

/** Before the first modifier converts it, a value is still the YAML scalar (re/cidr/... need it raw). */
export type WorkValue = SigmaValue | { readonly kind: 'raw'; readonly value: RawScalar };

export interface ModifierContext {
  readonly name: string;
  readonly index: number;
  readonly chain: readonly string[];
  readonly field: string | null;
  readonly pos: SourcePosition;
  readonly source?: string;
}

export interface ModifierDefinition {
  readonly name: string;
  readonly summary: string;
  readonly category: 'string' | 'encoding' | 'expansion' | 'regex' | 'regex-flag' | 'type' | 'compare' | 'time' | 'item';
  /** Spec: must be the first modifier of the chain. */
  readonly first?: boolean;
  readonly apply?: (value: WorkValue, ctx: ModifierContext) => WorkValue;
}
