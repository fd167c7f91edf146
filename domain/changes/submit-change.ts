import crypto from 'node:crypto';
import { and, count, eq, inArray } from 'drizzle-orm';
import { ApplicationFailure } from '@temporalio/common';
import type { DomainDeps } from '../deps';
import { startOrJoin } from '../runs/start-or-join';
import { approvals, deployments, targets } from '../../db/schema';
import { insufficientScope, invalidRequest, notFound, resourceLimit } from '../errors';
import { claimIdempotencyKey } from '../idempotency';
import { mayUseEnvironment, type Actor } from '../tenants/actor';
import { limitsOf } from '../tenants/resource-limits';
import { computeImpactSummary } from './impact-summary';
import type { DeployWithApproval } from '../../workflows/deploy-with-approval';
import type { DeployInput } from '../../workflows/change-messages';
import { KIND, RULE_ID, STATUS, TARGET, TENANT, WorkflowType, workflowIds } from '../../workflows/contracts';
import { LIVE_DEPLOYMENT_STATUSES, type NoiseBudgetPolicy } from '../statuses';
import { findRule } from '../rules/registry';
import { adapterForRequest } from '../targets/target-adapter';

export type ChangeRequest = {
  ruleId: string;
  version: number | undefined;
  targets: string[];
  approvalRequired: boolean;
  noiseBudget: NoiseBudgetPolicy | null;
  description: string | null;
  link: string | null;
  expiresInMs: number;
  idempotencyKey: string | undefined;
  /** What the Idempotency-Key is checked against: the same key with another body is a conflict. */
  requestBody: unknown;
};

export type SubmittedChange = { approvalId: string | null; deploymentIds: string[]; workflowId: string; runId: string };

