import type { Logger } from 'pino';
import type { Db } from '../db/client';
import { createDeploymentActivities } from './deployments';

export type ActivityDeps = { db: Db; logger: Logger };

/** Every activity the worker registers, built from explicit dependencies so tests wire real ones. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createDeploymentActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
