import {
  ActivityFailure,
  type ActivityOptions,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  defineQuery,
  defineUpdate,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ApprovalActivities, Decision } from '../activities/approvals';
import type { DeploymentActivities } from '../activities/deployments';
import type { ImpactSummary } from '../domain/changes/impact-summary';
import type { ScheduleActivities } from '../activities/schedules';
import type { DeploymentStatus, NoiseBudgetPolicy } from '../db/schema';
import { notifyInBackground } from './notify';
import { STATUS, FailureType } from '../domain/contracts';

export type DeploymentRef = { deploymentId: string; targetId: string; targetName: string };

export type DeployInput = {
  tenantId: string;
  ruleId: string;
  version: number;
  deployments: DeploymentRef[];
  noiseBudget: NoiseBudgetPolicy | null;
  /** When set, the deployments wait for a reviewer's decision on this approval. */
  approval: { approvalId: string; requestedBy: string | null; expiresInMs: number } | null;
};

export type ApprovalState = {
  approval_id: string;
  status: 'pending' | 'approved' | 'rejected' | 'changes_requested' | 'expired' | 'cancelled';
  decision: Decision | null;
  comment: string | null;
  decided_by: string | null;
};

export type DeployState = {
  status: DeploymentStatus;
  version: number;
  impact: ImpactSummary | null;
  approval: ApprovalState | null;
  deployments: Array<{ deployment_id: string; target: string; status: DeploymentStatus; error: string | null }>;
};

export type DecisionInput = { decision: Decision; comment: string | null; decidedBy: string };

export const deploymentStateQuery = defineQuery<DeployState>('deploymentState');
/** A reviewer's decision. An update, not a signal, so the caller learns at once whether it was taken. */
export const decideUpdate = defineUpdate<ApprovalState, [DecisionInput]>('decide');

/** Patch id: a decision is recorded in the database before the run applies it. */
const DECISION_RECORDED_FIRST = 'decision-recorded-first';

const retry = { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 } as const;
const options: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { ...retry, nonRetryableErrorTypes: [FailureType.DeploymentNotFound, FailureType.RuleDoesNotCompile, FailureType.UnsupportedTargetKind] },
};
const activities = proxyActivities<DeploymentActivities & ApprovalActivities>(options);
/**
 * Detection schedules are set up after activation, when the version is already live: their work
 * retries until Temporal and the database answer again (no maximum), since giving up would leave a
 * live rule without detection. Only activity options differ, which the history does not pin.
 */
const scheduleActivities = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: [FailureType.DeploymentNotFound] },
});
/**
 * The adapter deploy heartbeats: when the worker running it dies, another worker retries it after
 * the heartbeat timeout (seconds) rather than the start-to-close timeout (a minute). A retry is
 * safe — the adapter keys the deploy by the deployment id. Only activity options differ, which
 * the history does not pin, so runs in flight replay unchanged.
 */
