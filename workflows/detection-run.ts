import { proxyActivities } from '@temporalio/workflow';
import type { DetectionActivities, DetectionOutcome } from '../activities/detection';
import { notifyInBackground } from './notify';

const { runDetection } = proxyActivities<DetectionActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['DeploymentNotFound', 'DetectionQueryFailed', 'RuleDoesNotCompile', 'UnsupportedTargetKind'] },
});

/** One scheduled-detection run of one deployment (started by its Temporal Schedule). */
export async function DetectionRun(input: { deploymentId: string }): Promise<DetectionOutcome> {
  const outcome = await runDetection({ deploymentId: input.deploymentId });
  if (outcome.budgetExceededNow) {
    await notifyInBackground({
      tenantId: outcome.tenantId,
      event: 'noise_budget.exceeded',
      step: 'noise-budget',
      data: { deployment_id: input.deploymentId, rule_id: outcome.ruleId, version: outcome.version, target: outcome.target, alerts: outcome.alertsToday + outcome.suppressed, budget: outcome.budget },
    });
  }
  return outcome;
}
