import { ActivityFailure, log, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { DeploymentActivities } from '../activities/deployments';
import type { ScheduleActivities } from '../activities/schedules';
import { notifyInBackground } from './notify';
import { trackSteps } from './current-step';
import { STATUS, FailureType } from './contracts';

export type RollbackInput = {
  tenantId: string;
  ruleId: string;
  targetName: string;
  /** The deployment live now, which the rollback ends. */
  fromDeploymentId: string;
  fromVersion: number;
  /** The deployment that restores an earlier version; null removes the rule from the target. */
  to: { deploymentId: string; version: number } | null;
  reason: string;
};

export type RollbackResult = { status: 'completed' | 'failed'; restored_version: number | null; removed: boolean; error: string | null };

const activities = proxyActivities<DeploymentActivities & ScheduleActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: [FailureType.DeploymentNotFound, FailureType.RuleDoesNotCompile, FailureType.UnsupportedTargetKind],
  },
});

/**
 * Puts a target back to an earlier version of a rule (the one before, or a named one), or takes the
 * rule off when there is none; records it and notifies. Restoring goes through the same adapter
 * deploy and activation as a deployment, so the live deployment ends exactly when the restored one
 * starts, as rolled back.
 */
export async function Rollback(input: RollbackInput): Promise<RollbackResult> {
  const reason = `rolled back: ${input.reason}`;
  let result: RollbackResult;
  const step = trackSteps();
  try {
    if (input.to) {
      step(`deploying v${input.to.version} to ${input.targetName}`);
      await activities.deployToTarget.executeWithOptions({ summary: `Deploy ${input.ruleId} v${input.to.version} to ${input.targetName}` }, [
        { deploymentId: input.to.deploymentId },
      ]);
      step(`activating v${input.to.version} on ${input.targetName}`);
      const { superseded } = await activities.activateDeployment({ deploymentId: input.to.deploymentId, previousEndsAs: 'rolled_back', reason });
      await activities.removeDetectionSchedules({ tenantId: input.tenantId, deploymentIds: superseded });
      await activities.ensureDetectionSchedule({ deploymentId: input.to.deploymentId });
      result = { status: 'completed', restored_version: input.to.version, removed: false, error: null };
    } else {
      step(`removing v${input.fromVersion} from ${input.targetName}`);
      await activities.retireDeployment({ deploymentId: input.fromDeploymentId, reason });
      await activities.removeDetectionSchedules({ tenantId: input.tenantId, deploymentIds: [input.fromDeploymentId] });
      result = { status: 'completed', restored_version: null, removed: true, error: null };
    }
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const error = err.cause?.message ?? err.message;
    log.warn('rollback failed', { ruleId: input.ruleId, error });
    if (input.to) await activities.setDeploymentStatus({ deploymentId: input.to.deploymentId, status: 'failed', error });
    result = { status: 'failed', restored_version: null, removed: false, error };
  }
  upsertSearchAttributes([{ key: STATUS, value: result.status }]);
  step(`done: ${result.status}`);
  await notifyInBackground({
    tenantId: input.tenantId,
    event: 'rollback.completed',
    step: 'rollback',
    data: {
      rule_id: input.ruleId,
      target: input.targetName,
      from_version: input.fromVersion,
      restored_version: result.restored_version,
      removed: result.removed,
      reason: input.reason,
      status: result.status,
      ...(result.error ? { error: result.error } : {}),
    },
  });
  return result;
}
