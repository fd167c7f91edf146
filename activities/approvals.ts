import type { Db } from '../db/client';
import type { NoiseBudgetPolicy } from '../domain/statuses';
import type { SiemAdapters } from '../siem/adapters';
import { approvalRecords } from '../domain/changes/approval-records';
import { computeImpactSummary, type ImpactSummary } from '../domain/changes/impact-summary';
import { withHeartbeat } from './heartbeat';

/** An approval's impact summary and records (domain/changes), as activities. */
export function createApprovalActivities({ db, siem, now = () => new Date() }: { db: Db; siem: SiemAdapters; now?: () => Date }) {
  const records = approvalRecords({ db, now });
  return {
    /** Counts each target's last days: heartbeats, so a worker that dies is noticed in seconds. */
    async computeImpact(input: { tenantId: string; ruleId: string; version: number; targetIds: string[]; noiseBudget: NoiseBudgetPolicy | null }): Promise<ImpactSummary> {
      return withHeartbeat(() => computeImpactSummary({ db, siem }, { ...input, now: now() }));
    },
    recordImpact: records.recordImpact,
    recordDecision: records.recordDecision,
    cancelApproval: records.cancelApproval,
    expireApproval: records.expireApproval,
  };
}

export type ApprovalActivities = ReturnType<typeof createApprovalActivities>;
