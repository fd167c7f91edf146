import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';

/**
 * Starts a run under a business workflow id, or joins the one that id already names — running or
 * finished — so a retried request (same Idempotency-Key) never starts a second run. Returns the
 * run id. `workflow` is the function or its type name (the domain starts runs by name, importing
 * only the workflow's type).
 */
export async function startOrJoin<W extends Workflow>(client: Client, workflow: W | string, options: WorkflowStartOptions<W>): Promise<string> {
  try {
    const handle = await client.workflow.start(workflow, { ...options, workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'REJECT_DUPLICATE' });
    return handle.firstExecutionRunId;
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return (await client.workflow.getHandle(options.workflowId).describe()).runId;
  }
}
