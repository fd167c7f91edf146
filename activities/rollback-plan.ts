import type { Db } from '../db/client';
import { planBudgetRollback } from '../domain/changes/rollback-plan';

export function createRollbackPlanActivities({ db }: { db: Db }) {
  return {
    /**
     * Prepares the rollback of a deployment that went over its noise budget, keyed by that
     * deployment: preparing it again returns the same run. Null when the deployment is no longer
     * live (a person rolled it back or deployed another version first).
     */
    planBudgetRollback: (input: { deploymentId: string; reason: string }) => planBudgetRollback(db, input),
  };
}

export type RollbackPlanActivities = ReturnType<typeof createRollbackPlanActivities>;
