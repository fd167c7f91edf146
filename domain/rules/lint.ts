import type { Database } from '../../db/client';
import { lintForTarget, type LintReport } from '../../sigma/lint/for-target';
import type { TargetKind } from '../../sigma';
import { notFound } from '../errors';
import { targetMappingOf } from '../targets/target-mapping';
import { wherePlaceholdersAreSet } from '../targets/placeholders';
import type { Actor } from '../tenants/actor';
import { checkRuleSize } from '../tenants/resource-limits';

/** Lints a rule text for one of the actor's tenant's targets: findings, capabilities, portability and the compiled query. */
export async function lintRule(database: Database, actor: Actor, text: string, targetName: string): Promise<LintReport> {
  checkRuleSize(actor, text);
  // Lint is called for every rule of every CI run: one prepared statement, no query builder.
  const [target] = await database.queryPrepared<{
    name: string;
    kind: TargetKind;
    environment: string;
    connection: Record<string, unknown>;
    resolved_placeholders: Record<string, string[]>;
  }>('detflow_lint_target_settings', 'select name, kind, environment, connection, resolved_placeholders from targets where tenant_id = $1 and name = $2', [
    actor.tenantId,
    targetName,
  ]);
  if (!target) throw notFound(`No target ${targetName} in this tenant`);
  // Remote targets lint with their own mapping (built-in data model and field overrides).
  const pipeline = target.kind === 'local' ? undefined : targetMappingOf(target.kind, target.connection).pipeline;
  // Placeholders lint with the target's values; a missing one says where to set it.
  return lintForTarget(
    text,
    { name: target.name, kind: target.kind, ...(pipeline ? { pipeline } : {}) },
    { placeholders: target.resolved_placeholders, placeholderHint: wherePlaceholdersAreSet(target) },
  );
}
