import { ApiError, isContentRejection, newIdempotencyKey, type ApiClient } from './api-client';
import { pushRuleFile } from './push';
import type { PlanItem, Plan } from './sync-plan';
import { CONCURRENT_REQUESTS, DEPLOYED_STATUSES } from './sync-state';
import { mapConcurrent } from './concurrency';
import { Deadline, getApproval, getDeployment, WaitTimeout, waitForApprovedDeployment, waitForDeployment, type DeploymentView } from './wait';

export type ApplyOptions = {
  approval: boolean;
  budget: number | undefined;
  allowDelete: boolean;
  reason: string;
  /** Seconds to wait for every run to end; undefined: submit and return. */
  waitSeconds: number | undefined;
};

/**
 * What became of one planned change: `started` (or joined) and, after a wait, `done` or `failed`,
 * or `pending` when the wait gave up first (the outcome is unknown); `failed` also when the
 * service refused it; `skipped` when a delete was not allowed or not safe.
 */
export type Applied = {
  action: PlanItem['action'];
  rule_id: string;
  file: string | null;
  outcome: 'started' | 'joined' | 'done' | 'failed' | 'pending' | 'skipped';
  version: number | null;
  /** The deployment that carries the change: the new one, or for a delete the one taken off. */
  deployment_id: string | null;
  approval_id: string | null;
  /** Where the deployment ended, after --wait. */
  status: string | null;
  reason: string | null;
};

type Progress = (line: string) => void;

const reasonOf = (err: ApiError) => err.problem?.detail ?? err.message;

function applied(item: PlanItem, fields: Partial<Applied> & Pick<Applied, 'outcome'>): Applied {
  return { action: item.action, rule_id: item.ruleId, file: item.file, version: item.version, deployment_id: null, approval_id: null, status: null, reason: null, ...fields };
}

/** The answer to POST /rules/deploy: 202 started, or 200 nothing new (`unchanged`, `reused`). */
type Started = { id: string; status: string; approval_id?: string | null; unchanged?: boolean; reused?: boolean; links: { approval?: string } };

/** A create or update: the version the file is (stored first if the registry lacks it), deployed to the target. */
async function deployItem(client: ApiClient, plan: Plan, item: PlanItem, options: ApplyOptions, progress: Progress): Promise<Applied> {
  if (item.joining) {
    progress(`joins     ${item.ruleId} v${item.joining.version}: deployment ${item.joining.id} is already ${item.joining.status}\n`);
    return applied(item, { outcome: 'joined', version: item.joining.version, deployment_id: item.joining.id, approval_id: item.joining.approval_id });
  }
  let version = item.version;
  if (version === null) {
    const pushed = await pushRuleFile(client, item.file!);
    if (!pushed.ok) return applied(item, { outcome: 'failed', reason: pushed.error });
    version = pushed.stored.version;
    progress(`${pushed.stored.created ? 'stored   ' : 'unchanged'} ${item.file} → ${item.ruleId} v${version}\n`);
  }
  let started: Started;
  try {
    const body = {
      rule_id: item.ruleId,
      target: plan.target,
      version,
      approval_required: options.approval,
      ...(options.budget !== undefined ? { noise_budget: { max_alerts_per_day: options.budget } } : {}),
    };
    started = (await client.request<Started>('POST', '/rules/deploy', body, { idempotencyKey: newIdempotencyKey() })).body;
  } catch (err) {
    // Over its noise budget, or a rule the target cannot run: this rule's outcome; the token or the service failing stops the run.
    if (!isContentRejection(err)) throw err;
    progress(`refused   ${item.ruleId} v${version} on ${plan.target}: ${reasonOf(err)}\n`);
    return applied(item, { outcome: 'failed', version, reason: reasonOf(err) });
  }
  const approvalId = started.approval_id ?? started.links.approval?.split('/').at(-1) ?? null;
  if (started.unchanged) {
    progress(`unchanged ${item.ruleId} v${version} is already live on ${plan.target} (deployment ${started.id})\n`);
    return applied(item, { outcome: 'done', version, deployment_id: started.id, status: started.status });
  }
  if (started.reused) {
    progress(`joins     ${item.ruleId} v${version}: an equal change already waits for approval ${approvalId} (deployment ${started.id}); no second approval\n`);
    return applied(item, { outcome: 'joined', version, deployment_id: started.id, approval_id: approvalId });
  }
  progress(`deploy    ${item.ruleId} v${version} → ${plan.target}: ${started.status} (deployment ${started.id}${approvalId ? `, approval ${approvalId}` : ''})\n`);
  return applied(item, { outcome: 'started', version, deployment_id: started.id, approval_id: approvalId });
}

