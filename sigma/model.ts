import type { SigmaError, SourcePosition } from './errors';
import type { StringPart } from './string';

export type { SourcePosition } from './errors';
export type { StringPart, Wildcard } from './string';

// ---------------------------------------------------------------------------------------------
// Values after modifiers. A detection item holds a list of these; the evaluator and every backend
// dispatch on `kind`, so adding a kind is a compile error everywhere it is not yet handled.
// ---------------------------------------------------------------------------------------------

export type ComparisonOp = 'gt' | 'gte' | 'lt' | 'lte';
export type TimePart = 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';

export interface StringValue {
  readonly kind: 'string';
  readonly parts: readonly StringPart[];
  readonly cased: boolean;
  /** True after utf16/wide: each char is one byte (latin-1), so base64 must not re-encode as UTF-8. */
  readonly binary: boolean;
}
export interface NumberValue {
  readonly kind: 'number';
  readonly value: number;
  /**
   * The decimal text the number matches (sigma/number-text.ts): an integer's exact digits, however
   * large (`9007199254740993` stays itself though `value` rounds), otherwise the shortest text.
   */
  readonly text: string;
}
export interface BooleanValue {
  readonly kind: 'boolean';
  readonly value: boolean;
}
export interface NullValue {
  readonly kind: 'null';
}
export interface RegexValue {
  readonly kind: 'regex';
  readonly pattern: string;
  readonly ignoreCase: boolean;
  readonly multiline: boolean;
  readonly dotAll: boolean;
}
export interface CidrValue {
  readonly kind: 'cidr';
  readonly network: string;
  readonly version: 4 | 6;
  readonly prefix: number;
  /** Network address as a bigint, masked to the prefix. */
  readonly address: bigint;
}
export interface CompareValue {
  readonly kind: 'compare';
  readonly op: ComparisonOp;
  readonly value: number;
}
export interface ExistsValue {
  readonly kind: 'exists';
  readonly value: boolean;
}
export interface FieldRefValue {
  readonly kind: 'fieldref';
  readonly field: string;
  readonly match: 'equals' | 'contains' | 'startswith' | 'endswith';
  readonly cased: boolean;
}
export interface TimePartValue {
  readonly kind: 'timepart';
  readonly part: TimePart;
  readonly op: ComparisonOp | 'eq';
  readonly value: number;
}
export interface PlaceholderPart {
  readonly placeholder: string;
}
export interface PlaceholderValue {
  readonly kind: 'placeholder';
  readonly parts: readonly (StringPart | PlaceholderPart)[];
  readonly cased: boolean;
}
/** Alternatives produced by windash/base64offset: always OR-ed, even under `all`. */
export interface ExpansionValue {
  readonly kind: 'expansion';
  readonly values: readonly SigmaValue[];
}

export type SigmaValue =
  | StringValue
  | NumberValue
  | BooleanValue
  | NullValue
  | RegexValue
  | CidrValue
  | CompareValue
  | ExistsValue
  | FieldRefValue
  | TimePartValue
  | PlaceholderValue
  | ExpansionValue;

/** A value as written in YAML, kept for lint (quoted numbers, control characters, positions). */
export interface RawValue {
  readonly value: string | number | boolean | null;
  /** For a plain YAML number: its exact decimal text (numberText of what was written). */
  readonly numberText?: string;
  readonly quoted: boolean;
  readonly pos: SourcePosition;
}

export interface DetectionItem {
  /** null for keyword (field-less) searches. */
  readonly field: string | null;
  readonly modifiers: readonly string[];
  /** `all` turns the value list into AND. */
  readonly linking: 'or' | 'and';
  /** `neq`: pySigma semantics, the whole item is negated. */
  readonly negated: boolean;
  readonly values: readonly SigmaValue[];
  readonly raw: readonly RawValue[];
  readonly pos: SourcePosition;
}

export type DetectionNode =
  | { readonly kind: 'item'; readonly item: DetectionItem }
  | { readonly kind: 'and'; readonly children: readonly DetectionNode[]; readonly pos: SourcePosition }
  | { readonly kind: 'or'; readonly children: readonly DetectionNode[]; readonly pos: SourcePosition };

export interface SearchIdentifier {
  readonly name: string;
  readonly node: DetectionNode;
  readonly pos: SourcePosition;
}

// ---------------------------------------------------------------------------------------------
// Condition AST.
// ---------------------------------------------------------------------------------------------

