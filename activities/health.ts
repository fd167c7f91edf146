import { activityKey } from './activity-key';
import type { Db } from '../db/client';
import { watchDeploymentHealth, type HealthCrossing } from '../domain/health/health-watch';
import type { SiemAdapters } from '../siem/adapters';

export type { HealthCrossing } from '../domain/health/health-watch';

export function createHealthActivities({ db, siem, now = () => new Date() }: { db: Db; siem: SiemAdapters; now?: () => Date }) {
  return {
    /** The health check after a detection run (domain/health/health-watch.ts): the notification to send, if a grade got worse. */
    checkRuleHealth: ({ deploymentId }: { deploymentId: string }): Promise<HealthCrossing | null> =>
      watchDeploymentHealth({ db, siem, now }, { deploymentId, key: activityKey() }),
  };
}

export type HealthActivities = ReturnType<typeof createHealthActivities>;
