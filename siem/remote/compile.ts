import { isSigmaError, type SigmaRule } from '../../sigma';
import { compileForTarget } from '../../sigma/lint/for-target';
import type { Pipeline } from '../../sigma/pipelines';
import type { CompileResult, RuleLogsource } from '../adapter';
import type { RemoteTargetKind } from './remote-kind';

/** The rule's logsource as a compiled rule carries it (only the keys it sets). */
export function logsourceOf(rule: SigmaRule): RuleLogsource | undefined {
  const ls: { product?: string; category?: string; service?: string } = {};
  if (rule.logsource.product !== undefined) ls.product = rule.logsource.product;
  if (rule.logsource.category !== undefined) ls.category = rule.logsource.category;
  if (rule.logsource.service !== undefined) ls.service = rule.logsource.service;
  return Object.keys(ls).length > 0 ? ls : undefined;
}

/**
 * The rule compiled for a remote kind with the target's mapping, and what the kind then does to
 * the query text (`adjust`: its index, a metadata directive); what it cannot express is an issue
 * at its position, never a query meaning something else.
 */
export function compileRemote(rule: SigmaRule, kind: RemoteTargetKind, pipeline: Pipeline, adjust: (query: string) => string | CompileResult = (q) => q): CompileResult {
  let query: string;
  try {
    query = compileForTarget(rule, kind, pipeline);
  } catch (e) {
    if (isSigmaError(e)) return { ok: false, issues: [{ code: e.code, message: e.message, line: e.line, column: e.column }] };
    throw e;
  }
  const adjusted = adjust(query);
  if (typeof adjusted !== 'string') return adjusted;
  const logsource = logsourceOf(rule);
  return logsource ? { ok: true, query: adjusted, logsource } : { ok: true, query: adjusted };
}
