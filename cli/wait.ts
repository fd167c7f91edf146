import { InvalidArgumentError } from 'commander';
import type { ApiClient } from './api-client';

/** The parts of a deployment (GET /deployments/{id}) the CLI reports; JSON output carries all of it. */
export type DeploymentView = {
  id: string;
  rule_id: string;
  version: number;
  target: string;
  status: 'pending_approval' | 'deploying' | 'active' | 'superseded' | 'rolled_back' | 'rejected' | 'changes_requested' | 'expired' | 'failed' | 'demoted' | 'overtaken';
  error: string | null;
  workflow_id: string;
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

/** The service long-polls at most this long per request (`?wait=N`, N ≤ 60). */
const MAX_LONG_POLL_SECONDS = 60;
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

/** A deadline `seconds` from now, and how much of it each long-poll may use. */
export class Deadline {
  private readonly at: number;
  constructor(readonly seconds: number) {
    this.at = Date.now() + seconds * 1000;
  }
  get passed(): boolean {
    return Date.now() >= this.at;
  }
  /** Seconds for the next `?wait=`: what is left, at least 1, at most what the service allows. */
  get pollSeconds(): number {
    return Math.max(1, Math.min(MAX_LONG_POLL_SECONDS, Math.floor((this.at - Date.now()) / 1000)));
  }
}

/** commander parser for whole numbers ≥ `min` (versions, seconds), so a typo is a usage error before any request. */
export const wholeNumber = (min: number) => (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new InvalidArgumentError(`expected a whole number ≥ ${min}`);
  return Number(value);
};

export const getDeployment = async (client: ApiClient, id: string, waitSeconds = 0) =>
  (await client.request<DeploymentView>('GET', `/deployments/${id}${waitSeconds > 0 ? `?wait=${waitSeconds}` : ''}`)).body;

export const getApproval = async (client: ApiClient, id: string, waitSeconds = 0) =>
  (await client.request<ApprovalView>('GET', `/approvals/${id}${waitSeconds > 0 ? `?wait=${waitSeconds}` : ''}`)).body;

/**
 * Reads the deployment until `done` holds, long-polling where the service can (it holds a request
 * while a deployment is `deploying`) and pausing briefly where it cannot (the service answers at
 * once for a settled state, such as an `active` deployment that a rollback is about to retire).
 */
export async function waitForDeployment(client: ApiClient, id: string, deadline: Deadline, done: (d: DeploymentView) => boolean): Promise<DeploymentView> {
  for (;;) {
    const d = await getDeployment(client, id, deadline.pollSeconds);
    if (done(d)) return d;
    if (deadline.passed) throw new WaitTimeout(`Gave up after ${deadline.seconds} s: deployment ${d.id} of ${d.rule_id} v${d.version} on ${d.target} is still ${d.status}`, d);
    if (d.status !== 'deploying') await pause(SHORT_PAUSE_MS);
  }
}

/**
 * Waits for a deployment that needs approval: the decision (a long-poll on the approval), then the
 * deployment leaving `pending_approval` and `deploying`. The decision is recorded moments before
 * the run moves the deployment on, hence the short pause once the approval is decided.
 */
export async function waitForApprovedDeployment(client: ApiClient, deploymentId: string, approvalId: string | undefined, deadline: Deadline): Promise<DeploymentView> {
  for (;;) {
    const d = await getDeployment(client, deploymentId, deadline.pollSeconds);
    if (d.status !== 'pending_approval' && d.status !== 'deploying') return d;
    if (deadline.passed)
      throw new WaitTimeout(
        `Gave up after ${deadline.seconds} s: deployment ${d.id} of ${d.rule_id} v${d.version} on ${d.target} is still ${d.status}${approvalId ? ` (approval ${approvalId})` : ''}`,
        d,
      );
    if (d.status === 'pending_approval') {
      const approval = approvalId ? await getApproval(client, approvalId, deadline.pollSeconds) : undefined;
      if (approval?.status !== 'pending') await pause(SHORT_PAUSE_MS);
    }
  }
}
