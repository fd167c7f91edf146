/**
 * Every failure the engine reports carries a stable `code` (safe to match on in callers and tests,
 * never reworded) plus the 1-based line/column of the YAML node or condition token at fault.
 */
export type SigmaErrorCode =
  | 'yaml-syntax'
  | 'yaml-duplicate-key'
  | 'document-not-map'
  | 'document-kind-unknown'
  | 'attribute-missing'
  | 'attribute-invalid'
  | 'logsource-invalid'
  | 'detection-invalid'
  | 'detection-value-invalid'
  | 'identifier-invalid'
  | 'condition-missing'
  | 'condition-syntax'
  | 'condition-too-deep'
  | 'yaml-too-deep'
  | 'condition-legacy-aggregation'
  | 'condition-undefined-identifier'
  | 'condition-pattern-no-match'
  | 'modifier-unknown'
  | 'modifier-invalid'
  | 'modifier-value-type'
  | 'regex-invalid'
  | 'regex-unsafe'
  | 'placeholder-unresolved'
  | 'correlation-invalid'
  | 'correlation-unresolved-rule'
  | 'filter-invalid'
  | 'backend-unsupported';

export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

export const UNKNOWN_POSITION: SourcePosition = Object.freeze({ line: 0, column: 0 });

export class SigmaError extends Error {
  readonly code: SigmaErrorCode;
  readonly line: number;
  readonly column: number;
  readonly source: string | undefined;

  constructor(code: SigmaErrorCode, message: string, position: SourcePosition = UNKNOWN_POSITION, source?: string) {
    super(message);
    this.name = 'SigmaError';
    this.code = code;
    this.line = position.line;
    this.column = position.column;
    this.source = source;
  }

  /** `file:line:column: [code] message`, the format editors and CI annotations understand. */
  format(): string {
    const where = `${this.source ?? '<rule>'}:${this.line}:${this.column}`;
    return `${where}: [${this.code}] ${this.message}`;
  }
}

export function isSigmaError(value: unknown): value is SigmaError {
  return value instanceof SigmaError;
}
