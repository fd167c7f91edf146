import crypto from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { deployments, targets } from '../../db/schema';
import type { Rollback } from '../../workflows/rollback';
import { WorkflowType, rollbackSearchAttributes, workflowIds } from '../../workflows/contracts';
import { LIVE_DEPLOYMENT_STATUSES } from '../statuses';
import type { DomainDeps } from '../deps';
import { conflict, insufficientScope, notFound } from '../errors';
import { claimIdempotencyKey } from '../idempotency';
import { startOrJoin } from '../runs/start-or-join';
import { rollbackRunMetadata } from '../../workflows/run-summaries';
import { mayUseEnvironment, type Actor } from '../tenants/actor';
import { prepareRollback, versionBefore } from './rollback-plan';
import { findRule } from '../rules/registry';

export type RollbackRequest = {
  ruleId: string;
  target: string;
  reason: string;
  /** The version to restore; the one deployed before the live one when absent. */
  toVersion: number | undefined;
  /** Take the rule off the target whatever was deployed before. */
  remove: boolean;
  idempotencyKey: string | undefined;
  /** What the Idempotency-Key is checked against. */
  requestBody: unknown;
};

export type StartedRollback = { id: string; workflowId: string; runId: string; liveDeploymentId: string; fromVersion: number; toVersion: number | null };

/** Rollback: back to the previous (or a named) version on a target, or off the target when there is none. */
export async function requestRollback(deps: DomainDeps, actor: Actor, request: RollbackRequest): Promise<StartedRollback> {
  const { db } = deps.database;
  const ruleId = request.ruleId.toLowerCase();
  const rule = await findRule(db, actor.tenantId, request.ruleId);
  const [target] = await db
    .select()
    .from(targets)
    .where(and(eq(targets.tenantId, actor.tenantId), eq(targets.name, request.target)));
  if (!target) throw notFound(`No target ${request.target} in this tenant`);
  if (!mayUseEnvironment(actor, target.environment)) throw insufficientScope(`This token may not act on environment ${target.environment} (target ${target.name})`);
  const scope = and(eq(deployments.tenantId, actor.tenantId), eq(deployments.ruleId, ruleId), eq(deployments.targetId, target.id));
  const [live] = await db
    .select()
    .from(deployments)
    .where(and(scope, inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES)));
  if (!live) throw conflict(`Rule ${ruleId} is not deployed on ${target.name}; there is nothing to roll back`);

  let toVersion: number | null;
  if (request.remove) {
    toVersion = null;
  } else if (request.toVersion !== undefined) {
    if (request.toVersion > rule.latestVersion) throw notFound(`Rule ${ruleId} has no version ${request.toVersion}`);
    if (request.toVersion === live.version) throw conflict(`Version ${live.version} is the one live on ${target.name}`);
    toVersion = request.toVersion;
  } else {
    toVersion = await versionBefore(db, live);
  }

  const id = request.idempotencyKey ? await claimIdempotencyKey(db, actor.tenantId, 'rollback', request.idempotencyKey, request.requestBody) : crypto.randomUUID();
  const workflowId = workflowIds.rollback(actor.tenantId, ruleId, target.name, id);
  const input = await prepareRollback(db, {
    live,
    targetName: target.name,
    toVersion,
    restoreId: id,
    workflowId,
    requestedBy: actor.tokenId,
    requestedByPrincipal: actor.principal,
    reason: request.reason,
  });
  const runId = await startOrJoin<typeof Rollback>(deps.temporal.client, WorkflowType.Rollback, {
    workflowId,
    taskQueue: deps.temporal.taskQueue,
    args: [input],
    ...rollbackRunMetadata({ ...input, title: rule.title, toVersion: input.to?.version ?? null, requestedBy: actor.principal }),
    typedSearchAttributes: rollbackSearchAttributes({ tenantId: actor.tenantId, ruleId, targetName: target.name }),
  });
  return { id, workflowId, runId, liveDeploymentId: live.id, fromVersion: live.version, toVersion };
}
