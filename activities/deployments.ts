import type { Db } from '../db/client';
import type { SiemAdapters } from '../siem/adapters';
import { deploymentRecords } from '../domain/changes/deployment-records';
import { withHeartbeat } from './heartbeat';

/** The steps of putting a rule version on its target (domain/changes/deployment-records.ts), as activities. */
export function createDeploymentActivities(deps: { db: Db; siem: SiemAdapters }) {
  const records = deploymentRecords(deps);
  return {
    /** The adapter deploy heartbeats, so a worker that dies is noticed in seconds. */
    deployToTarget: (input: { deploymentId: string }) => withHeartbeat(() => records.deployToTarget(input)),
    loadDeploymentPlan: records.loadDeploymentPlan,
    retireDeployment: records.retireDeployment,
    setDeploymentStatus: records.setDeploymentStatus,
    activateDeployment: records.activateDeployment,
  };
}

export type DeploymentActivities = ReturnType<typeof createDeploymentActivities>;
