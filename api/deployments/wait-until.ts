import { FINAL_DEPLOYMENT_STATUSES, type DeploymentStatus } from '../../domain/statuses';
import type { WAIT_UNTIL } from './schemas';

const FINAL = new Set<DeploymentStatus>(FINAL_DEPLOYMENT_STATUSES);

/**
 * When `GET /deployments/{id}?wait=N&until=…` answers. `decided` (CI waits here): once nothing is
 * left to wait for — it holds while the approval is pending and while the run deploys, and answers
 * once the decision was made and acted on (live, or ended). `any_change`: once the status differs
 * from `initial` (the status the caller last saw, or the one at the start of the request), each step
 * on its own (approved: `pending_approval` → `deploying`), or at once when `initial` is final (it
 * will not change).
 */
export function waitIsOver(until: (typeof WAIT_UNTIL)[number], initial: DeploymentStatus, now: DeploymentStatus): boolean {
  if (until === 'any_change') return FINAL.has(initial) || now !== initial;
  return now !== 'pending_approval' && now !== 'deploying';
}
