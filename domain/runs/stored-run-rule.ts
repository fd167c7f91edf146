import type { CompiledRule } from '../../siem/adapter';
import type { SiemAdapters, TargetRef } from '../../siem/adapters';
import { compileRuleForTarget } from '../rules/rule-compilation';

/** The rule of a stored replay or shadow as its target runs it; a rule that does not compile is permanent (RuleDoesNotCompile). */
export function compileStoredRun(siem: SiemAdapters, run: { ruleContent: string; ruleId: string; version: number | null }, target: TargetRef): CompiledRule {
  return compileRuleForTarget(siem, run.ruleContent, run.ruleId, run.version ?? 0, target);
}
