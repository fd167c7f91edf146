import { proxyActivities } from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import type { DriftActivities, TargetDriftOutcome } from '../activities/drift';
import { FailureType } from './contracts';
import { trackSteps } from './current-step';

const { deployToTarget, loadDeploymentPlan } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '1 minute',
    maximumAttempts: 6,
    nonRetryableErrorTypes: [FailureType.DeploymentNotFound, FailureType.RuleDoesNotCompile, FailureType.UnsupportedTargetKind, FailureType.LiveVersionChanged],
  },
});

const { checkTargetDrift } = proxyActivities<DriftActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 4 },
});

/**
 * Restores a live deployment on its target (the deploy step again: it writes only what differs
 * from what detflow deployed), then checks the target so its drift records say what is there now.
 */
export async function RestoreDeployment(input: { deploymentId: string }): Promise<{ changed: boolean; drift: TargetDriftOutcome }> {
  const step = trackSteps();
  const plan = await loadDeploymentPlan({ deploymentId: input.deploymentId });
  step(`restoring the deployment on ${plan.target.name}`);
  const { changed } = await deployToTarget.executeWithOptions({ summary: `Restore deployment ${input.deploymentId} on ${plan.target.name}` }, [
    { deploymentId: input.deploymentId },
  ]);
  step(`checking ${plan.target.name} for drift`);
  const drift = await checkTargetDrift({ targetId: plan.target.id });
  step(changed ? 'done: restored' : 'done: nothing to restore');
  return { changed, drift };
}
