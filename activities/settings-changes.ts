import type { Db } from '../db/client';
import type { SiemAdapters } from '../siem/adapters';
import { applySettingsVersion, computeSettingsImpact, endSettingsProposal, type SettingsImpact } from '../domain/targets/settings-change';
import { approvalRecords } from '../domain/changes/approval-records';
import { withHeartbeat } from './heartbeat';

type Ref = { tenantId: string; targetId: string; version: number };

/** A target's settings change (domain/targets/settings-change.ts), as activities. */
export function createSettingsChangeActivities({ db, siem, now = () => new Date() }: { db: Db; siem: SiemAdapters; now?: () => Date }) {
  const records = approvalRecords({ db, now });
  return {
    /** Replays each affected live rule with the settings in force and the proposed ones, and records it as the approval's impact. */
    async computeSettingsImpact(input: Ref & { approvalId: string }): Promise<SettingsImpact> {
      const impact = await withHeartbeat(() => computeSettingsImpact({ db, siem }, { ...input, now: now() }));
      await records.recordImpact({ approvalId: input.approvalId, impact: impact as never });
      return impact;
    },
    async applySettingsVersion(input: Ref): Promise<{ redeployed: string[] }> {
      return withHeartbeat(() => applySettingsVersion({ db, siem }, input));
    },
    async endSettingsProposal(input: Ref): Promise<void> {
      await endSettingsProposal(db, input);
    },
  };
}

export type SettingsChangeActivities = ReturnType<typeof createSettingsChangeActivities>;