/** A restore: the live deployment put back on the target as detflow deployed it (the run ends before the answer). */
async function restoreItem(client: ApiClient, plan: Plan, item: PlanItem, progress: Progress): Promise<Applied> {
  const live = item.deployed!;
  try {
    const restored = (await client.request<DeploymentView>('POST', `/deployments/${live.id}/restore`)).body;
    const left = restored.drift ?? [];
    progress(`restored  ${item.ruleId} v${live.version} on ${plan.target}${left.length ? `; still drifted: ${left.map((d) => d.kind).join(', ')}` : ''}\n`);
    return applied(item, {
      outcome: left.length ? 'failed' : 'done',
      version: live.version,
      deployment_id: live.id,
      status: restored.status,
      reason: left.length ? left.map((d) => d.detail).join('; ') : null,
    });
  } catch (err) {
    if (!(err instanceof ApiError) || !(err.status === 409 || err.status === 503 || isContentRejection(err))) throw err;
    progress(`refused   restore of ${item.ruleId} on ${plan.target}: ${reasonOf(err)}\n`);
    return applied(item, { outcome: 'failed', version: live.version, deployment_id: live.id, reason: reasonOf(err) });
  }
}

/** A delete: the rule taken off the target whatever versions it had before (`remove: true`). */
async function deleteItem(client: ApiClient, plan: Plan, item: PlanItem, reason: string, progress: Progress): Promise<Applied> {
  const live = item.deployed!;
  try {
    await client.request('POST', '/rules/rollback', { rule_id: item.ruleId, target: plan.target, reason, remove: true }, { idempotencyKey: newIdempotencyKey() });
  } catch (err) {
    if (!(err instanceof ApiError) || !(err.status === 409 || isContentRejection(err))) throw err;
    // 409: nothing live to roll back. Gone since the plan was read is what a delete wants; still live is a refusal.
    const now = err.status === 409 ? await getDeployment(client, live.id) : undefined;
    if (now && !DEPLOYED_STATUSES.has(now.status)) {
      progress(`deleted   ${item.ruleId} was already off ${plan.target} (deployment ${live.id} is ${now.status})\n`);
      return applied(item, { outcome: 'done', version: live.version, deployment_id: live.id, status: now.status });
    }
    progress(`refused   delete of ${item.ruleId} on ${plan.target}: ${reasonOf(err)}\n`);
    return applied(item, { outcome: 'failed', version: live.version, deployment_id: live.id, reason: reasonOf(err) });
  }
  progress(`delete    ${item.ruleId} v${live.version} from ${plan.target}: started (${reason})\n`);
  return applied(item, { outcome: 'started', version: live.version, deployment_id: live.id });
}

/** Why a deployment did not end live, from the deployment and its approval, for the CI log. */
async function whyNot(client: ApiClient, d: DeploymentView, approvalId: string | null): Promise<string> {
  const approval = approvalId ? await getApproval(client, approvalId) : undefined;
  const decided = approval?.decided_by ? ` by ${approval.decided_by}${approval.comment ? `: ${approval.comment}` : ''}` : '';
  return `${d.status}${decided}${d.error ? ` (${d.error})` : ''}`;
}

/**
 * Follows one started change to its end: the version live, or the rule off the target; `pending`,
 * with where it stood, when the deadline passes first, so the other changes are still followed and
 * every one is reported.
 */
async function settle(client: ApiClient, plan: Plan, a: Applied, deadline: Deadline, progress: Progress): Promise<Applied> {
  try {
    return await settleOrTimeOut(client, plan, a, deadline, progress);
  } catch (err) {
    if (!(err instanceof WaitTimeout)) throw err;
    const status = err.deployment?.status ?? a.status;
    const approval = status === 'pending_approval' && a.approval_id ? ` (approval ${a.approval_id})` : '';
    const reason = `still ${status ?? 'unknown'} after ${deadline.seconds} s${approval}`;
    progress(`pending   ${a.action === 'delete' ? 'delete of ' : ''}${a.rule_id} v${a.version} on ${plan.target}: ${reason}\n`);
    return { ...a, outcome: 'pending', status, reason };
  }
}

