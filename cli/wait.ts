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

export const getDeployment = async (client: ApiClient, id: string, waitSeconds = 0, until: WaitUntil = 'decided') =>
  (await client.request<DeploymentView>('GET', `/deployments/${id}${waitSeconds > 0 ? `?wait=${waitSeconds}&until=${until}` : ''}`)).body;

export const getApproval = async (client: ApiClient, id: string, waitSeconds = 0) =>
  (await client.request<ApprovalView>('GET', `/approvals/${id}${waitSeconds > 0 ? `?wait=${waitSeconds}` : ''}`)).body;

/**
 * Reads the deployment until `done` holds, long-polling for the next change of its status (an
 * `active` deployment that a rollback is about to retire, a restore `deploying`).
 */
export async function waitForDeployment(client: ApiClient, id: string, deadline: Deadline, done: (d: DeploymentView) => boolean): Promise<DeploymentView> {
  for (;;) {
    const d = await getDeployment(client, id, deadline.pollSeconds, 'any_change');
    if (done(d)) return d;
    if (deadline.passed) throw new WaitTimeout(`Gave up after ${deadline.seconds} s: deployment ${d.id} of ${d.rule_id} v${d.version} on ${d.target} is still ${d.status}`, d);
    // A status that will not change (or a service that answered early): do not spin.
    await pause(SHORT_PAUSE_MS);
  }
}

/**
 * Waits for a deployment through its approval and its run, until it is live or ended. Each request
 * is held until the status changes (`until=any_change`), not until the end (`decided`), so that
 * `onAnswer` hears each step as it happens, e.g. to say that a reviewer approved.
 */
export async function waitForApprovedDeployment(
  client: ApiClient,
  deploymentId: string,
  approvalId: string | undefined,
  deadline: Deadline,
  onAnswer: (d: DeploymentView) => Promise<void> | void = () => {},
): Promise<DeploymentView> {
  for (;;) {
    const d = await getDeployment(client, deploymentId, deadline.pollSeconds, 'any_change');
    await onAnswer(d);
    if (d.status !== 'pending_approval' && d.status !== 'deploying') return d;
    if (deadline.passed)
      throw new WaitTimeout(
        `Gave up after ${deadline.seconds} s: deployment ${d.id} of ${d.rule_id} v${d.version} on ${d.target} is still ${d.status}${approvalId ? ` (approval ${approvalId})` : ''}`,
        d,
      );
    // An answer before anything changed (the long-poll ran out): do not spin.
    await pause(SHORT_PAUSE_MS);
  }
}
