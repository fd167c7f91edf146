import { proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities, RetentionOutcome } from '../activities/retention';

const { applyRetention } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
});

/** The daily retention pass over the local event store (started by the `retention` schedule). */
export async function ApplyRetention(): Promise<RetentionOutcome[]> {
  return applyRetention();
}
