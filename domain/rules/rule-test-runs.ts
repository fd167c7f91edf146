import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { ruleTestRuns, ruleVersions, targets } from '../../db/schema';
import { adapterForRequest } from '../targets/target-adapter';
import { EventStoreQueryError } from '../../siem/local/duckdb';
import type { DomainDeps } from '../deps';
import { invalidRequest, notFound, resourceLimit } from '../errors';
import type { Actor } from '../tenants/actor';
import { limitsOf } from '../tenants/resource-limits';
import { documentsOf, readFixtures, runRuleTests } from './rule-tests';
import { findRule } from './registry';

export type RuleTestRequest = {
  ruleId: string;
  targetName: string;
  /** Each a JSON test document (see `readFixtures`). */
  fixtures: string[];
  /** The latest when undefined. */
  version: number | undefined;
};

/** A recorded rule test run; `result` is what it answered (rule, version, target, verdicts, coverage, quality). */
export type RuleTestRun = { id: string; result: Record<string, unknown>; createdAt: Date };

/**
 * Runs positive and negative fixtures against a stored rule version on a target of the actor's
 * tenant (within the tier's number of fixtures per test), and records the run.
 */
export async function testRule(deps: DomainDeps, actor: Actor, request: RuleTestRequest): Promise<RuleTestRun> {
  const { db } = deps.database;
  const maxFixtures = limitsOf(actor).fixturesPerTest;
  if (request.fixtures.length > maxFixtures) throw resourceLimit(`${request.fixtures.length} fixtures; the ${actor.tier} tier allows ${maxFixtures} per test`);
  const ruleId = request.ruleId.toLowerCase();
  const rule = await findRule(db, actor.tenantId, request.ruleId);
  const version = request.version ?? rule.latestVersion;
  const [stored] = await db
    .select()
    .from(ruleVersions)
    .where(and(eq(ruleVersions.tenantId, actor.tenantId), eq(ruleVersions.ruleId, ruleId), eq(ruleVersions.version, version)));
  if (!stored) throw notFound(`Rule ${ruleId} has no version ${version}`);
  const [target] = await db
    .select()
    .from(targets)
    .where(and(eq(targets.tenantId, actor.tenantId), eq(targets.name, request.targetName)));
  if (!target) throw notFound(`No target ${request.targetName} in this tenant`);
  const adapter = adapterForRequest(deps.siem, target, '/body/target');
  const { main } = documentsOf(stored.content, ruleId);
  const fixtures = readFixtures(request.fixtures, main);
  let report;
  try {
    report = await runRuleTests({ text: stored.content, ruleId, version, fixtures, adapter, targetName: target.name, target });
  } catch (err) {
    // The target's engine refused the compiled rule (a construct its regex dialect lacks, say):
    // the rule's problem, not the service's.
    if (err instanceof EventStoreQueryError) {
      throw invalidRequest(`The ${target.kind} target cannot run this rule: ${err.message}`, [{ pointer: '/body/rule_id', message: 'does not run on the target' }]);
    }
    throw err;
  }
  const result = { rule_id: ruleId, version, target: target.name, ...report };
  const [run] = await db
    .insert(ruleTestRuns)
    .values({
      tenantId: actor.tenantId,
      ruleId,
      version,
      targetId: target.id,
      passed: report.passed,
      total: report.summary.total,
      failed: report.summary.failed,
      result,
      createdBy: actor.tokenId,
    })
    .returning({ id: ruleTestRuns.id, createdAt: ruleTestRuns.createdAt });
  return { id: run!.id, result, createdAt: run!.createdAt };
}

/** A recorded rule test run of the tenant. */
export async function getRuleTestRun(db: Db, tenantId: string, id: string): Promise<RuleTestRun> {
  const [run] = await db
    .select()
    .from(ruleTestRuns)
    .where(and(eq(ruleTestRuns.id, id), eq(ruleTestRuns.tenantId, tenantId)));
  if (!run) throw notFound(`No rule test run ${id} in this tenant`);
  return run;
}
