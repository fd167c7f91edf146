import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import type { DetectionActivities, DetectionOutcome } from '../activities/detection';
import type { RollbackPlanActivities } from '../activities/rollback-plan';
import { notifyInBackground } from './notify';
import { Rollback } from './rollback';
import { rollbackSearchAttributes } from './contracts';
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

/**
 * One scheduled-detection run of one deployment (started by its Temporal Schedule). On the run that
 * goes over the day's noise budget it carries out the deployment's `on_exceed` policy: the alerts
 * beyond the budget are suppressed in every case; `demote` has already put the deployment in shadow
 * (in the same transaction as the run); `rollback` starts a Rollback run that outlives this one.
 */
export async function DetectionRun(input: { deploymentId: string }): Promise<DetectionOutcome> {
  const outcome = await runDetection({ deploymentId: input.deploymentId });
  if (!outcome.budgetExceededNow) return outcome;
  const alerts = outcome.alertsToday + outcome.suppressed;
  const about = { deployment_id: input.deploymentId, rule_id: outcome.ruleId, version: outcome.version, target: outcome.target, alerts, budget: outcome.budget };
  await notifyInBackground({
    tenantId: outcome.tenantId,
    event: 'noise_budget.exceeded',
    step: 'noise-budget',
    // Runs recorded before policies existed carry no `onExceed`: their notification stays as it was.
    data: { ...about, ...(outcome.onExceed ? { on_exceed: outcome.onExceed } : {}) },
  });
  if (outcome.demoted) {
    await notifyInBackground({ tenantId: outcome.tenantId, event: 'deployment.demoted', step: 'demoted', data: about });
  }
  if (outcome.onExceed === 'rollback') {
    const plan = await planBudgetRollback({ deploymentId: input.deploymentId, reason: `noise budget exceeded: ${alerts} alerts against ${outcome.budget}/day` });
    if (plan) await startBudgetRollback(plan.workflowId, plan.input);
  }
  return outcome;
}

/** Starts the Rollback run without waiting for it; a run started before (a retried task) is the one. */
async function startBudgetRollback(workflowId: string, input: Parameters<typeof Rollback>[0]): Promise<void> {
  try {
    await startChild(Rollback, {
      workflowId,
      args: [input],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: rollbackSearchAttributes(input),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
