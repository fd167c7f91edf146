import { and, asc, eq, inArray } from 'drizzle-orm';
import { deployments, targets } from '../../db/schema';
import { LIVE_DEPLOYMENT_STATUSES } from '../statuses';
import { watchDeploymentHealth, type HealthCrossing } from '../health/health-watch';
import { runDetection, type DetectionDeps, type DetectionOutcome } from './run-detection';

/** Deployments of one pass evaluated at once. */
const BATCH_CONCURRENCY = 4;

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
  const live = await deps.db
    .select({ id: deployments.id, ruleId: deployments.ruleId })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .where(and(eq(deployments.tenantId, tenantId), eq(deployments.targetId, targetId), eq(targets.kind, 'local'), inArray(deployments.status, [...LIVE_DEPLOYMENT_STATUSES])))
    .orderBy(asc(deployments.id));
  const out: BatchOutcome = { rules: live.length, completed: 0, failed: 0, raised: 0, suppressed: 0, budgetExceeded: [], healthCrossings: [], failures: [] };
  let done = 0;
  const runOne = async (d: { id: string; ruleId: string }): Promise<void> => {
    let outcome: DetectionOutcome | null = null;
    try {
      outcome = await runDetection(deps, { deploymentId: d.id, activityKey: key === null ? null : `${key}/${d.id}` });
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
        const crossing = await watchDeploymentHealth(deps, { deploymentId: d.id, key: key === null ? null : `${key}/${d.id}/health` });
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