async function settleOrTimeOut(client: ApiClient, plan: Plan, a: Applied, deadline: Deadline, progress: Progress): Promise<Applied> {
  if (a.action === 'delete') {
    const d = await waitForDeployment(client, a.deployment_id!, deadline, (x) => !DEPLOYED_STATUSES.has(x.status));
    const removed = d.status === 'rolled_back';
    progress(removed ? `removed   ${a.rule_id} from ${plan.target}\n` : `failed    delete of ${a.rule_id} on ${plan.target}: deployment ${d.id} is ${d.status}\n`);
    return { ...a, outcome: removed ? 'done' : 'failed', status: d.status, reason: removed ? null : `deployment ${d.id} is ${d.status}` };
  }
  const d = await waitForApprovedDeployment(client, a.deployment_id!, a.approval_id ?? undefined, deadline);
  if (DEPLOYED_STATUSES.has(d.status)) {
    progress(`${d.status.padEnd(9)} ${a.rule_id} v${d.version} is live on ${plan.target}\n`);
    return { ...a, outcome: 'done', status: d.status };
  }
  if (d.status === 'overtaken') {
    // A newer change of the rule went live first: not applied by design, not a failure.
    progress(`overtaken ${a.rule_id} v${d.version} on ${plan.target}: not applied, a newer change went live first\n`);
    return { ...a, outcome: 'skipped', status: d.status, reason: d.error ?? 'a newer change went live first' };
  }
  const reason = await whyNot(client, d, a.approval_id);
  progress(`${d.status.padEnd(9)} ${a.rule_id} v${d.version} is not live on ${plan.target}: ${reason}\n`);
  return { ...a, outcome: 'failed', status: d.status, reason };
}

/**
 * Carries out a plan. Creates and updates first, one at a time, so a rule that replaces another
 * under a new id is on the target before the old one goes. Deletes only with `allowDelete`, and
 * only when every create and update was accepted, for the same reason. With `waitSeconds`, every
 * started run is followed to its end under one deadline.
 */
export async function applyPlan(unretried: ApiClient, plan: Plan, options: ApplyOptions, progress: Progress, say: (line: string) => void): Promise<Applied[]> {
  // With --wait, one deadline from the start covers submitting and waiting; a restart of the
  // service meanwhile is retried within it (submissions carry an Idempotency-Key).
  const deadline = options.waitSeconds === undefined ? undefined : new Deadline(options.waitSeconds);
  const client = deadline ? unretried.retrying(deadline, say) : unretried;
  const results: Applied[] = [];
  for (const item of plan.items.filter((i) => i.action === 'create' || i.action === 'update')) results.push(await deployItem(client, plan, item, options, progress));

  for (const item of plan.items.filter((i) => i.action === 'restore')) results.push(await restoreItem(client, plan, item, progress));

  const refused = results.filter((r) => r.outcome === 'failed').length;
  for (const item of plan.items.filter((i) => i.action === 'delete')) {
    if (!options.allowDelete) {
      progress(`skipped   delete of ${item.ruleId} on ${plan.target}: deletes need --allow-delete\n`);
      results.push(applied(item, { outcome: 'skipped', version: item.deployed!.version, deployment_id: item.deployed!.id, reason: 'deletes need --allow-delete' }));
    } else if (refused > 0) {
      const reason = `${refused} create/update(s) were refused; a rule replacing this one may be among them`;
      progress(`skipped   delete of ${item.ruleId} on ${plan.target}: ${reason}\n`);
      results.push(applied(item, { outcome: 'skipped', version: item.deployed!.version, deployment_id: item.deployed!.id, reason }));
    } else {
      results.push(await deleteItem(client, plan, item, options.reason, progress));
    }
  }

  const pending = results.filter((r) => r.outcome === 'started' || r.outcome === 'joined');
  const approvals = [...new Set(pending.map((r) => r.approval_id).filter((id): id is string => id !== null))];
  if (approvals.length > 0) progress(`${approvals.length} approval(s) wait for a reviewer: ${approvals.map((id) => `detflow approve ${id}`).join('  |  ')}\n`);
  if (deadline === undefined || pending.length === 0) return results;

  const settled = await mapConcurrent(pending, CONCURRENT_REQUESTS, (a) => settle(client, plan, a, deadline, progress));
  return results.map((r) => settled[pending.indexOf(r)] ?? r);
}

export function appliedSummary(target: string, results: readonly Applied[], waited: boolean): string {
  const n = (o: Applied['outcome'][]) => results.filter((r) => o.includes(r.outcome)).length;
  const pending = n(['pending']);
  return `Applied to ${target}: ${n(['done', 'started', 'joined'])} ${waited ? 'done' : 'started'}, ${n(['failed'])} failed, ${n(['skipped'])} skipped${pending > 0 ? `, ${pending} still pending (--timeout reached)` : ''}`;
}
