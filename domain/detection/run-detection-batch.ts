import crypto from 'node:crypto';
import { and, asc, eq, inArray } from 'drizzle-orm';
import { deployments, ruleVersions, targets } from '../../db/schema';
import type { SigmaRule } from '../../sigma';
import type { RulesetMember } from '../../siem/adapter';
import type { TargetRef } from '../../siem/adapters';
import { LIVE_DEPLOYMENT_STATUSES } from '../statuses';
import { watchDeploymentHealth, type HealthCrossing } from '../health/health-watch';
import { FieldPresenceMemo } from '../health/field-presence-memo';
import { ruleNeeds } from '../health/data-quality';
import { compileRuleAndModelForTarget, targetAdapter } from '../rules/rule-compilation';
import { MAX_EVENTS_PER_RUN, runDetection, type DetectionDeps, type DetectionOutcome, type PriorEvaluation } from './run-detection';

/**
 * Deployments of one pass recorded at once. Each rule's run is a few round trips to the database
 * (its transaction, its health check) more than computation: measured at 1,000 rules, four at a
 * time left the cores mostly idle (decision record 0086).
 */
const BATCH_CONCURRENCY = 8;

/** What the batch hands back to its workflow for one rule: only the rules that need a follow-up. */
export type BatchFollowUp = { deploymentId: string; outcome: DetectionOutcome };
export type BatchFailure = { deploymentId: string; ruleId: string; error: string };

export type BatchOutcome = {
  /** Live deployments of the group evaluated in this pass (failed ones included). */
  rules: number;
  completed: number;
  failed: number;
  /** Alerts raised and suppressed by the whole pass. */
  raised: number;
  suppressed: number;
  /** Runs that went over their noise budget now: the workflow notifies, and rolls back where the policy says. */
  budgetExceeded: BatchFollowUp[];
  /** Health grades that got worse (`rule.health_degraded` to send). */
  healthCrossings: HealthCrossing[];
  /** Per-rule failures (each also recorded as a failed detection run of its rule). */
  failures: BatchFailure[];
  /**
   * The pass's one read of the target's new events: the rules it evaluated (the others ran their
   * own query), and why it could not run when it could not (every rule then ran its own query).
   */
  sharedScan?: { evaluated: number; error?: string };
};

/** A live deployment as the pass reads it. */
type LiveDeployment = {
  id: string;
  ruleId: string;
  version: number;
  cursor: number | null;
  content: string;
  target: TargetRef;
};

/**
 * One detection pass of every live deployment of one tenant on one local target (the target's
 * detection interval is the group's). Each deployment runs exactly as a per-deployment run does
 * (runDetection: its cursor, its detection_runs row, its noise budget and on_exceed, in one
 * transaction), then its health check; a rule that fails is recorded and the pass goes on.
 * `key` (the batch activity's) keys each rule's run and health check, so a retried pass returns
 * what an earlier attempt committed for the rules it had finished and runs the rest.
 */
