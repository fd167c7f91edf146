import type { Database } from '../../db/client';
import { lintForTarget, type LintReport } from '../../sigma/lint/for-target';
import type { TargetKind } from '../../sigma';
import { notFound } from '../errors';
import type { Actor } from '../tenants/actor';
import { checkRuleSize } from '../tenants/resource-limits';

/** Lints a rule text for one of the actor's tenant's targets: findings, capabilities, portability and the compiled query. */
export async function lintRule(database: Database, actor: Actor, text: string, targetName: string): Promise<LintReport> {
  checkRuleSize(actor, text);
  // Lint is called for every rule of every CI run: one prepared statement, no query builder.
  const [target] = await database.queryPrepared<{ name: string; kind: TargetKind }>(
    'detflow_lint_target',
    'select name, kind from targets where tenant_id = $1 and name = $2',
    [actor.tenantId, targetName],
  );
  if (!target) throw notFound(`No target ${targetName} in this tenant`);
  return lintForTarget(text, target);
}
