import type { CompiledRule } from '../../siem/adapter';
import type { SiemAdapters } from '../../siem/adapters';
import { compileRuleForTarget } from '../rules/rule-compilation';

/** The rule of a stored replay or shadow as its target runs it; a rule that does not compile is permanent (RuleDoesNotCompile). */
export function compileStoredRun(siem: SiemAdapters, run: { ruleContent: string; ruleId: string; version: number | null }, kind: string): CompiledRule {
  return compileRuleForTarget(siem, run.ruleContent, run.ruleId, run.version ?? 0, kind);
}
