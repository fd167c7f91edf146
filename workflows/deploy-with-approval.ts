import { ActivityFailure, ApplicationFailure, allHandlersFinished, condition, log, patched, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { ImpactSummary } from '../domain/changes/impact-summary';
import { FailureType, STATUS } from './contracts';
import type { DeploymentStatus } from '../domain/statuses';
import { takeDecisions } from './approval-decision';
import { adapterDeploys, impacts, records, schedules } from './change-activities';
import { deploymentStateQuery, type DeployInput, type DeployState, type DeploymentRef } from './change-messages';
import { notifyInBackground } from './notify';
import { trackSteps } from './current-step';

/**
 * The life of a change: its impact (replay-based projection, cost, noise delta, diff), then — when
 * approval is required — a reviewer's decision with an expiry, then the deployment of each target
 * through its adapter, activation (superseding the version before) and scheduled detection. A
 * target whose deployment fails keeps its previous version and says why.
 */
export async function DeployWithApproval(input: DeployInput): Promise<DeployState> {
  const state: DeployState = {
    status: input.approval ? 'pending_approval' : 'deploying',
    version: input.version,
    impact: null,
    approval: input.approval ? { approval_id: input.approval.approvalId, status: 'pending', decision: null, comment: null, decided_by: null } : null,
    deployments: input.deployments.map((d) => ({
      deployment_id: d.deploymentId,
      target: d.targetName,
      status: input.approval ? 'pending_approval' : 'deploying',
      error: null,
    })),
  };
  setHandler(deploymentStateQuery, () => state);
  if (input.approval) takeDecisions(state.approval!, input.approval);
  const step = trackSteps();

  step(`computing the impact on ${targetsOf(input)}`);
  const impact = await computeImpact(input);
  if (typeof impact === 'string') {
    step(`abandoning the change: ${impact}`);
    const abandoned = await abandonChange(input, state, impact);
    step('done: failed');
    return abandoned;
  }
  state.impact = impact;
  if (input.approval) {
    step(`waiting for a reviewer's decision on approval ${input.approval.approvalId}`);
    const approved = await awaitApproval(input, state, impact);
    if (!approved) {
      step(`done: ${state.status}`);
      return state;
    }
  }
  for (const [i, ref] of input.deployments.entries()) {
    step(`deploying v${input.version} to ${ref.targetName} (${i + 1} of ${input.deployments.length})`);
    await deployToTarget(input, state.deployments[i]!, ref);
  }
  const final = finish(state, outcomeOf(state));
  step(`done: ${final.status}`);
  return final;
}

function targetsOf(input: DeployInput): string {
  return input.deployments.map((d) => d.targetName).join(', ');
}

/** Runs recorded before overtaken changes had a status of their own end them as failed. */
export const OVERTAKEN_PATCH = 'overtaken-status';

/** The change's status: active when every target took it, overtaken when the only ones that did not were overtaken by a newer change. */
function outcomeOf(state: DeployState): DeploymentStatus {
  if (state.deployments.every((d) => d.status === 'active')) return 'active';
  return state.deployments.every((d) => d.status === 'active' || d.status === 'overtaken') ? 'overtaken' : 'failed';
}

/** What notifications about the change (or one of its deployments) carry. */
function eventOf(input: DeployInput, d?: DeploymentRef) {
  return { rule_id: input.ruleId, version: input.version, ...(d ? { deployment_id: d.deploymentId, target: d.targetName } : {}) };
}

function finish(state: DeployState, status: DeploymentStatus): DeployState {
  state.status = status;
  upsertSearchAttributes([{ key: STATUS, value: status }]);
  return state;
}

/** The change's impact, or why it could not be computed. */
async function computeImpact(input: DeployInput): Promise<ImpactSummary | string> {
  try {
    return await impacts.computeImpact.executeWithOptions({ summary: `Impact of ${input.ruleId} v${input.version} on ${targetsOf(input)}` }, [
      {
        tenantId: input.tenantId,
        ruleId: input.ruleId,
        version: input.version,
        targetIds: input.deployments.map((d) => d.targetId),
        noiseBudget: input.noiseBudget,
      },
    ]);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    return `the impact summary could not be computed: ${err.cause?.message ?? err.message}`;
  }
}

/**
 * A rule that cannot run on a target (it does not compile), or counts that kept failing: no
 * reviewer can decide on a change without its impact, and nothing is deployed. Every record of the
 * change ends here rather than waiting for ever.
 */
async function abandonChange(input: DeployInput, state: DeployState, reason: string): Promise<DeployState> {
  log.warn('change abandoned', { ruleId: input.ruleId, version: input.version, reason });
  if (input.approval) {
    // A decision being recorded meanwhile finishes first; the approval is cancelled only if still pending.
    await condition(allHandlersFinished);
    if (state.approval!.status === 'pending') state.approval!.status = 'cancelled';
    await records.cancelApproval({ approvalId: input.approval.approvalId, reason });
  }
  for (const [i, ref] of input.deployments.entries()) {
    const entry = state.deployments[i]!;
    entry.status = 'failed';
    entry.error = reason;
    await records.setDeploymentStatus({ deploymentId: ref.deploymentId, status: 'failed', error: reason });
    await notifyInBackground({ tenantId: input.tenantId, event: 'deployment.failed', step: `failed-${ref.deploymentId}`, data: { ...eventOf(input, ref), error: reason } });
  }
  return finish(state, 'failed');
}

/** Asks for a reviewer's decision and waits for it until the approval expires; whether it was approved. */
async function awaitApproval(input: DeployInput, state: DeployState, impact: ImpactSummary): Promise<boolean> {
  const approval = state.approval!;
  const { approvalId, expiresInMs } = input.approval!;
  await records.recordImpact({ approvalId, impact });
  await notifyInBackground({
    tenantId: input.tenantId,
    event: 'approval.requested',
    step: 'approval-requested',
    data: {
      ...eventOf(input),
      approval_id: approvalId,
      targets: input.deployments.map((d) => d.targetName),
      projected_alerts_per_day: impact.projected_alerts_per_day,
      over_budget: impact.over_budget,
    },
  });
  await condition(() => approval.status !== 'pending', expiresInMs);
  // A decision being recorded when the approval expires is taken (it reached the database first).
  await condition(allHandlersFinished);
  if (approval.status === 'pending') {
    approval.status = 'expired';
    await records.expireApproval({ approvalId });
  }
  await notifyInBackground({
    tenantId: input.tenantId,
    event: 'approval.decided',
    step: 'approval-decided',
    data: { ...eventOf(input), approval_id: approvalId, decision: approval.decision ?? 'expired', comment: approval.comment, decided_by: approval.decided_by },
  });
  if (approval.status === 'approved') return true;
  const final = approval.status as 'rejected' | 'changes_requested' | 'expired';
  for (const d of state.deployments) d.status = final;
  finish(state, final);
  return false;
}

/** Deploys, activates and schedules one target; a failure before activation leaves the version before live. */
async function deployToTarget(input: DeployInput, entry: DeployState['deployments'][number], ref: DeploymentRef): Promise<void> {
  const moveTo = async (status: DeploymentStatus, error: string | null = null) => {
    entry.status = status;
    entry.error = error;
    await records.setDeploymentStatus({ deploymentId: ref.deploymentId, status, error });
  };
  try {
    await moveTo('deploying');
    // The summary is user metadata on the command: the UI names the long call, replay does not compare it.
    await adapterDeploys.deployToTarget.executeWithOptions({ summary: `Deploy ${input.ruleId} v${input.version} to ${ref.targetName}` }, [{ deploymentId: ref.deploymentId }]);
    const { superseded } = await records.activateDeployment({ deploymentId: ref.deploymentId });
    entry.status = 'active';
    await schedules.removeDetectionSchedules({ tenantId: input.tenantId, deploymentIds: superseded });
    await schedules.ensureDetectionSchedule({ deploymentId: ref.deploymentId });
    await notifyInBackground({ tenantId: input.tenantId, event: 'deployment.succeeded', step: `succeeded-${ref.deploymentId}`, data: eventOf(input, ref) });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = err.cause?.message ?? err.message;
    if (entry.status === 'active') {
      // Live already: what failed came after activation, and must not end a live version.
      log.error('deployment is live, but setting up its detection failed', { deploymentId: ref.deploymentId, reason });
      entry.error = reason;
      return;
    }
    if (err.cause instanceof ApplicationFailure && err.cause.type === FailureType.LiveVersionChanged && patched(OVERTAKEN_PATCH)) {
      // Correct behaviour, not an error: the newer change wins and this one is not applied.
      log.info('change overtaken by a newer one', { deploymentId: ref.deploymentId, reason });
      await moveTo('overtaken', reason);
      return;
    }
    log.warn('deployment failed', { deploymentId: ref.deploymentId, reason });
    await moveTo('failed', reason);
    await notifyInBackground({ tenantId: input.tenantId, event: 'deployment.failed', step: `failed-${ref.deploymentId}`, data: { ...eventOf(input, ref), error: reason } });
  }
}
