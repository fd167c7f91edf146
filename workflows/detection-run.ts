import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, log, patched, proxyActivities, startChild } from '@temporalio/workflow';
import type { DetectionActivities, DetectionOutcome } from '../activities/detection';
import type { RollbackPlanActivities } from '../activities/rollback-plan';
import type { HealthActivities } from '../activities/health';
import { notifyInBackground } from './notify';
import { trackSteps } from './current-step';
import { Rollback } from './rollback';
import { rollbackSearchAttributes } from './contracts';
import { rollbackRunMetadata } from './run-summaries';
import { FailureType } from './contracts';

const { runDetection, planBudgetRollback } = proxyActivities<DetectionActivities & RollbackPlanActivities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [FailureType.DeploymentNotFound, FailureType.DetectionQueryFailed, FailureType.RuleDoesNotCompile, FailureType.UnsupportedTargetKind],
  },
});

const { checkRuleHealth } = proxyActivities<HealthActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 },
});

/** Runs recorded before the health check existed replay without it. */
export const RULE_HEALTH_PATCH = 'rule-health-after-run';

/**
 * After the run (failed or not): the deployment's error rate and data quality against the tenant's
 * thresholds; `rule.health_degraded` when one got worse than the last check found. A check that
 * fails is logged and never fails the run.
 */
async function checkHealth(deploymentId: string): Promise<void> {
  if (!patched(RULE_HEALTH_PATCH)) return;
  let crossing;
  try {
    crossing = await checkRuleHealth({ deploymentId });
  } catch (err) {
    log.warn('rule health check failed', { deploymentId, error: (err as Error).message });
    return;
  }
  if (crossing) await notifyInBackground({ tenantId: crossing.tenantId, event: 'rule.health_degraded', step: 'rule-health', data: crossing.data });
}

/**
 * One scheduled-detection run of one deployment (started by its Temporal Schedule). On the run that
 * goes over the day's noise budget it carries out the deployment's `on_exceed` policy: the alerts
 * beyond the budget are suppressed in every case; `demote` has already put the deployment in shadow
 * (in the same transaction as the run); `rollback` starts a Rollback run that outlives this one.
 */
export async function DetectionRun(input: { deploymentId: string }): Promise<DetectionOutcome> {
  const step = trackSteps();
  let outcome: DetectionOutcome;
  try {
    step('running the detection query');
    outcome = await runDetection.executeWithOptions({ summary: `Detection query of deployment ${input.deploymentId}` }, [{ deploymentId: input.deploymentId }]);
  } catch (err) {
    // A failed run is what the error rate counts: checked before the failure ends this run.
    await checkHealth(input.deploymentId);
    throw err;
  }
  if (outcome.skipped === null) await checkHealth(input.deploymentId);
  if (!outcome.budgetExceededNow) return outcome;
  await afterBudgetExceeded(input.deploymentId, outcome);
  return outcome;
}

/**
 * The follow-ups of the run that went over the noise budget: `noise_budget.exceeded`, then
 * `deployment.demoted` or the Rollback run, as the deployment's `on_exceed` says. A run that
 * follows up several deployments names each one's notifications apart (`stepSuffix`).
 */
export async function afterBudgetExceeded(deploymentId: string, outcome: DetectionOutcome, stepSuffix = ''): Promise<void> {
  const alerts = outcome.alertsToday + outcome.suppressed;
  const about = { deployment_id: deploymentId, rule_id: outcome.ruleId, version: outcome.version, target: outcome.target, alerts, budget: outcome.budget };
  await notifyInBackground({
    tenantId: outcome.tenantId,
    event: 'noise_budget.exceeded',
    step: `noise-budget${stepSuffix}`,
    // Runs recorded before policies existed carry no `onExceed`: their notification stays as it was.
    data: { ...about, ...(outcome.onExceed ? { on_exceed: outcome.onExceed } : {}) },
  });
  if (outcome.demoted) {
    await notifyInBackground({ tenantId: outcome.tenantId, event: 'deployment.demoted', step: `demoted${stepSuffix}`, data: about });
  }
  if (outcome.onExceed === 'rollback') {
    const plan = await planBudgetRollback({ deploymentId, reason: `noise budget exceeded: ${alerts} alerts against ${outcome.budget}/day` });
    if (plan) await startBudgetRollback(plan.workflowId, plan.input);
  }
}

/** Starts the Rollback run without waiting for it; a run started before (a retried task) is the one. */
async function startBudgetRollback(workflowId: string, input: Parameters<typeof Rollback>[0]): Promise<void> {
  try {
    await startChild(Rollback, {
      workflowId,
      args: [input],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      ...rollbackRunMetadata({ ...input, toVersion: input.to?.version ?? null, requestedBy: 'noise budget' }),
      typedSearchAttributes: rollbackSearchAttributes(input),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
