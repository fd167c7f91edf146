import { SqlBackend } from '../../sigma/backends/sql';
import { SigmaError } from '../../sigma/errors';
import type { SigmaRule } from '../../sigma/model';
import type { CompileResult, RuleLogsource } from '../adapter';
import type { LocalRuleCompiler } from './local-adapter';

/**
 * Sigma rules for the local target, through the Sigma engine's DuckDB SQL backend with the store's
 * field mapping (hot fields read their columns, the rest `raw`). The rule's logsource is returned
 * separately: the store applies it as a filter on its logsource columns, and fixtures skip it.
 * Logsource values are lower-cased like the store's columns.
 */
export const compileSigmaForLocal: LocalRuleCompiler<SigmaRule> = (rule, fields): CompileResult => {
  try {
    const query = new SqlBackend().where(rule, {
      fieldExpression: (f) => fields.fieldExpression(f),
      existsExpression: (f) => fields.existsExpression(f),
    });
    const ls: { product?: string; category?: string; service?: string } = {};
    if (rule.logsource.product !== undefined) ls.product = rule.logsource.product.toLowerCase();
    if (rule.logsource.category !== undefined) ls.category = rule.logsource.category.toLowerCase();
    if (rule.logsource.service !== undefined) ls.service = rule.logsource.service.toLowerCase();
    const logsource: RuleLogsource = ls;
    return Object.keys(ls).length > 0 ? { ok: true, query, logsource } : { ok: true, query };
  } catch (e) {
    if (e instanceof SigmaError) return { ok: false, issues: [{ code: e.code, message: e.message, line: e.line, column: e.column }] };
    throw e;
  }
};
