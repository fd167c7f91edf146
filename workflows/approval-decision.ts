import { ApplicationFailure, patched, setHandler } from '@temporalio/workflow';
import { FailureType } from './contracts';
import { records } from './change-activities';
import { decideUpdate, type ApprovalState, type DeployInput } from './change-messages';

/** Patch id: a decision is recorded in the database before the run applies it. */
const DECISION_RECORDED_FIRST = 'decision-recorded-first';

/**
 * Takes reviewers' decisions on the approval: at most one, never from the token that requested the
 * change, recorded in the database before the run acts on it. Registered before anything else
 * runs, so a decision that arrives while the impact is still being computed is taken.
 */
export function takeDecisions(approval: ApprovalState, request: NonNullable<DeployInput['approval']>): void {
  const { approvalId, requestedBy } = request;
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
        await records.recordDecision({ approvalId, ...decision });
        return approval;
      }
      // Recorded first, then applied: when recording fails (the update fails, the API answers
      // 503), the approval is still pending here and in the database, and the reviewer can retry.
      deciding = true;
      try {
        await records.recordDecision({ approvalId, ...decision });
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
