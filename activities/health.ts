import { Context } from '@temporalio/activity';
import type { Db } from '../db/client';
import { watchDeploymentHealth, type HealthCrossing } from '../domain/health/health-watch';
import type { SiemAdapters } from '../siem/adapters';

export type { HealthCrossing } from '../domain/health/health-watch';

/** The activity execution this call is (the same for every attempt of it), or null outside an activity. */
function activityKey(): string | null {
  let info;
  try {
    info = Context.current().info;
  } catch {
    return null;
  }
  const run = info.workflowExecution;
  return run ? `${run.workflowId}/${run.runId}/${info.activityId}` : null;
}

export function createHealthActivities({ db, siem, now = () => new Date() }: { db: Db; siem: SiemAdapters; now?: () => Date }) {
  return {
    /** The health check after a detection run (domain/health/health-watch.ts): the notification to send, if a grade got worse. */
    checkRuleHealth: ({ deploymentId }: { deploymentId: string }): Promise<HealthCrossing | null> =>
      watchDeploymentHealth({ db, siem, now }, { deploymentId, key: activityKey() }),
  };
}

export type HealthActivities = ReturnType<typeof createHealthActivities>;
