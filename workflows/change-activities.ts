import { type ActivityOptions, proxyActivities } from '@temporalio/workflow';
import type { ApprovalActivities } from '../activities/approvals';
import type { DeploymentActivities } from '../activities/deployments';
import type { ScheduleActivities } from '../activities/schedules';
import { FailureType } from './contracts';

/** The activities a change runs, each group with the retry policy its work needs. */

const retry = { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 } as const;
const options: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { ...retry, nonRetryableErrorTypes: [FailureType.DeploymentNotFound, FailureType.RuleDoesNotCompile, FailureType.UnsupportedTargetKind] },
};
/** Records of the change: deployment statuses, approval decisions, activation. */
export const records = proxyActivities<DeploymentActivities & ApprovalActivities>(options);
/**
 * Detection schedules are set up after activation, when the version is already live: their work
 * retries until Temporal and the database answer again (no maximum), since giving up would leave a
 * live rule without detection. Only activity options differ, which the history does not pin.
 */
export const schedules = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: [FailureType.DeploymentNotFound] },
});
/**
 * The adapter deploy heartbeats: when the worker running it dies, another worker retries it after
 * the heartbeat timeout (seconds) rather than the start-to-close timeout (a minute). A retry is
 * safe — the adapter keys the deploy by the deployment id. Only activity options differ, which
 * the history does not pin, so runs in flight replay unchanged.
 */
export const adapterDeploys = proxyActivities<DeploymentActivities>({ ...options, heartbeatTimeout: '10 seconds' });
/** The impact summary counts each target's last 7 days: as long as a replay chunk may take, heartbeating. */
export const impacts = proxyActivities<ApprovalActivities>({ ...options, startToCloseTimeout: '10 minutes', heartbeatTimeout: '20 seconds' });
