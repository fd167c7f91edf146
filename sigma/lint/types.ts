import type { SourcePosition } from '../errors';
import type { SigmaDocument } from '../model';

export type LintSeverity = 'error' | 'warning' | 'info';

export interface LintFinding {
  /** Stable identifier; pySigma validator names where one exists (e.g. `dangling_detection`). */
  readonly code: string;
  readonly severity: LintSeverity;
  readonly message: string;
  readonly line: number;
  readonly column: number;
  readonly source?: string;
}

export interface LintContext {
  readonly document: SigmaDocument;
  /** File name, for filename-based checks. */
  readonly source?: string;
}

/** A validator looks at one document and reports findings; registered in VALIDATORS. */
export interface Validator {
  readonly name: string;
  readonly run: (ctx: LintContext) => LintFinding[];
}

export function finding(code: string, severity: LintSeverity, message: string, pos: SourcePosition, source?: string): LintFinding {
  return { code, severity, message, line: pos.line, column: pos.column, ...(source !== undefined ? { source } : {}) };
}
