import type { Db } from '../db/client';
import { tenants } from '../db/schema';
import type { SiemAdapters } from '../siem/adapters';

export type RetentionOutcome = { tenant_id: string; retention_days: number; deleted: number; cutoff: string };

export function createRetentionActivities({ db, siem, now = () => new Date() }: { db: Db; siem: SiemAdapters; now?: () => Date }) {
  return {
    /** Deletes every tenant's events older than its retention from the local event store. Idempotent. */
    async applyRetention(): Promise<RetentionOutcome[]> {
      const at = now();
      const out: RetentionOutcome[] = [];
      for (const t of await db.select({ id: tenants.id, days: tenants.retentionDays }).from(tenants)) {
        const { deleted, cutoff } = await siem.localStore.applyRetention(t.id, t.days, at);
        out.push({ tenant_id: t.id, retention_days: t.days, deleted, cutoff: cutoff.toISOString() });
      }
      return out;
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