export async function runDetectionBatch(
  deps: DetectionDeps,
  { tenantId, targetId, key, progress }: { tenantId: string; targetId: string; key: string | null; progress?: (done: number, of: number) => void },
): Promise<BatchOutcome> {
  const live: LiveDeployment[] = (
    await deps.db
      .select({
        id: deployments.id,
        ruleId: deployments.ruleId,
        version: deployments.version,
        cursor: deployments.detectionCursor,
        content: ruleVersions.content,
        targetName: targets.name,
        environment: targets.environment,
        resolvedPlaceholders: targets.resolvedPlaceholders,
      })
      .from(deployments)
      .innerJoin(targets, eq(targets.id, deployments.targetId))
      .innerJoin(
        ruleVersions,
        and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)),
      )
      .where(
        and(eq(deployments.tenantId, tenantId), eq(deployments.targetId, targetId), eq(targets.kind, 'local'), inArray(deployments.status, [...LIVE_DEPLOYMENT_STATUSES])),
      )
      .orderBy(asc(deployments.id))
  ).map((r) => ({
    id: r.id,
    ruleId: r.ruleId,
    version: r.version,
    cursor: r.cursor,
    content: r.content,
    target: { id: targetId, name: r.targetName, kind: 'local', environment: r.environment, resolvedPlaceholders: r.resolvedPlaceholders },
  }));
  const out: BatchOutcome = { rules: live.length, completed: 0, failed: 0, raised: 0, suppressed: 0, budgetExceeded: [], healthCrossings: [], failures: [] };
  const shared = await sharedEvaluations(deps, tenantId, targetId, live);
  if (shared) out.sharedScan = { evaluated: shared.evaluations.size, ...(shared.error ? { error: shared.error } : {}) };
  progress?.(0, live.length);
  // Every rule's health check asks which of its fields its logsource's events carry: one scan per logsource for the pass.
  const presence = new FieldPresenceMemo();
  for (const d of live) {
    const needs = ruleNeeds(d.content);
    if (needs) presence.expect(tenantId, targetId, needs.logsource, needs.fields);
  }
  let done = 0;
  const runOne = async (d: LiveDeployment): Promise<void> => {
    let outcome: DetectionOutcome | null = null;
    try {
      const evaluated = shared?.evaluations.get(d.id);
      outcome = await runDetection(deps, { deploymentId: d.id, activityKey: key === null ? null : `${key}/${d.id}`, ...(evaluated ? { evaluated } : {}) });
      out.completed++;
      out.raised += outcome.raised;
      out.suppressed += outcome.suppressed;
      if (outcome.budgetExceededNow) out.budgetExceeded.push({ deploymentId: d.id, outcome });
    } catch (err) {
      out.failed++;
      out.failures.push({ deploymentId: d.id, ruleId: d.ruleId, error: (err as Error).message });
    }
    // As after a per-deployment run: after a failed run too (the error rate counts it), not after a skipped one.
    if (outcome === null || outcome.skipped === null) {
      try {
        const crossing = await watchDeploymentHealth({ ...deps, presence }, { deploymentId: d.id, key: key === null ? null : `${key}/${d.id}/health` });
        if (crossing) out.healthCrossings.push(crossing);
      } catch {
        // A health check that fails never fails the run (as in DetectionRun).
      }
    }
    progress?.(++done, live.length);
  };
  // A few at a time: each waits on its query and its transaction more than it computes.
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(BATCH_CONCURRENCY, live.length) }, async () => {
      while (next < live.length) await runOne(live[next++]!);
    }),
  );
  return out;
}

/** Rules compiled for shared scans, by fingerprint (a rule version's text and its target's placeholder values). */
const compiledForScan = new Map<string, RulesetMember<SigmaRule> | null>();
const COMPILED_KEPT = 20_000;

/**
 * Every live rule with a cursor evaluated over one read of the target's new events, where the
 * target offers it (local targets). A rule that does not compile, or that the read did not cover,
 * is left out and runs its own query, as does every rule when the read fails (the error is kept
 * in the pass's outcome). Null when there is nothing to share.
 */
async function sharedEvaluations(
  deps: DetectionDeps,
  tenantId: string,
  targetId: string,
  live: readonly LiveDeployment[],
): Promise<{ evaluations: Map<string, PriorEvaluation>; error?: string } | null> {
  const started = live.filter((d) => d.cursor !== null);
  if (started.length < 2) return null;
  const adapter = targetAdapter(deps.siem, started[0]!.target);
  if (!adapter.evaluateRulesSince) return null;
  const members: Array<{ deploymentId: string; member: RulesetMember<SigmaRule> }> = [];
  for (const d of started) {
    const fingerprint = crypto
      .createHash('sha256')
      .update(`${d.ruleId}\u0000${d.version}\u0000${d.content}\u0000${JSON.stringify(d.target.resolvedPlaceholders ?? {})}`)
      .digest('base64url');
    let compiled = compiledForScan.get(fingerprint);
    if (compiled === undefined) {
      try {
        const { rule, compiled: query } = compileRuleAndModelForTarget(deps.siem, d.content, d.ruleId, d.version, d.target);
        compiled = { fingerprint, rule, compiled: query, cursor: 0 };
      } catch {
        // Left to its own run, which records why it does not compile.
        compiled = null;
      }
      if (compiledForScan.size >= COMPILED_KEPT) compiledForScan.clear();
      compiledForScan.set(fingerprint, compiled);
    }
    if (compiled) members.push({ deploymentId: d.id, member: { ...compiled, cursor: d.cursor! } });
  }
  const evaluations = new Map<string, PriorEvaluation>();
  if (members.length < 2) return { evaluations };
  try {
    const results = await adapter.evaluateRulesSince(
      tenantId,
      targetId,
      members.map((m) => m.member),
      { limit: MAX_EVENTS_PER_RUN },
    );
    results.forEach((result, i) => {
      if (result) evaluations.set(members[i]!.deploymentId, { cursor: members[i]!.member.cursor, result });
    });
    return { evaluations };
  } catch (err) {
    return { evaluations, error: (err as Error).message };
  }
}
