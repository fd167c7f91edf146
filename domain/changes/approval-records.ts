import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { apiTokens, approvals, deployments } from '../../db/schema';
import type { DeploymentStatus } from '../statuses';
import type { Decision } from '../statuses';
import type { ImpactSummary } from './impact-summary';

const APPROVAL_STATUS_OF: Record<Decision, 'approved' | 'rejected' | 'changes_requested'> = {
  approve: 'approved',
  reject: 'rejected',
  request_changes: 'changes_requested',
};

/** The records of an approval: its impact, and how it ended (decided, cancelled, expired). Each only changes a pending approval. */
export function approvalRecords({ db, now = () => new Date() }: { db: Db; now?: () => Date }) {
  /** Moves the deployments of an approval that are still waiting to a final state. */
  async function endWaitingDeployments(deploymentIds: string[], status: DeploymentStatus, error: string | null) {
    if (deploymentIds.length === 0) return;
    await db
      .update(deployments)
      .set({ status, error, updatedAt: sql`now()`, endedAt: sql`now()` })
      .where(and(inArray(deployments.id, deploymentIds), eq(deployments.status, 'pending_approval')));
  }

  return {
    async recordImpact({ approvalId, impact }: { approvalId: string; impact: ImpactSummary }): Promise<void> {
      await db.update(approvals).set({ impact }).where(eq(approvals.id, approvalId));
    },

    /**
     * Records a reviewer's decision on the approval and, for a refusal, on its deployments. Only a
     * pending approval changes, so a retried activity cannot overwrite a decision with another.
     */
    async recordDecision(input: { approvalId: string; decision: Decision; comment: string | null; decidedBy: string }): Promise<void> {
      const status = APPROVAL_STATUS_OF[input.decision];
      const [row] = await db
        .update(approvals)
        .set({
          status,
          decision: input.decision,
          comment: input.comment,
          decidedBy: input.decidedBy,
          // The person the deciding token acts for (principals never change), recorded with the decision.
          decidedByPrincipal: sql`(select ${apiTokens.principal} from ${apiTokens} where ${apiTokens.id} = ${input.decidedBy})`,
          decidedAt: now(),
        })
        .where(and(eq(approvals.id, input.approvalId), eq(approvals.status, 'pending')))
        .returning({ deploymentIds: approvals.deploymentIds });
      if (row && input.decision !== 'approve') {
        await endWaitingDeployments(
          row.deploymentIds,
          input.decision === 'reject' ? 'rejected' : 'changes_requested',
          `${input.decision === 'reject' ? 'rejected' : 'changes requested'} by the reviewer${input.comment ? `: ${input.comment}` : ''}`,
        );
      }
    },

    /** Ends a pending approval that can never be decided (its change was abandoned), and its waiting deployments. */
    async cancelApproval({ approvalId, reason }: { approvalId: string; reason: string }): Promise<void> {
      const [row] = await db
        .update(approvals)
        .set({ status: 'cancelled', comment: reason, decidedAt: now() })
        .where(and(eq(approvals.id, approvalId), eq(approvals.status, 'pending')))
        .returning({ deploymentIds: approvals.deploymentIds });
      if (row) await endWaitingDeployments(row.deploymentIds, 'failed', reason);
    },

    async expireApproval({ approvalId }: { approvalId: string }): Promise<void> {
      const [row] = await db
        .update(approvals)
        .set({ status: 'expired', decidedAt: now() })
        .where(and(eq(approvals.id, approvalId), eq(approvals.status, 'pending')))
        .returning({ deploymentIds: approvals.deploymentIds });
      if (row) await endWaitingDeployments(row.deploymentIds, 'expired', 'no decision before the approval expired');
    },
  };
}
