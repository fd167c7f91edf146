import { ActivityFailure, ApplicationFailure, defineQuery, proxyActivities, setHandler, upsertSearchAttributes, log } from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import type { ScheduleActivities } from '../activities/schedules';
import type { DeploymentStatus } from '../db/schema';
import { STATUS } from './search-attributes';
import { notifyInBackground } from './notify';

export type DeployInput = {
  deploymentId: string;
  tenantId: string;
  ruleId: string;
  version: number;
  targetId: string;
  targetName: string;
  approvalRequired: boolean;
  noiseBudget: { max_alerts_per_day: number } | null;
};

export type DeployState = {
  deploymentId: string;
  status: DeploymentStatus;
  version: number;
  target: string;
  error: string | null;
};

export const deploymentStateQuery = defineQuery<DeployState>('deploymentState');

const activities = proxyActivities<DeploymentActivities & ScheduleActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['DeploymentNotFound', 'RuleDoesNotCompile', 'UnsupportedTargetKind'],
  },
});

/**
 * The life of one deployment: load what to deploy, deploy it, record it as the active version.
 * The approval wait, the impact summary and the target adapter join this path as they land; the
 * path API → Temporal → worker → activities → database stays the same.
 */
export async function DeployWithApproval(input: DeployInput): Promise<DeployState> {
  const state: DeployState = {
    deploymentId: input.deploymentId,
    status: input.approvalRequired ? 'pending_approval' : 'deploying',
    version: input.version,
    target: input.targetName,
    error: null,
  };
  setHandler(deploymentStateQuery, () => state);
  const moveTo = async (status: DeploymentStatus, error: string | null = null) => {
    state.status = status;
    state.error = error;
    upsertSearchAttributes([{ key: STATUS, value: status }]);
    await activities.setDeploymentStatus({ deploymentId: input.deploymentId, status, error });
  };

  if (input.approvalRequired) {
    // The API refuses these until the approval flow exists; a run started by other means ends here.
    throw ApplicationFailure.nonRetryable('Deploys that require approval are not supported by this version', 'ApprovalUnsupported');
  }

  try {
    await activities.loadDeploymentPlan({ deploymentId: input.deploymentId });
    await moveTo('deploying');
    await activities.deployToTarget({ deploymentId: input.deploymentId });
    const { superseded } = await activities.activateDeployment({ deploymentId: input.deploymentId });
    await activities.removeDetectionSchedules({ tenantId: input.tenantId, deploymentIds: superseded });
    await activities.ensureDetectionSchedule({ deploymentId: input.deploymentId });
    state.status = 'active';
    upsertSearchAttributes([{ key: STATUS, value: 'active' }]);
    await notifyInBackground({ tenantId: input.tenantId, event: 'deployment.succeeded', step: 'succeeded', data: eventData(input) });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = err.cause?.message ?? err.message;
    log.warn('deployment failed', { deploymentId: input.deploymentId, reason });
    await moveTo('failed', reason);
    await notifyInBackground({ tenantId: input.tenantId, event: 'deployment.failed', step: 'failed', data: { ...eventData(input), error: reason } });
  }
  return state;
}

function eventData(input: DeployInput) {
  return { deployment_id: input.deploymentId, rule_id: input.ruleId, version: input.version, target: input.targetName };
}
