import { Context } from '@temporalio/activity';

/**
 * The activity execution this call is (workflow id / run id / activity id: the same for every
 * attempt of it), or null outside an activity (a direct call). Activities that record what an
 * attempt did key it by this, so a retry after an attempt committed finds that attempt's result.
 */
export function activityKey(): string | null {
  let info;
  try {
    info = Context.current().info;
  } catch {
    return null;
  }
  const run = info.workflowExecution;
  return run ? `${run.workflowId}/${run.runId}/${info.activityId}` : null;
}
