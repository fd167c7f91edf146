import crypto from 'node:crypto';
import { and, count, eq, inArray } from 'drizzle-orm';
import { ApplicationFailure } from '@temporalio/common';
import type { DomainDeps } from '../deps';
import { startOrJoin } from '../runs/start-or-join';
import { deployRunMetadata } from '../../workflows/run-summaries';
import { approvals, deployments, ruleVersions, targets } from '../../db/schema';
import { conflict, insufficientScope, invalidRequest, notFound, resourceLimit } from '../errors';
import { claimIdempotencyKey, claimedIdempotencyKey, repointIdempotencyKey } from '../idempotency';
import { canonicalBudget, changeKey } from './change-key';
import { mayUseEnvironment, type Actor } from '../tenants/actor';
import { limitsOf } from '../tenants/resource-limits';
import { computeImpactSummary } from './impact-summary';
import type { DeployWithApproval } from '../../workflows/deploy-with-approval';
import type { DeployInput } from '../../workflows/change-messages';
import { KIND, RULE_ID, STATUS, TARGET, TENANT, WorkflowType, workflowIds } from '../../workflows/contracts';
import { LIVE_DEPLOYMENT_STATUSES, type NoiseBudgetPolicy } from '../statuses';
import { findRule } from '../rules/registry';
import { adapterForRequest } from '../targets/target-adapter';
import { missingPlaceholders, missingPlaceholdersDetail } from '../targets/placeholders';
import type { TargetRow } from '../targets/targets';
import { parseRule } from '../../sigma';

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
  /**
   * A deploy of the version already active on every target, with the same noise budget, changes
   * nothing: it answers the active deployments instead of starting a run.
   */
  noopWhenLive: boolean;
};

/**
 * `started`: a new change (or, for a repeated Idempotency-Key, the one it started before);
 * `reused`: an equal change already waited for approval, and this is it (nothing new recorded);
 * `unchanged`: the version is already active on every target (nothing to do).
 */
export type SubmittedChange =
  | { outcome: 'started'; approvalId: string | null; deploymentIds: string[]; workflowId: string; runId: string }
  | { outcome: 'reused'; approvalId: string; deploymentIds: string[]; workflowId: string }
  | { outcome: 'unchanged'; approvalId: null; deploymentIds: string[] };

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

  await refuseMissingPlaceholders(db, auth.tenantId, ruleId, version, chosen);

  // A repeated Idempotency-Key names what its first request did, whatever was decided since.
  const claimed = change.idempotencyKey ? await claimedIdempotencyKey(db, auth.tenantId, 'change', change.idempotencyKey, change.requestBody) : undefined;
  if (claimed === undefined && change.noopWhenLive) {
    const live = await activeEqualDeployments(deps, auth.tenantId, ruleId, version, change.noiseBudget, chosen);
    if (live) return { outcome: 'unchanged', approvalId: null, deploymentIds: live };
  }

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

  const changeId =
    claimed ?? (change.idempotencyKey ? await claimIdempotencyKey(db, auth.tenantId, 'change', change.idempotencyKey, change.requestBody) : crypto.randomUUID());
  const approvalId = change.approvalRequired ? changeId : null;
  const refs = chosen.map((t) => ({ deploymentId: approvalId ? deploymentIdFor(changeId, t.id) : changeId, targetId: t.id, targetName: t.name }));
  const key = changeKey({ ruleId, version, targetIds: chosen.map((t) => t.id), noiseBudget: change.noiseBudget });
  const workflowId = approvalId ? workflowIds.approval(auth.tenantId, ruleId, approvalId) : workflowIds.deploy(auth.tenantId, ruleId, chosen[0]!.name, changeId);

  const reused = await db.transaction(async (tx) => {
    if (approvalId) {
      // The approval first: the partial unique index on its change key lets one equal change wait
      // at a time, so of two identical submissions at once one records and the other reuses it.
      const [recorded] = await tx
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
          changeKey: key,
          expiresAt: new Date(Date.now() + change.expiresInMs),
        })
        .onConflictDoNothing()
        .returning({ id: approvals.id });
      if (!recorded) {
        const [same] = await tx
          .select({ id: approvals.id })
          .from(approvals)
          .where(and(eq(approvals.id, approvalId), eq(approvals.tenantId, auth.tenantId)));
        // Not this change's own row (a retry): an equal change waits already.
        if (!same) {
          const [pending] = await tx
            .select()
            .from(approvals)
            .where(and(eq(approvals.tenantId, auth.tenantId), eq(approvals.changeKey, key), eq(approvals.status, 'pending')));
          if (!pending) throw conflict('An equal change was decided at this very moment; submit again');
          if (change.idempotencyKey) await repointIdempotencyKey(tx, auth.tenantId, 'change', change.idempotencyKey, pending.id);
          return pending;
        }
      }
    }
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
    return undefined;
  });
  if (reused) return { outcome: 'reused', approvalId: reused.id, deploymentIds: reused.deploymentIds, workflowId: reused.workflowId };

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
    ...deployRunMetadata({
      ruleId,
      title: rule.title,
      version,
      targets: chosen.map((t) => t.name),
      requestedBy: auth.principal,
      approvalId: approvalId ?? null,
      description: change.description,
      link: change.link,
      deploymentIds: refs.map((r) => r.deploymentId),
    }),
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
  return { outcome: 'started', approvalId, deploymentIds: refs.map((r) => r.deploymentId), workflowId, runId };
}

