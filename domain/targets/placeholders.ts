import { placeholdersUsed, withPlaceholderValues, type SigmaDocument, type SigmaRule } from '../../sigma';
import type { TargetRef } from '../../siem/adapters';

/** Placeholder values as settings hold them: a name (without `%`) to its values. */
export type Placeholders = Record<string, string[]>;

/** The values rules are compiled with on a target: its environment's defaults, overlaid name by name with its own. */
export function resolvedPlaceholders(environmentDefaults: Readonly<Placeholders>, own: Readonly<Placeholders>): Placeholders {
  return { ...environmentDefaults, ...own };
}

/** The placeholders a rule uses that the target has no value for. */
export function missingPlaceholders(doc: SigmaDocument, target: Pick<TargetRef, 'resolvedPlaceholders'>): string[] {
  const values = target.resolvedPlaceholders ?? {};
  return placeholdersUsed(doc)
    .map((p) => p.name)
    .filter((n) => !Object.hasOwn(values, n));
}

/** Where a placeholder value for a target is set, with the API paths. */
export function wherePlaceholdersAreSet(target: { name: string; environment?: string | undefined }): string {
  const env = target.environment;
  const targetPath = `PUT /api/v1/settings/targets/${target.name}/placeholders`;
  return env
    ? `set it in target ${target.name}'s settings (${targetPath}) or as a default of environment ${env} (PUT /api/v1/settings/environments/${env}/placeholders)`
    : `set it in target ${target.name}'s settings (${targetPath}) or as a default of its environment (PUT /api/v1/settings/environments/{environment}/placeholders)`;
}

/** What a refusal says about placeholders a rule needs and a target lacks. */
export function missingPlaceholdersDetail(ruleId: string, names: readonly string[], target: { name: string; environment?: string | undefined }): string {
  const list = names.map((n) => `%${n}%`).join(', ');
  return `Rule ${ruleId} uses placeholder${names.length > 1 ? 's' : ''} ${list} with no value on target ${target.name}: ${wherePlaceholdersAreSet(target)}`;
}

/**
 * The rule as the target compiles it: its placeholders replaced by the target's values. Throws
 * (`onMissing`) when the target lacks one, naming each and where to set it.
 */
export function ruleWithTargetPlaceholders(rule: SigmaRule, ruleId: string, target: TargetRef, onMissing: (detail: string, names: string[]) => Error): SigmaRule {
  const missing = missingPlaceholders(rule, target);
  if (missing.length) throw onMissing(missingPlaceholdersDetail(ruleId, missing, target), missing);
  return withPlaceholderValues(rule, target.resolvedPlaceholders ?? {});
}
