import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client';
import { checkTargetDrift, targetsToCheck } from '../domain/drift/drift-check';
import { driftView, type DriftView } from '../domain/drift/drift-view';
import type { SiemAdapters } from '../siem/adapters';
import { activityKey } from './activity-key';

export type TargetDriftOutcome = { tenantId: string; targetId: string; target: string; checkedAt: string; open: DriftView[]; found: DriftView[] };

export function createDriftActivities({ db, siem, now = () => new Date() }: { db: Db; siem: SiemAdapters; now?: () => Date }) {
  return {
    /** The targets a drift check visits: every one with a live deployment or open drift. */
    listDriftTargets: (): Promise<Array<{ tenantId: string; targetId: string }>> => targetsToCheck(db),

    /** Compares one target with detflow's records (domain/drift/drift-check.ts); keyed by the activity, so a retry finds the same new drift. */
    async checkTargetDrift({ targetId }: { targetId: string }): Promise<TargetDriftOutcome> {
      const r = await checkTargetDrift({ db, siem, now }, { targetId, key: activityKey() ?? `direct/${randomUUID()}` });
      return { tenantId: r.tenantId, targetId: r.targetId, target: r.target, checkedAt: r.checkedAt, open: r.open.map(driftView), found: r.found.map(driftView) };
    },
  };
}

export type DriftActivities = ReturnType<typeof createDriftActivities>;
