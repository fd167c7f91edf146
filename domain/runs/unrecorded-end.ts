import { WorkflowNotFoundError, type Client } from '@temporalio/client';

/**
 * Rows that a workflow settles itself (a replay's status, a deployment's) read as in progress until
 * it does. A workflow that ended without doing so — terminated or timed out in Temporal (an
 * operator's Terminate in the Web UI), reset, or never started because Temporal did not take the
 * start — would leave them in progress for ever. This tells, from Temporal's own view of the
 * workflow, whether that happened and why.
 */

/** A start can take this long between inserting the row and Temporal knowing the workflow. */
const START_GRACE_MS = 60_000;
/** How long to wait for Temporal to describe the workflow before deciding another time. */
const DESCRIBE_DEADLINE_MS = 5_000;
/** Temporal workflow statuses after which the workflow can no longer record anything. */
const ENDED_UNRECORDED = new Set(['TERMINATED', 'TIMED_OUT', 'FAILED', 'CANCELLED']);

/**
 * Why the workflow `workflowId`, started for a row created at `createdAt`, can no longer settle its
 * rows; undefined when it still can (running, or its start may still be under way) or when Temporal
 * did not answer.
 */
export async function unrecordedEnd(client: Client, workflowId: string, createdAt: Date, now: Date = new Date()): Promise<string | undefined> {
  try {
    const described = await client.withDeadline(Date.now() + DESCRIBE_DEADLINE_MS, () => client.workflow.getHandle(workflowId).describe());
    const status = described.status.name;
    if (!ENDED_UNRECORDED.has(status)) return undefined;
    const closed = described.closeTime ? ` at ${described.closeTime.toISOString()}` : '';
    return `The workflow ${workflowId} ended ${status} in Temporal${closed} without recording a result (terminated, timed out or reset outside detflow)`;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) return undefined; // Temporal unreachable: decide another time.
    if (now.getTime() - createdAt.getTime() < START_GRACE_MS) return undefined;
    return `The workflow ${workflowId} was never started (Temporal did not take the start request); nothing ran`;
  }
}
