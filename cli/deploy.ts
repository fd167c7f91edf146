import fs from 'node:fs';
import { ApiError, newIdempotencyKey, type ApiClient } from './api-client';
import { EXIT, UsageError, type Io } from './io';
import { pushRuleFile, type StoredVersion } from './push';
import { Deadline, getApproval, getDeployment, waitForApprovedDeployment, type ApprovalView, type DeploymentView } from './wait';

export type DeployOptions = {
  target: string;
  /** false with --no-approval; a reviewer decides otherwise (the API's default too). */
  approval?: boolean;
  budget?: number;
  version?: number;
  wait?: boolean;
  timeout: number;
  format: 'text' | 'json';
};

/** The answer to POST /rules/deploy: 202 a run started, 200 nothing new (`unchanged`, or `reused` an equal pending change). */
type Deployed = {
  id: string;
  status: string;
  workflow_id: string;
  run_id: string | null;
  approval_id?: string | null;
  unchanged?: boolean;
  reused?: boolean;
  links: { self: string; approval?: string; run?: string };
};

/** A deployment that ended without the rule live: which way, and why, in words for the CI log. */
function whyNotLive(d: DeploymentView, approval: ApprovalView | undefined): string {
  const by = approval?.decided_by ? ` by ${approval.decided_by}` : '';
  const comment = approval?.comment ? `: ${approval.comment}` : '';
  switch (d.status) {
    case 'rejected':
      return `the approval was rejected${by}${comment}`;
    case 'changes_requested':
      return `changes were requested${by}${comment}`;
    case 'expired':
      return `the approval expired${approval?.expires_at ? ` at ${approval.expires_at}` : ''} without a decision`;
    case 'failed':
      return `the deployment failed: ${d.error ?? 'no reason recorded'}`;
    case 'overtaken':
      return `not applied: a newer change of the rule went live first (${d.error ?? 'no reason recorded'})`;
    default:
      // superseded or rolled_back before this wait saw it active: it is not the live version now.
      return `it is no longer live (${d.status})${d.error ? `: ${d.error}` : ''}`;
  }
}

/**
 * The rule to deploy: a file is pushed first, so the registry holds exactly this text and the
 * version just stored is the one deployed; anything else is taken as a rule id already stored.
 */
async function resolveRule(
  client: ApiClient,
  rule: string,
  version: number | undefined,
): Promise<{ ruleId: string; version: number | undefined; pushed?: StoredVersion; error?: string }> {
  const isFile = fs.existsSync(rule) && fs.statSync(rule).isFile();
  if (!isFile) {
    if (fs.existsSync(rule)) throw new UsageError(`${rule} is a directory: deploy takes one rule file or rule id`);
    if (/\.ya?ml$/i.test(rule)) throw new UsageError(`No such rule file: ${rule}`);
    return { ruleId: rule, version };
  }
  if (version !== undefined) throw new UsageError('--version is for a rule id; a rule file deploys the version its text is stored as');
  const pushed = await pushRuleFile(client, rule);
  if (!pushed.ok) return { ruleId: rule, version: undefined, error: pushed.error };
  return { ruleId: pushed.stored.rule_id, version: pushed.stored.version, pushed: pushed.stored };
}

