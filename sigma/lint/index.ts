import { capabilitiesOf, type Capabilities } from '../capabilities';
import type { SigmaError } from '../errors';
import type { SigmaDocument } from '../model';
import { parseSigma } from '../parse';
import { detectionValidators } from './detection';
import { metadataValidators } from './metadata';
import { performanceValidators } from './performance';
import { tagValidators } from './tags';
import { finding, type LintFinding, type LintSeverity, type Validator } from './types';

export type { LintContext, LintFinding, LintSeverity, Validator } from './types';
export { HIGH_VOLUME_FIELDS, LARGE_VALUE_LIST } from './performance';

/** The one list of validators; order only affects the order of findings. */
export const VALIDATORS: readonly Validator[] = [...metadataValidators, ...tagValidators, ...detectionValidators, ...performanceValidators];

export interface LintOptions {
  readonly source?: string;
  /** Validator names or finding codes to skip (like sigma-cli's config). */
  readonly disable?: readonly string[];
}

export interface DocumentLint {
  readonly document: SigmaDocument;
  readonly capabilities: Capabilities;
}

export interface LintResult {
  readonly findings: LintFinding[];
  readonly documents: DocumentLint[];
  readonly counts: Record<LintSeverity, number>;
}

const SEVERITY_ORDER: Record<LintSeverity, number> = { error: 0, warning: 1, info: 2 };

/** YAML, schema, modifier and condition problems are errors: the rule cannot be used as-is. */
export function errorToFinding(e: SigmaError): LintFinding {
  return finding(e.code, 'error', e.message, { line: e.line, column: e.column }, e.source);
}

export function lintDocument(document: SigmaDocument, options: LintOptions = {}, validators: readonly Validator[] = VALIDATORS): LintFinding[] {
  const disabled = new Set(options.disable ?? []);
  const out: LintFinding[] = [];
  for (const v of validators) {
    if (disabled.has(v.name)) continue;
    for (const f of v.run({ document, ...(options.source !== undefined ? { source: options.source } : {}) })) {
      if (!disabled.has(f.code)) out.push(f);
    }
  }
  return out;
}

/** Parses and lints a YAML text (all of its documents). */
export function lintText(text: string, options: LintOptions = {}): LintResult {
  const collection = parseSigma(text, options.source !== undefined ? { source: options.source } : {});
  const disabled = new Set(options.disable ?? []);
  const findings: LintFinding[] = collection.errors.map(errorToFinding).filter((f) => !disabled.has(f.code));
  const documents: DocumentLint[] = [];
  for (const document of collection.documents) {
    findings.push(...lintDocument(document, options));
    documents.push({ document, capabilities: capabilitiesOf(document) });
  }
  // Several correlation documents in one file are expected; duplicate ids/names are not.
  const seen = new Map<string, SigmaDocument>();
  for (const d of collection.documents) {
    for (const key of [d.id, d.name]) {
      if (key === undefined) continue;
      if (seen.has(key) && !disabled.has('identifier_uniqueness')) {
        findings.push(finding('identifier_uniqueness', 'warning', `id/name '${key}' is used by several documents`, d.positions.id ?? d.pos, d.source));
      }
      seen.set(key, d);
    }
  }
  findings.sort((a, b) => a.line - b.line || a.column - b.column || SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  const counts: Record<LintSeverity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  return { findings, documents, counts };
}

/** Findings that need several files: ids and titles shared between rules. */
export function lintAcrossFiles(results: ReadonlyArray<{ source: string; result: LintResult }>): LintFinding[] {
  const out: LintFinding[] = [];
  const ids = new Map<string, string>();
  const titles = new Map<string, string>();
  for (const { source, result } of results) {
    for (const { document: d } of result.documents) {
      if (d.id !== undefined) {
        const other = ids.get(d.id);
        if (other !== undefined && other !== source)
          out.push(finding('identifier_uniqueness', 'warning', `id ${d.id} is also used in ${other}`, d.positions.id ?? d.pos, source));
        else ids.set(d.id, source);
      }
      const other = titles.get(d.title);
      if (other !== undefined && other !== source)
        out.push(finding('duplicate_title', 'warning', `title '${d.title}' is also used in ${other}`, d.positions.title ?? d.pos, source));
      else titles.set(d.title, source);
    }
  }
  return out;
}
