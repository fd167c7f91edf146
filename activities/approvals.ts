import type { Db } from '../db/client';
import type { NoiseBudgetPolicy } from '../domain/statuses';
import type { SiemAdapters } from '../siem/adapters';
import { approvalRecords } from '../domain/changes/approval-records';
import { computeImpactSummary, type ImpactSummary } from '../domain/changes/impact-summary';
import { withHeartbeat } from './heartbeat';
import { recordDeploymentProjections } from '../domain/changes/deployment-projection';
import { Context } from '@temporalio/activity';

/** An approval's impact summary and records (domain/changes), as activities. */
export function createApprovalActivities({ db, siem, now = () => new Date() }: { db: Db; siem: SiemAdapters; now?: () => Date }) {
  const records = approvalRecords({ db, now });
  return {
    /** Counts each target's last days: heartbeats, so a worker that dies is noticed in seconds. Records each deployment's projection. */
    async computeImpact(input: { tenantId: string; ruleId: string; version: number; targetIds: string[]; noiseBudget: NoiseBudgetPolicy | null }): Promise<ImpactSummary> {
      const impact = await withHeartbeat(() => computeImpactSummary({ db, siem }, { ...input, now: now() }));
      // The change's deployments are those of its run: each keeps its target's projection.
      const run = Context.current().info.workflowExecution;
      if (!run) throw new Error('computeImpact runs only as the activity of a change: it records the projection on the deployments of that change');
      await recordDeploymentProjections(db, { tenantId: input.tenantId, workflowId: run.workflowId, impact });
      return impact;
    },
    recordImpact: records.recordImpact,
    recordDecision: records.recordDecision,
    cancelApproval: records.cancelApproval,
    expireApproval: records.expireApproval,
  };
}

export type ApprovalActivities = ReturnType<typeof createApprovalActivities>;
