import { FINAL_DEPLOYMENT_STATUSES, type DeploymentStatus } from '../../domain/statuses';
import type { WAIT_UNTIL } from './schemas';

type Waited = { status: DeploymentStatus; approvalStatus: string | null };

const FINAL = new Set<DeploymentStatus>(FINAL_DEPLOYMENT_STATUSES);

/**
 * When `GET /deployments/{id}?wait=N&until=…` answers. `decided` (CI waits here): once nothing is
 * left to wait for on this deployment's way — a pending approval holds it, and so does `deploying`;
 * a decided approval answers even while the run has not yet moved the deployment on, so a reviewer's
 * decision reaches the caller at once. `any_change`: once the status differs from `initial`, or at
 * once when `initial` is final (nothing will change).
 */
export function waitIsOver(until: (typeof WAIT_UNTIL)[number], initial: DeploymentStatus, now: Waited): boolean {
  if (until === 'any_change') return FINAL.has(initial) || now.status !== initial;
  if (now.status === 'deploying') return false;
  if (now.status === 'pending_approval') return now.approvalStatus !== null && now.approvalStatus !== 'pending';
  return true;
}
