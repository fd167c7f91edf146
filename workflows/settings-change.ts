import { ActivityFailure, allHandlersFinished, condition, log, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { SettingsChangeActivities } from '../activities/settings-changes';
import type { SettingsImpact } from '../domain/targets/settings-change';
import { takeDecisions } from './approval-decision';
import { records } from './change-activities';
import { FailureType, RunQuery, STATUS } from './contracts';
import type { ApprovalState, SettingsChangeInput } from './change-messages';
import { defineQuery } from '@temporalio/workflow';
import { trackSteps } from './current-step';

const retry = { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 } as const;
/** Replays of the affected rules: as long as an impact summary may take, heartbeating. */
const impacts = proxyActivities<SettingsChangeActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { ...retry, nonRetryableErrorTypes: [FailureType.RuleDoesNotCompile, FailureType.UnsupportedTargetKind] },
});
/** Applying the version and redeploying: keyed by the deployment ids, so a retry puts nothing on twice. */
const settings = proxyActivities<SettingsChangeActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: retry.initialInterval,
    backoffCoefficient: retry.backoffCoefficient,
    maximumInterval: retry.maximumInterval,
    nonRetryableErrorTypes: [FailureType.RuleDoesNotCompile, FailureType.UnsupportedTargetKind, FailureType.TargetMisconfigured],
  },
});

export type SettingsChangeState = {
  status: 'pending_approval' | 'applied' | 'rejected' | 'changes_requested' | 'expired' | 'failed';
  target: string;
  version: number;
  impact: SettingsImpact | null;
  approval: ApprovalState;
  redeployed: string[];
  error: string | null;
};

export const settingsChangeStateQuery = defineQuery<SettingsChangeState>(RunQuery.deploymentState);

/**
 * A change of a target's rule-shaping settings (placeholder values, mapping) under live rules: the
 * affected rules replayed with the settings in force and the proposed ones, a reviewer's decision
 * (four-eyes, as for a rule change), then the version made current and the affected rules put on
 * the target again with it. Rejected, or not decided in time, nothing changes.
 */
export async function SettingsChange(input: SettingsChangeInput): Promise<SettingsChangeState> {
  const state: SettingsChangeState = {
    status: 'pending_approval',
    target: input.targetName,
    version: input.version,
    impact: null,
    approval: { approval_id: input.approval.approvalId, status: 'pending', decision: null, comment: null, decided_by: null },
    redeployed: [],
    error: null,
  };
  setHandler(settingsChangeStateQuery, () => state);
  takeDecisions(state.approval, input.approval);
  const step = trackSteps();
  const ref = { tenantId: input.tenantId, targetId: input.targetId, version: input.version };

  step(`replaying the rules settings version ${input.version} of ${input.targetName} affects`);
  try {
    state.impact = await impacts.computeSettingsImpact({ ...ref, approvalId: input.approval.approvalId });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    state.error = `the impact could not be computed: ${err.cause?.message ?? err.message}`;
    log.warn('settings change abandoned', { target: input.targetName, version: input.version, reason: state.error });
    await condition(allHandlersFinished);
    if (state.approval.status === 'pending') state.approval.status = 'cancelled';
    await records.cancelApproval({ approvalId: input.approval.approvalId, reason: state.error });
    await settings.endSettingsProposal(ref);
    return finish(state, 'failed');
  }

  step(`waiting for a reviewer's decision on approval ${input.approval.approvalId}`);
  await condition(() => state.approval.status !== 'pending', input.approval.expiresInMs);
  await condition(allHandlersFinished);
  if (state.approval.status === 'pending') {
    state.approval.status = 'expired';
    await records.expireApproval({ approvalId: input.approval.approvalId });
  }
  if (state.approval.status !== 'approved') {
    await settings.endSettingsProposal(ref);
    step(`done: ${state.approval.status}`);
    return finish(state, state.approval.status === 'rejected' ? 'rejected' : state.approval.status === 'changes_requested' ? 'changes_requested' : 'expired');
  }

  step(`making settings version ${input.version} of ${input.targetName} current and redeploying the affected rules`);
  const { redeployed } = await settings.applySettingsVersion(ref);
  state.redeployed = redeployed;
  step('done: applied');
  return finish(state, 'applied');
}

function finish(state: SettingsChangeState, status: SettingsChangeState['status']): SettingsChangeState {
  state.status = status;
  upsertSearchAttributes([{ key: STATUS, value: status }]);
  return state;
}
