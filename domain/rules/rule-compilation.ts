import { ApplicationFailure } from '@temporalio/common';
import { parseRule, isSigmaError, type SigmaRule } from '../../sigma';
import type { CompiledRule } from '../../siem/adapter';
import { adapterFor, TargetMisconfigured, UnsupportedTargetKind, type SiemAdapters, type TargetRef } from '../../siem/adapters';
import { FailureType } from '../../workflows/contracts';
import { ruleWithTargetPlaceholders } from '../targets/placeholders';

/**
 * A stored rule version compiled for a target through its adapter. A rule that does not compile is
 * a permanent failure (retrying cannot fix it), named so workflows can report it.
 */
export function compileRuleForTarget(siem: SiemAdapters, content: string, ruleId: string, version: number, target: TargetRef): CompiledRule {
  return compileRuleAndModelForTarget(siem, content, ruleId, version, target).compiled;
}

/** compileRuleForTarget, with the Sigma rule it compiled (the target's placeholder values in it). */
export function compileRuleAndModelForTarget(
  siem: SiemAdapters,
  content: string,
  ruleId: string,
  version: number,
  target: TargetRef,
): { rule: SigmaRule; compiled: CompiledRule } {
  const adapter = targetAdapter(siem, target);
  const kind = target.kind;
  let rule;
  try {
    rule = parseRule(content);
  } catch (err) {
    if (isSigmaError(err)) throw ApplicationFailure.nonRetryable(`Rule ${ruleId} v${version} does not parse: ${err.format()}`, FailureType.RuleDoesNotCompile);
    throw err;
  }
  // The target's placeholder values replace the rule's `%name%` values before any adapter sees it.
  rule = ruleWithTargetPlaceholders(rule, ruleId, target, (detail) => ApplicationFailure.nonRetryable(detail, FailureType.RuleDoesNotCompile));
  const compiled = adapter.compile(rule);
  if (!compiled.ok) {
    const issues = compiled.issues.map((i) => `${i.line ?? '?'}:${i.column ?? '?'} ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`Rule ${ruleId} v${version} cannot run on ${kind}: ${issues}`, FailureType.RuleDoesNotCompile);
  }
  return {
    rule,
    compiled: {
      ruleId,
      version,
      query: compiled.query,
      ...(compiled.logsource ? { logsource: compiled.logsource } : {}),
      title: rule.title,
      ...(rule.level ? { level: rule.level } : {}),
      ...(rule.tags.length ? { tags: rule.tags } : {}),
    },
  };
}

/**
 * A target's adapter inside a run: a kind without an adapter, or settings the kind refuses, are
 * permanent failures (retrying cannot fix them), named so workflows report them.
 */
export function targetAdapter(siem: SiemAdapters, target: TargetRef) {
  try {
    return adapterFor(siem, target);
  } catch (err) {
    if (err instanceof UnsupportedTargetKind) throw ApplicationFailure.nonRetryable(err.message, FailureType.UnsupportedTargetKind);
    if (err instanceof TargetMisconfigured) throw ApplicationFailure.nonRetryable(err.message, FailureType.TargetMisconfigured);
    throw err;
  }
}
