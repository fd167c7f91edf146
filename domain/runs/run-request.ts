import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ruleVersions, targets } from '../../db/schema';
import { isSigmaError, parseRule } from '../../sigma';
import type { SiemAdapters, TargetRef } from '../../siem/adapters';
import { adapterForRequest } from '../targets/target-adapter';
import { mayUseEnvironment, type Actor } from '../tenants/actor';
import { insufficientScope, invalidRequest, notFound } from '../errors';
import { checkRuleSize } from '../tenants/resource-limits';
import { findRule } from '../rules/registry';
import { ruleWithTargetPlaceholders } from '../targets/placeholders';

export type RunRule = { ruleId: string; version: number | null; content: string };

/** The rule a run request names: a stored rule (`rule_id`, latest or `version`) or an inline Sigma rule (`rule`), never both. */
export type RunRuleChoice = { rule_id?: string | undefined; version?: number | undefined; rule?: string | undefined };

/** The rule of a replay or shadow: a stored version of the tenant's, or the inline text (parsed and compiled here, so a bad rule is a 400, not a failed run). */
export async function resolveRunRule(db: Db, siem: SiemAdapters, auth: Actor, body: RunRuleChoice, target: TargetRef): Promise<RunRule> {
  const kind = target.kind;
  if ((body.rule_id === undefined) === (body.rule === undefined)) {
    throw invalidRequest('Give either rule_id (a stored rule) or rule (an inline Sigma rule)', [
      { pointer: body.rule === undefined ? '/body/rule_id' : '/body/rule', message: 'exactly one of rule_id and rule' },
    ]);
  }
  let run: RunRule;
  if (body.rule_id !== undefined) {
    const ruleId = body.rule_id.toLowerCase();
    const rule = await findRule(db, auth.tenantId, body.rule_id);
    const version = body.version ?? rule.latestVersion;
    const [stored] = await db
      .select()
      .from(ruleVersions)
      .where(and(eq(ruleVersions.tenantId, auth.tenantId), eq(ruleVersions.ruleId, ruleId), eq(ruleVersions.version, version)));
    if (!stored) throw notFound(`Rule ${ruleId} has no version ${version}; the latest is ${rule.latestVersion}`);
    run = { ruleId, version, content: stored.content };
  } else {
    if (body.version !== undefined) throw invalidRequest('version applies to a stored rule (rule_id) only', [{ pointer: '/body/version', message: 'only with rule_id' }]);
    checkRuleSize(auth, body.rule!);
    let parsed;
    try {
      parsed = parseRule(body.rule!);
    } catch (err) {
      if (!isSigmaError(err)) throw err;
      throw invalidRequest(`The rule does not parse: ${err.format()}`, [{ pointer: '/body/rule', message: err.message }]);
    }
    if (!parsed.id) throw invalidRequest('An inline rule needs an id', [{ pointer: '/body/rule', message: 'missing id' }]);
    run = { ruleId: parsed.id.toLowerCase(), version: null, content: body.rule! };
  }
  let parsed;
  try {
    parsed = parseRule(run.content);
  } catch (err) {
    // A stored version that does not parse as a single rule (the registry keeps what is Sigma YAML
    // with an id; lint says what else is wrong).
    if (!isSigmaError(err)) throw err;
    throw invalidRequest(`The rule does not parse: ${err.format()}`, [{ pointer: body.rule !== undefined ? '/body/rule' : '/body/rule_id', message: err.message }]);
  }
  const pointer = body.rule !== undefined ? '/body/rule' : '/body/rule_id';
  parsed = ruleWithTargetPlaceholders(parsed, run.ruleId, target, (detail, names) =>
    invalidRequest(
      detail,
      names.map((n) => ({ pointer, message: `placeholder %${n}% has no value on target ${target.name}` })),
    ),
  );
  const compiled = adapterForRequest(siem, target, '/body/target').compile(parsed);
  if (!compiled.ok) {
    throw invalidRequest(`The rule cannot run on a ${kind} target: ${compiled.issues.map((i) => i.message).join('; ')}`, [
      { pointer: body.rule !== undefined ? '/body/rule' : '/body/rule_id', message: 'does not compile for the target' },
    ]);
  }
  return run;
}

/** A tenant's target by name, checked against the token's environments; runs need the local store for now. */
export async function resolveRunTarget(db: Db, siem: SiemAdapters, auth: Actor, name: string) {
  const [target] = await db
    .select()
    .from(targets)
    .where(and(eq(targets.tenantId, auth.tenantId), eq(targets.name, name)));
  if (!target) throw notFound(`No target ${name} in this tenant`);
  if (!mayUseEnvironment(auth, target.environment)) throw insufficientScope(`This token may not act on environment ${target.environment} (target ${name})`);
  adapterForRequest(siem, target, '/body/target');
  return target;
}
