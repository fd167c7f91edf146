import type { SigmaRule } from '../model';
import type { LowerCache } from './lower-cache';

export type SigmaEvent = Readonly<Record<string, unknown>>;
export type EventMatcher = (event: SigmaEvent) => boolean;

export interface CompileOptions {
  /** Values for `expand` placeholders, e.g. `{ Administrators: ['admin1', 'admin2'] }`. */
  readonly placeholders?: Readonly<Record<string, readonly string[]>>;
  /** Sigma field name → event field name(s); several names are tried in order. */
  readonly fieldMapping?: Readonly<Record<string, string | readonly string[]>>;
  /** Restrict keyword searches to these fields. */
  readonly keywordFields?: readonly string[];
  /** Regex input bound in characters (default 65,536). */
  readonly maxRegexInput?: number;
  /** Compile regexes the safety analysis flags as catastrophic instead of rejecting the rule. */
  readonly allowUnsafeRegex?: boolean;
}

export interface CompiledRule {
  readonly rule: SigmaRule;
  readonly match: EventMatcher;
  /** Names of the search identifiers that match (diagnostics; slower than `match`). */
  readonly matchedIdentifiers: (event: SigmaEvent) => string[];
}

/** What every item of one rule is compiled with (internal to the evaluator). */
export interface ItemCompiler {
  readonly options: CompileOptions;
  readonly cache: LowerCache;
  readonly maxRegexInput: number;
}

/** Scalar test on one field value (arrays are unrolled by the caller). */
/** `element` is set for array elements, which must bypass the per-field lower-case memo. */
export type ScalarTest = (raw: unknown, event: SigmaEvent, element?: boolean) => boolean;