/**
 * A rule using `|expand` placeholders goes only to targets with a value for each (their own or
 * their environment's): refused here, naming each missing one and where to set it, rather than
 * failing in the run after an approval.
 */
async function refuseMissingPlaceholders(db: DomainDeps['database']['db'], tenantId: string, ruleId: string, version: number, chosen: TargetRow[]): Promise<void> {
  const [stored] = await db
    .select({ content: ruleVersions.content })
    .from(ruleVersions)
    .where(and(eq(ruleVersions.tenantId, tenantId), eq(ruleVersions.ruleId, ruleId), eq(ruleVersions.version, version)));
  if (!stored || !stored.content.includes('expand')) return;
  let rule;
  try {
    rule = parseRule(stored.content);
  } catch {
    return; // the run reports what does not parse
  }
  for (const t of chosen) {
    const missing = missingPlaceholders(rule, t);
    if (missing.length) {
      throw invalidRequest(
        missingPlaceholdersDetail(ruleId, missing, t),
        missing.map((n) => ({ pointer: '/body/targets', message: `placeholder %${n}% has no value on target ${t.name}` })),
      );
    }
  }
}

/**
 * The active deployments of the rule on the targets, when every target runs `version` with the
 * same noise budget; undefined otherwise. Read, not locked: two such deploys at once at worst
 * put the same version on again, which supersedes it with itself.
 */
async function activeEqualDeployments(
  deps: DomainDeps,
  tenantId: string,
  ruleId: string,
  version: number,
  noiseBudget: NoiseBudgetPolicy | null,
  chosen: Array<{ id: string }>,
): Promise<string[] | undefined> {
  const live = await deps.database.db
    .select({ id: deployments.id, targetId: deployments.targetId, version: deployments.version, noiseBudget: deployments.noiseBudget })
    .from(deployments)
    .where(
      and(
        eq(deployments.tenantId, tenantId),
        eq(deployments.ruleId, ruleId),
        eq(deployments.status, 'active'),
        inArray(
          deployments.targetId,
          chosen.map((t) => t.id),
        ),
      ),
    );
  const ids: string[] = [];
  for (const t of chosen) {
    const d = live.find((l) => l.targetId === t.id);
    if (!d || d.version !== version || canonicalBudget(d.noiseBudget) !== canonicalBudget(noiseBudget)) return undefined;
    ids.push(d.id);
  }
  return ids;
}