export type ConditionNode =
  | { readonly kind: 'ref'; readonly name: string; readonly pos: SourcePosition }
  | {
      readonly kind: 'of';
      readonly quantifier: 'any' | 'all';
      /** The pattern as written (`them` for the them-form). */
      readonly pattern: string;
      readonly them: boolean;
      /** Identifiers the selector resolved to, in detection order. */
      readonly targets: readonly string[];
      readonly pos: SourcePosition;
    }
  | { readonly kind: 'not'; readonly operand: ConditionNode; readonly pos: SourcePosition }
  | { readonly kind: 'and'; readonly operands: readonly ConditionNode[]; readonly pos: SourcePosition }
  | { readonly kind: 'or'; readonly operands: readonly ConditionNode[]; readonly pos: SourcePosition };

export interface ParsedCondition {
  readonly source: string;
  readonly ast: ConditionNode;
  readonly pos: SourcePosition;
}

export interface Detection {
  readonly identifiers: ReadonlyMap<string, SearchIdentifier>;
  /** Several conditions are OR-ed (spec); pySigma would emit one query each. */
  readonly conditions: readonly ParsedCondition[];
  readonly pos: SourcePosition;
}

// ---------------------------------------------------------------------------------------------
// Documents.
// ---------------------------------------------------------------------------------------------

export interface Logsource {
  readonly category?: string;
  readonly product?: string;
  readonly service?: string;
  readonly definition?: string;
  readonly custom: Readonly<Record<string, unknown>>;
  readonly pos: SourcePosition;
}

export interface RelatedRule {
  readonly id: string;
  readonly type: string;
}

export type SigmaStatus = 'stable' | 'test' | 'experimental' | 'deprecated' | 'unsupported';
export type SigmaLevel = 'informational' | 'low' | 'medium' | 'high' | 'critical';

interface DocumentBase {
  readonly title: string;
  readonly id?: string;
  readonly name?: string;
  readonly status?: SigmaStatus;
  readonly description?: string;
  readonly author?: string;
  readonly license?: string;
  readonly references: readonly string[];
  readonly date?: string;
  readonly modified?: string;
  readonly tags: readonly string[];
  readonly level?: SigmaLevel;
  readonly falsepositives: readonly string[];
  readonly related: readonly RelatedRule[];
  readonly taxonomy: string;
  /** Every top-level key not part of the schema, e.g. `regression_tests_path`. */
  readonly custom: Readonly<Record<string, unknown>>;
  /** Position of each top-level key, for lint findings on metadata. */
  readonly positions: Readonly<Record<string, SourcePosition>>;
  readonly pos: SourcePosition;
  readonly source?: string;
  /** Problems found while building this document; empty for a valid document. */
  readonly errors: readonly SigmaError[];
}

export interface SigmaRule extends DocumentBase {
  readonly kind: 'rule';
  readonly logsource: Logsource;
  readonly detection: Detection;
  readonly fields: readonly string[];
  readonly scope: readonly string[];
}

export type CorrelationType = 'event_count' | 'value_count' | 'temporal' | 'temporal_ordered' | 'value_sum' | 'value_avg' | 'value_percentile' | 'value_median';

export type CorrelationOp = 'gt' | 'gte' | 'lt' | 'lte' | 'eq' | 'neq';

export interface CorrelationCondition {
  readonly op: CorrelationOp;
  readonly count: number;
  readonly field?: string;
  readonly percentile?: number;
}

export interface SigmaCorrelation extends DocumentBase {
  readonly kind: 'correlation';
  readonly type: CorrelationType;
  readonly rules: readonly string[];
  readonly groupBy: readonly string[];
  readonly timespanMs: number;
  readonly timespan: string;
  /** Absent only for temporal types with a boolean-expression condition. */
  readonly condition?: CorrelationCondition;
  /** pySigma extension: boolean expression over rule names for temporal types. */
  readonly conditionExpression?: ParsedCondition;
  readonly aliases: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly generate: boolean;
}

export interface SigmaFilter extends DocumentBase {
  readonly kind: 'filter';
  readonly logsource?: Logsource;
  readonly rules: readonly string[];
  readonly detection: Detection;
}

export type SigmaDocument = SigmaRule | SigmaCorrelation | SigmaFilter;

export interface SigmaCollection {
  readonly documents: readonly SigmaDocument[];
  /** All errors, document-level ones included, in source order. */
  readonly errors: readonly SigmaError[];
}
