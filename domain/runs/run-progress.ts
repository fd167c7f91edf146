import type { Client } from '@temporalio/client';

/** How long a GET waits for a running run to answer its progress query before reporting none. */
const PROGRESS_QUERY_MS = 2_000;

/** What a running run says of its progress; null when it cannot be asked (e.g. no worker is up). */
export async function queryProgress<P>(client: Client, workflowId: string, query: string): Promise<P | null> {
  return client.withDeadline(Date.now() + PROGRESS_QUERY_MS, () => client.workflow.getHandle(workflowId).query<P>(query)).catch(() => null);
}

/**
 * How a reader waits for a running run to end: given how to read the run and when it has ended,
 * answers what it read last (undefined when there is no such run). `?wait=N` long-polls through
 * this; a plain read reads once.
 */
export type WaitForRun = <T>(read: () => Promise<T | undefined>, ended: (run: T) => boolean) => Promise<T | undefined>;

export const readOnce: WaitForRun = (read) => read();
