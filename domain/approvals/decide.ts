import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import type { ApprovalState, DecisionInput } from '../../workflows/change-messages';
import type { DomainDeps } from '../deps';
import { FailureType } from '../../workflows/contracts';
import { conflict, insufficientScope, unavailable } from '../errors';
import type { Actor } from '../tenants/actor';
import { findApproval, type ApprovalRecord } from './approvals';
import { RunUpdate } from '../../workflows/contracts';

export type Decision = { decision: DecisionInput['decision']; comment: string | null };

/**
 * Records a reviewer's decision on a pending approval: approve, reject or request_changes, once,
 * not by the person who requested it (whichever of their tokens): refused here, before the run
 * hears of it; the run still refuses the requesting token itself. The change's run takes it as an
 * update, so the caller learns at once whether it was taken. Answers the decided approval.
 */
export async function decideApproval(deps: DomainDeps, actor: Actor, id: string, decision: Decision): Promise<ApprovalRecord> {
  const { db } = deps.database;
  const row = await findApproval(db, actor.tenantId, id);
  if (row.status !== 'pending') throw conflict(`This approval is already ${row.status}`);
  if (row.requestedByPrincipal !== null && row.requestedByPrincipal === actor.principal) {
    throw insufficientScope(
      `The token that requested a change may not decide it, nor may any other token of the same person: ${actor.principal} requested this one; ask a reviewer with an approve token of their own`,
    );
  }
  try {
    await deps.temporal.client.workflow
      .getHandle(row.workflowId)
      .executeUpdate<ApprovalState, [DecisionInput]>(RunUpdate.decide, { args: [{ decision: decision.decision, comment: decision.comment, decidedBy: actor.tokenId }] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
      if (err.cause.type === FailureType.SelfApproval) throw insufficientScope(err.cause.message);
      if (err.cause.type === FailureType.AlreadyDecided) throw conflict(err.cause.message);
    }
    // The run could not record the decision (its database did not answer): nothing was decided.
    if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ActivityFailure) {
      throw unavailable(`The decision could not be recorded (${err.cause.cause?.message ?? err.cause.message}); nothing was decided, retry`, 5);
    }
    // The run ended (expired) between our read and the update.
    if (err instanceof WorkflowNotFoundError) throw conflict('This approval is no longer waiting for a decision');
    // The run did not take the decision in time (its worker is busy or down). The update may
    // still be applied: a retry then answers 409 and GET shows the decision.
    if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
      throw unavailable('The approval run has not taken the decision yet; retry, or read the approval: a decision it took since shows there', 5);
    }
    throw err;
  }
  return findApproval(db, actor.tenantId, id);
}