const deployActivities = proxyActivities<DeploymentActivities>({ ...options, heartbeatTimeout: '10 seconds' });
/** The impact summary counts each target's last 7 days: as long as a replay chunk may take, heartbeating. */
const impactActivities = proxyActivities<ApprovalActivities>({ ...options, startToCloseTimeout: '10 minutes', heartbeatTimeout: '20 seconds' });

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
    deployments: input.deployments.map((d) => ({ deployment_id: d.deploymentId, target: d.targetName, status: input.approval ? 'pending_approval' : 'deploying', error: null })),
  };
  setHandler(deploymentStateQuery, () => state);
  // Registered first, so a decision that arrives while the impact is still being computed is taken.
  if (input.approval) {
    const approval = state.approval!;
    const { approvalId, requestedBy } = input.approval;
    // A decision being recorded: the approval is still pending, but takes no other decision.
    let deciding = false;
    setHandler(
      decideUpdate,
      async (decision) => {
        const apply = () => {
          approval.status = decision.decision === 'approve' ? 'approved' : decision.decision === 'reject' ? 'rejected' : 'changes_requested';
          approval.decision = decision.decision;
          approval.comment = decision.comment;
          approval.decided_by = decision.decidedBy;
        };
        // Runs recorded before this patch applied the decision first, then recorded it.
        if (!patched(DECISION_RECORDED_FIRST)) {
          apply();
          await activities.recordDecision({ approvalId, ...decision });
          return approval;
        }
        // Recorded first, then applied: when recording fails (the update fails, the API answers
        // 503), the approval is still pending here and in the database, and the reviewer can retry.
        deciding = true;
        try {
          await activities.recordDecision({ approvalId, ...decision });
        } finally {
          deciding = false;
        }
        apply();
        return approval;
      },
      {
        // Runs before anything is recorded: a refused decision leaves no trace in history or database.
        validator: (decision) => {
          if (approval.status !== 'pending') throw ApplicationFailure.create({ type: FailureType.AlreadyDecided, message: `This approval is already ${approval.status}` });
          if (deciding) throw ApplicationFailure.create({ type: FailureType.AlreadyDecided, message: 'Another decision on this approval is being recorded' });
          if (requestedBy !== null && decision.decidedBy === requestedBy) {
            throw ApplicationFailure.create({ type: FailureType.SelfApproval, message: 'The token that requested a change may not decide it' });
          }
        },
      },
    );
  }
  const event = (d?: DeploymentRef) => ({ rule_id: input.ruleId, version: input.version, ...(d ? { deployment_id: d.deploymentId, target: d.targetName } : {}) });

  try {
    state.impact = await impactActivities.computeImpact({
      tenantId: input.tenantId,
      ruleId: input.ruleId,
      version: input.version,
      targetIds: input.deployments.map((d) => d.targetId),
      noiseBudget: input.noiseBudget,
    });
  } catch (err) {
    // A rule that cannot run on a target (it does not compile), or counts that kept failing: no
    // reviewer can decide on a change without its impact, and nothing is deployed. Every record of
    // the change ends here rather than waiting for ever.
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = `the impact summary could not be computed: ${err.cause?.message ?? err.message}`;
    log.warn('change abandoned', { ruleId: input.ruleId, version: input.version, reason });
    if (input.approval) {
      // A decision being recorded meanwhile finishes first; the approval is cancelled only if still pending.
      await condition(allHandlersFinished);
      if (state.approval!.status === 'pending') state.approval!.status = 'cancelled';
      await activities.cancelApproval({ approvalId: input.approval.approvalId, reason });
    }
    for (const [i, ref] of input.deployments.entries()) {
      const entry = state.deployments[i]!;
      entry.status = 'failed';
      entry.error = reason;
      await activities.setDeploymentStatus({ deploymentId: ref.deploymentId, status: 'failed', error: reason });
      await notifyInBackground({ tenantId: input.tenantId, event: 'deployment.failed', step: `failed-${ref.deploymentId}`, data: { ...event(ref), error: reason } });
    }
    state.status = 'failed';
    upsertSearchAttributes([{ key: STATUS, value: 'failed' }]);
    return state;
  }

  if (input.approval) {
    const approval = state.approval!;
    const { approvalId, expiresInMs } = input.approval;
    await activities.recordImpact({ approvalId, impact: state.impact });
    await notifyInBackground({
      tenantId: input.tenantId,
      event: 'approval.requested',
      step: 'approval-requested',
      data: { ...event(), approval_id: approvalId, targets: input.deployments.map((d) => d.targetName), projected_alerts_per_day: state.impact.projected_alerts_per_day, over_budget: state.impact.over_budget },
    });
    await condition(() => approval.status !== 'pending', expiresInMs);
    // A decision being recorded when the approval expires is taken (it reached the database first).
    await condition(allHandlersFinished);
    if (approval.status === 'pending') {
      approval.status = 'expired';
      await activities.expireApproval({ approvalId });
    }
    await notifyInBackground({
      tenantId: input.tenantId,
      event: 'approval.decided',
      step: 'approval-decided',
      data: { ...event(), approval_id: approvalId, decision: approval.decision ?? 'expired', comment: approval.comment, decided_by: approval.decided_by },
    });
    if (approval.status !== 'approved') {
      const final = approval.status as 'rejected' | 'changes_requested' | 'expired';
      state.status = final;
      for (const d of state.deployments) d.status = final;
      upsertSearchAttributes([{ key: STATUS, value: final }]);
      return state;
    }
  }

  for (const [i, ref] of input.deployments.entries()) {
    const entry = state.deployments[i]!;
    const moveTo = async (status: DeploymentStatus, error: string | null = null) => {
      entry.status = status;
      entry.error = error;
      await activities.setDeploymentStatus({ deploymentId: ref.deploymentId, status, error });
    };
    try {
      await moveTo('deploying');
      await deployActivities.deployToTarget({ deploymentId: ref.deploymentId });
      const { superseded } = await activities.activateDeployment({ deploymentId: ref.deploymentId });
      entry.status = 'active';
      await scheduleActivities.removeDetectionSchedules({ tenantId: input.tenantId, deploymentIds: superseded });
      await scheduleActivities.ensureDetectionSchedule({ deploymentId: ref.deploymentId });
      await notifyInBackground({ tenantId: input.tenantId, event: 'deployment.succeeded', step: `succeeded-${ref.deploymentId}`, data: event(ref) });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const reason = err.cause?.message ?? err.message;
      if (entry.status === 'active') {
        // Live already: what failed came after activation, and must not end a live version.
        log.error('deployment is live, but setting up its detection failed', { deploymentId: ref.deploymentId, reason });
        entry.error = reason;
        continue;
      }
      log.warn('deployment failed', { deploymentId: ref.deploymentId, reason });
      await moveTo('failed', reason);
      await notifyInBackground({ tenantId: input.tenantId, event: 'deployment.failed', step: `failed-${ref.deploymentId}`, data: { ...event(ref), error: reason } });
    }
  }
  state.status = state.deployments.every((d) => d.status === 'active') ? 'active' : 'failed';
  upsertSearchAttributes([{ key: STATUS, value: state.status }]);
  return state;
}
