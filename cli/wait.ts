import { InvalidArgumentError } from 'commander';
import type { ApiClient } from './api-client';
import { Deadline } from './deadline';

export { Deadline };

/** The parts of a deployment (GET /deployments/{id}) the CLI reports; JSON output carries all of it. */
export type DeploymentView = {
  id: string;
  rule_id: string;
  version: number;
  target: string;
  status: 'pending_approval' | 'deploying' | 'active' | 'superseded' | 'rolled_back' | 'rejected' | 'changes_requested' | 'expired' | 'failed' | 'demoted' | 'overtaken';
  error: string | null;
  workflow_id: string;
  /** The approval it waits or waited for; null when it needs none. */
  approval_id?: string | null;
  links: { self: string; approval?: string; run?: string };
  /** How the target departs from this deployment, as the last drift check found it. */
  drift?: DriftItem[];
};

/** One departure of a target from what detflow deployed (GET /settings/targets/{name}/drift). */
export type DriftItem = { kind: string; object: string; rule_id: string | null; deployment_id: string | null; detail: string };

/** The parts of an approval (GET /approvals/{id}) the CLI reports. */
export type ApprovalView = {
  id: string;
  rule_id: string;
  version: number;
  targets: string[];
  status: 'pending' | 'approved' | 'rejected' | 'changes_requested' | 'expired' | 'cancelled';
  decided_by: string | null;
  comment: string | null;
  expires_at: string | null;
};

/** Between reads of a state the service does not long-poll on (a decided approval not yet acted on, a rule being removed). */
const SHORT_PAUSE_MS = 250;

/** When a `--wait` gives up: exit 2, as the outcome is unknown, not failed. */
export class WaitTimeout extends Error {
  override name = 'WaitTimeout';
  constructor(
    message: string,
    /** The deployment as last read, when the wait was for one. */
    readonly deployment?: DeploymentView,
  ) {
    super(message);
  }
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** commander parser for whole numbers ≥ `min` (versions, seconds), so a typo is a usage error before any request. */
export const wholeNumber = (min: number) => (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new InvalidArgumentError(`expected a whole number ≥ ${min}`);
  return Number(value);
};

/**
 * What a long-poll on a deployment waits for (GET /deployments/{id}?until=): `decided` holds through
 * a pending approval and through deploying; `any_change` answers at the next change of status.
 */
export type WaitUntil = 'decided' | 'any_change';

/**
 * A deployment; with `waitSeconds`, long-polled. `from` (with `any_change`) is the status last seen:
 * a change that happened since answers at once instead of being waited for.
 */
export async function getDeployment(client: ApiClient, id: string, waitSeconds = 0, until: WaitUntil = 'decided', from?: DeploymentView['status']) {
  const query = waitSeconds > 0 ? `?wait=${waitSeconds}&until=${until}${from && until === 'any_change' ? `&from=${from}` : ''}` : '';
  return (await client.request<DeploymentView>('GET', `/deployments/${id}${query}`)).body;
}

export const getApproval = async (client: ApiClient, id: string, waitSeconds = 0) =>
  (await client.request<ApprovalView>('GET', `/approvals/${id}${waitSeconds > 0 ? `?wait=${waitSeconds}` : ''}`)).body;

/**
 * Reads the deployment until `done` holds: where it stands first, then a long-poll for each change
 * of its status (`until=any_change`) from the status last seen, so a change between two requests
 * (made while the service restarted, say) answers at once instead of being waited for.
 * `onAnswer` hears every answer.
 */
export async function waitForDeployment(
  client: ApiClient,
  id: string,
  deadline: Deadline,
  done: (d: DeploymentView) => boolean,
  onAnswer: (d: DeploymentView) => Promise<void> | void = () => {},
  approvalId?: string,
): Promise<DeploymentView> {
  let d = await getDeployment(client, id);
  for (;;) {
    await onAnswer(d);
    if (done(d)) return d;
    if (deadline.passed)
      throw new WaitTimeout(
        `Gave up after ${deadline.seconds} s: deployment ${d.id} of ${d.rule_id} v${d.version} on ${d.target} is still ${d.status}${approvalId ? ` (approval ${approvalId})` : ''}`,
        d,
      );
    const next = await getDeployment(client, id, deadline.pollSeconds, 'any_change', d.status);
    // The long-poll ran out with nothing changed: go again, without spinning on a service that answers early.
    if (next.status === d.status) await pause(SHORT_PAUSE_MS);
    d = next;
  }
}

/**
 * Waits for a deployment through its approval and its run, until it is live or ended, hearing each
 * step (`onAnswer`), e.g. to say that a reviewer approved.
 */
export function waitForApprovedDeployment(
  client: ApiClient,
  deploymentId: string,
  approvalId: string | undefined,
  deadline: Deadline,
  onAnswer: (d: DeploymentView) => Promise<void> | void = () => {},
): Promise<DeploymentView> {
  return waitForDeployment(client, deploymentId, deadline, (d) => d.status !== 'pending_approval' && d.status !== 'deploying', onAnswer, approvalId);
}
