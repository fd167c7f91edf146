import { SqlBackend } from '../../sigma/backends/sql';
import { compileRuleset, lowerCasedLogsource } from '../../sigma/ruleset';
import { SigmaError } from '../../sigma/errors';
import type { SigmaRule } from '../../sigma/model';
import type { CompileResult, RuleLogsource } from '../adapter';
import type { LocalRuleCompiler, LocalRulesetCompiler } from './local-adapter';

/**
 * Sigma rules for the local target, through the Sigma engine's DuckDB SQL backend with the store's
 * field mapping (hot fields read their columns, the rest `raw`). The rule's logsource is returned
 * separately: the store applies it as a filter on its logsource columns, and fixtures skip it.
 * Logsource values are lower-cased like the store's columns.
 */
/**
 * Sigma rules for one shared scan of the local store (ruleset-scan.ts): the whole-ruleset evaluator,
 * routed by logsource and prefiltered on literals, answering in input indices. The same rule object
 * given twice is compiled once and answers for both.
 */
export const compileSigmaRulesetForLocal: LocalRulesetCompiler<SigmaRule> = (rules) => {
  const ruleset = compileRuleset([...new Set(rules)]);
  const inputsOf = new Map<SigmaRule, number[]>();
  rules.forEach((r, i) => inputsOf.set(r, [...(inputsOf.get(r) ?? []), i]));
  const inputs = ruleset.rules.map((c) => inputsOf.get(c.rule)!);
  const compiled = new Set(ruleset.rules.map((c) => c.rule));
  return {
    logsources: rules.map((r) => (compiled.has(r) ? lowerLogsource(r) : null)),
    match: (event, logsource) => {
      const hits = ruleset.match(event, logsource);
      return hits.length === 0 ? hits : hits.flatMap((k) => inputs[k]!);
    },
  };
};

function lowerLogsource(rule: SigmaRule): RuleLogsource {
  return lowerCasedLogsource(rule.logsource);
}

export const compileSigmaForLocal: LocalRuleCompiler<SigmaRule> = (rule, fields): CompileResult => {
  try {
    const query = new SqlBackend().where(rule, {
      fieldExpression: (f) => fields.fieldExpression(f),
      existsExpression: (f) => fields.existsExpression(f),
    });
    const logsource = lowerLogsource(rule);
    return Object.keys(logsource).length > 0 ? { ok: true, query, logsource } : { ok: true, query };
  } catch (e) {
    if (e instanceof SigmaError) return { ok: false, issues: [{ code: e.code, message: e.message, line: e.line, column: e.column }] };
    throw e;
  }
};
