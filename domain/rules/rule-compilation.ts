import { ApplicationFailure } from '@temporalio/common';
import { parseRule, isSigmaError } from '../../sigma';
import type { CompiledRule } from '../../siem/adapter';
import { adapterFor, UnsupportedTargetKind, type SiemAdapters } from '../../siem/adapters';
import { FailureType } from '../../workflows/contracts';

/**
 * A stored rule version compiled for a target through its adapter. A rule that does not compile is
 * a permanent failure (retrying cannot fix it), named so workflows can report it.
 */
export function compileRuleForTarget(siem: SiemAdapters, content: string, ruleId: string, version: number, kind: string): CompiledRule {
  let adapter;
  try {
    adapter = adapterFor(siem, kind);
  } catch (err) {
    if (err instanceof UnsupportedTargetKind) throw ApplicationFailure.nonRetryable(err.message, FailureType.UnsupportedTargetKind);
    throw err;
  }
  let rule;
  try {
    rule = parseRule(content);
  } catch (err) {
    if (isSigmaError(err)) throw ApplicationFailure.nonRetryable(`Rule ${ruleId} v${version} does not parse: ${err.format()}`, FailureType.RuleDoesNotCompile);
    throw err;
  }
  const compiled = adapter.compile(rule);
  if (!compiled.ok) {
    const issues = compiled.issues.map((i) => `${i.line ?? '?'}:${i.column ?? '?'} ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`Rule ${ruleId} v${version} cannot run on ${kind}: ${issues}`, FailureType.RuleDoesNotCompile);
  }
  return {
    ruleId,
    version,
    query: compiled.query,
    ...(compiled.logsource ? { logsource: compiled.logsource } : {}),
    title: rule.title,
    ...(rule.level ? { level: rule.level } : {}),
  };
}