export async function deployCommand(io: Io, client: ApiClient, rule: string, options: DeployOptions): Promise<number> {
  const json = options.format === 'json';
  // With --format json, stdout carries one JSON document; what happens meanwhile goes to stderr.
  const progress = json ? io.err : io.out;
  // The whole command's --timeout, from the start: a restart of the service while the change is
  // submitted or waited for is retried within it.
  const deadline = options.wait ? new Deadline(options.timeout) : undefined;
  const api = deadline ? client.retrying(deadline, io.err) : client;
  const resolved = await resolveRule(client, rule, options.version);
  if (resolved.error !== undefined) {
    if (json) io.out(JSON.stringify({ file: rule, ok: false, error: resolved.error }, null, 2) + '\n');
    else io.out(`failed    ${rule}: ${resolved.error}\n`);
    return EXIT.failed;
  }
  if (resolved.pushed) progress(`${resolved.pushed.created ? 'stored   ' : 'unchanged'} ${rule} → ${resolved.pushed.rule_id} v${resolved.pushed.version}\n`);

  let started: Deployed;
  try {
    started = (
      await api.request<Deployed>(
        'POST',
        '/rules/deploy',
        {
          rule_id: resolved.ruleId,
          target: options.target,
          approval_required: options.approval !== false,
          ...(options.budget !== undefined ? { noise_budget: { max_alerts_per_day: options.budget } } : {}),
          ...(resolved.version !== undefined ? { version: resolved.version } : {}),
        },
        { idempotencyKey: newIdempotencyKey() },
      )
    ).body;
  } catch (err) {
    // Over its noise budget without approval: the service refuses this rule, which is an outcome, not a misuse.
    if (!(err instanceof ApiError && err.status === 403 && (err.problem?.type ?? '').endsWith('/resource-limit'))) throw err;
    if (json) io.out(JSON.stringify({ rule_id: resolved.ruleId, target: options.target, ok: false, error: err.problem?.detail ?? err.message }, null, 2) + '\n');
    else
      io.out(
        `refused   ${resolved.ruleId} on ${options.target}: ${err.problem?.detail ?? err.message}\n  Deploy with approval (without --no-approval) so a reviewer can accept the noise, or raise --budget.\n`,
      );
    return EXIT.failed;
  }

  const approvalId = started.approval_id ?? started.links.approval?.split('/').at(-1);
  let deployment = await getDeployment(api, started.id);
  if (started.unchanged) {
    // Already live as asked: a re-run job has nothing to do, and that is success.
    if (json) io.out(JSON.stringify({ pushed: resolved.pushed ?? null, deployment, approval: null, live: true, unchanged: true }, null, 2) + '\n');
    else io.out(`unchanged ${deployment.rule_id} v${deployment.version} is already live on ${deployment.target} (deployment ${deployment.id}): nothing to deploy\n`);
    return EXIT.ok;
  }
  // The status the service answered the request with; the run may have moved on since.
  progress(`deploy    ${deployment.rule_id} v${deployment.version} → ${deployment.target}: ${started.status} (deployment ${deployment.id})\n`);
  if (started.reused)
    progress(`reuses    approval ${approvalId}: an equal change (same rule, version, target and budget) already waited for it; no second approval was requested\n`);
  if (approvalId) {
    progress(`approval  ${approvalId} waits for a reviewer: ${client.linkTo(started.links.approval ?? `/api/v1/approvals/${approvalId}`)}\n`);
    progress(`          decide with: detflow approve ${approvalId}  |  detflow reject ${approvalId} --comment "…"  |  detflow request-changes ${approvalId} --comment "…"\n`);
  }
  if (started.links.run) progress(`run       ${started.links.run}\n`);

  if (!deadline) {
    if (json) io.out(JSON.stringify({ pushed: resolved.pushed ?? null, deployment, approval: approvalId ? await getApproval(client, approvalId) : null }, null, 2) + '\n');
    return EXIT.ok;
  }

  // Said as soon as the wait learns of it: an approved change still has its deployment ahead.
  let approvedSaid = false;
  deployment = await waitForApprovedDeployment(api, started.id, approvalId, deadline, async (d) => {
    // Past pending_approval with an approval: a reviewer approved (a refusal ends it, said at the end).
    if (!approvalId || approvedSaid || d.status === 'pending_approval') return;
    const now = await getApproval(api, approvalId);
    if (now.status !== 'approved') return;
    approvedSaid = true;
    progress(`approved  ${approvalId} by ${now.decided_by ?? 'a reviewer'}${now.comment ? ` (${now.comment})` : ''}: deploying\n`);
  });
  const approval = approvalId ? await getApproval(api, approvalId) : undefined;
  const live = deployment.status === 'active';
  if (json) {
    io.out(
      JSON.stringify(
        { pushed: resolved.pushed ?? null, deployment, approval: approval ?? null, live, ...(live ? {} : { reason: whyNotLive(deployment, approval) }) },
        null,
        2,
      ) + '\n',
    );
  } else {
    const approvedBy = approval?.status === 'approved' ? `, approved by ${approval.decided_by}${approval.comment ? `: ${approval.comment}` : ''}` : '';
    io.out(
      live
        ? `active    ${deployment.rule_id} v${deployment.version} is live on ${deployment.target}${approvedBy}\n`
        : `${deployment.status.padEnd(9)} ${deployment.rule_id} v${deployment.version} is not live on ${deployment.target}: ${whyNotLive(deployment, approval)}\n`,
    );
  }
  // Overtaken is the service doing the right thing (the newer change wins): not applied, not an error.
  return live || deployment.status === 'overtaken' ? EXIT.ok : EXIT.failed;
}