/** A stable id for one target's deployment within a change, so a retried request names the same rows. */
function deploymentIdFor(changeId: string, targetId: string): string {
  const h = crypto.createHash('sha256').update(`${changeId}/${targetId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Submits a rule version for deployment to targets, behind an approval or not: checks the rule,
 * the targets and the token's environments, the tier's limits and — without approval — the noise
 * budget against a replay-based projection, then records the deployments (and the approval) and
 * starts DeployWithApproval. Idempotent under an Idempotency-Key.
 */
export async function submitChange(deps: DomainDeps, auth: Actor, change: ChangeRequest): Promise<SubmittedChange> {
  const { db } = deps.database;
  const ruleId = change.ruleId.toLowerCase();
  const rule = await findRule(db, auth.tenantId, change.ruleId);
  const version = change.version ?? rule.latestVersion;
  if (version > rule.latestVersion) throw notFound(`Rule ${ruleId} has no version ${version}; the latest is ${rule.latestVersion}`);

  const names = [...new Set(change.targets)];
  const found = await db
    .select()
    .from(targets)
    .where(and(eq(targets.tenantId, auth.tenantId), inArray(targets.name, names)));
  const chosen = names.map((name) => {
    const t = found.find((f) => f.name === name);
    if (!t) throw notFound(`No target ${name} in this tenant`);
    if (!mayUseEnvironment(auth, t.environment)) throw insufficientScope(`This token may not act on environment ${t.environment} (target ${name})`);
    if (!adapterForRequest(deps.siem, t, '/body/target').capabilities().deploy) {
      throw invalidRequest(`Targets of kind ${t.kind} cannot be deployed to`, [{ pointer: '/body/target', message: 'no deploy on this kind' }]);
    }
    return t;
  });

  const limit = limitsOf(auth).activeDeployments;
  if (limit !== null) {
    const [{ n }] = (await db
      .select({ n: count() })
      .from(deployments)
      .where(and(eq(deployments.tenantId, auth.tenantId), inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES)))) as [{ n: number }];
    if (Number(n) + chosen.length > limit) throw resourceLimit(`The ${auth.tier} tier allows ${limit} active deployments; ${n} are active`);
  }

  if (!change.approvalRequired && change.noiseBudget) {
    let impact;
    try {
      impact = await computeImpactSummary(
        { db, siem: deps.siem },
        { tenantId: auth.tenantId, ruleId, version, targetIds: chosen.map((t) => t.id), noiseBudget: change.noiseBudget, now: new Date() },
      );
    } catch (err) {
      if (err instanceof ApplicationFailure) throw invalidRequest(err.message, [{ pointer: '/body/rule_id', message: err.type ?? 'cannot compile' }]);
      throw err;
    }
    if (impact.over_budget) {
      const over = impact.targets.filter((t) => t.over_budget).map((t) => `${t.target}: ${t.projected_alerts_per_day} projected alerts/day`);
      throw resourceLimit(
        `The projection exceeds the noise budget of ${change.noiseBudget.max_alerts_per_day} alerts/day (${over.join('; ')}); deploy with approval_required to have it reviewed`,
      );
    }
  }

  const changeId = change.idempotencyKey ? await claimIdempotencyKey(db, auth.tenantId, 'change', change.idempotencyKey, change.requestBody) : crypto.randomUUID();
  const approvalId = change.approvalRequired ? changeId : null;
  const refs = chosen.map((t) => ({ deploymentId: approvalId ? deploymentIdFor(changeId, t.id) : changeId, targetId: t.id, targetName: t.name }));
  const workflowId = approvalId ? workflowIds.approval(auth.tenantId, ruleId, approvalId) : workflowIds.deploy(auth.tenantId, ruleId, chosen[0]!.name, changeId);

  await db.transaction(async (tx) => {
    await tx
      .insert(deployments)
      .values(
        refs.map((r) => ({
          id: r.deploymentId,
          tenantId: auth.tenantId,
          ruleId,
          version,
          targetId: r.targetId,
          status: approvalId ? ('pending_approval' as const) : ('deploying' as const),
          approvalRequired: change.approvalRequired,
          noiseBudget: change.noiseBudget,
          workflowId,
          requestedBy: auth.tokenId,
          requestedByPrincipal: auth.principal,
        })),
      )
      .onConflictDoNothing();
    if (approvalId) {
      await tx
        .insert(approvals)
        .values({
          id: approvalId,
          tenantId: auth.tenantId,
          ruleId,
          version,
          targets: chosen.map((t) => t.name),
          deploymentIds: refs.map((r) => r.deploymentId),
          noiseBudget: change.noiseBudget,
          status: 'pending',
          description: change.description,
          link: change.link,
          requestedBy: auth.tokenId,
          requestedByPrincipal: auth.principal,
          workflowId,
          expiresAt: new Date(Date.now() + change.expiresInMs),
        })
        .onConflictDoNothing();
    }
  });

  const input: DeployInput = {
    tenantId: auth.tenantId,
    ruleId,
    version,
    deployments: refs,
    noiseBudget: change.noiseBudget,
    approval: approvalId ? { approvalId, requestedBy: auth.tokenId, expiresInMs: change.expiresInMs } : null,
  };
  const runId = await startOrJoin<typeof DeployWithApproval>(deps.temporal.client, WorkflowType.DeployWithApproval, {
    workflowId,
    taskQueue: deps.temporal.taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: TENANT, value: auth.tenantId },
      { key: RULE_ID, value: ruleId },
      { key: TARGET, value: chosen.map((t) => t.name).join(',') },
      { key: KIND, value: approvalId ? 'approval' : 'deploy' },
      { key: STATUS, value: approvalId ? 'pending_approval' : 'deploying' },
    ],
  });
  await db
    .update(deployments)
    .set({ runId })
    .where(and(eq(deployments.workflowId, workflowId), eq(deployments.tenantId, auth.tenantId)));
  return { approvalId, deploymentIds: refs.map((r) => r.deploymentId), workflowId, runId };
}
