import { ApplicationFailure } from '@temporalio/common';
import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import type { SiemAdapters } from '../../siem/adapters';
import { compileRuleForTarget, targetAdapter } from '../rules/rule-compilation';
import { sameRuleOnTarget } from './deployment-scope';
import { deployments, ruleVersions, targets } from '../../db/schema';
import { FailureType } from '../../workflows/contracts';
import { FINAL_DEPLOYMENT_STATUSES, LIVE_DEPLOYMENT_STATUSES, type DeploymentStatus } from '../statuses';

export type DeploymentPlan = {
  deploymentId: string;
  tenantId: string;
  ruleId: string;
  version: number;
  content: string;
  target: { id: string; name: string; kind: string; environment: string };
};

// Terminal states are never overwritten by a late or retried activity.
const FINAL: DeploymentStatus[] = [...FINAL_DEPLOYMENT_STATUSES];

/**
 * Refuses a change that a newer one has overtaken: a live version of the same rule on the same
 * target that was requested after this deployment was (a direct deploy while this one waited for
 * approval, or a deploy requested while a rollback was being planned). Applying it would silently
 * replace the newer change; it is ended with the reason instead, to be requested again if it
 * should still happen. Between two changes, the one requested last wins, whichever finishes first.
 */
async function refuseIfOvertaken(q: Pick<Db, 'select'>, deploymentId: string): Promise<void> {
  const [newer] = await q
    .select({ version: deployments.version, createdAt: deployments.createdAt })
    .from(deployments)
    .where(
      and(
        inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES),
        ne(deployments.id, deploymentId),
        // Compared in SQL, with the request's own timestamps (microseconds).
        sql`(${deployments.tenantId}, ${deployments.ruleId}, ${deployments.targetId}) = (select m.tenant_id, m.rule_id, m.target_id from deployments m where m.id = ${deploymentId})`,
        sql`${deployments.createdAt} > (select m.created_at from deployments m where m.id = ${deploymentId})`,
      ),
    );
  if (newer) {
    throw ApplicationFailure.nonRetryable(
      `Version ${newer.version}, requested at ${newer.createdAt.toISOString()} after this change, is live on this target; applying this change would replace it, so nothing was changed (request it again if it should)`,
      FailureType.LiveVersionChanged,
    );
  }
}

/**
 * The records of a change's deployments, and what each step of putting one on its target does:
 * every operation is idempotent, so the activities over it can be retried.
 */
export function deploymentRecords({ db, siem }: { db: Db; siem: SiemAdapters }) {
  /** What a deployment will put on its target, as workflows see it (the target's settings stay out of their histories). */
  async function loadDeploymentPlan({ deploymentId }: { deploymentId: string }): Promise<DeploymentPlan> {
    const { target, ...plan } = await loadPlanWithConnection(deploymentId);
    const { connection: _settings, ...shown } = target;
    return { ...plan, target: shown };
  }

  /** Reads what a deployment will put on its target: the rule version's text and the target, with its stored connection settings. */
  async function loadPlanWithConnection(
    deploymentId: string,
  ): Promise<DeploymentPlan & { target: { connection: Record<string, unknown>; resolvedPlaceholders: Record<string, string[]> }; settingsVersion: number }> {
    const [row] = await db
      .select({
        tenantId: deployments.tenantId,
        ruleId: deployments.ruleId,
        version: deployments.version,
        content: ruleVersions.content,
        targetId: targets.id,
        targetName: targets.name,
        targetKind: targets.kind,
        environment: targets.environment,
        connection: targets.connection,
        resolvedPlaceholders: targets.resolvedPlaceholders,
        settingsVersion: targets.settingsVersion,
      })
      .from(deployments)
      .innerJoin(targets, eq(targets.id, deployments.targetId))
      .innerJoin(
        ruleVersions,
        and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)),
      )
      .where(eq(deployments.id, deploymentId));
    if (!row) throw ApplicationFailure.nonRetryable(`Deployment ${deploymentId} or its rule version does not exist`, FailureType.DeploymentNotFound);
    return {
      deploymentId,
      tenantId: row.tenantId,
      ruleId: row.ruleId,
      version: row.version,
      content: row.content,
      target: {
        id: row.targetId,
        name: row.targetName,
        kind: row.targetKind,
        environment: row.environment,
        connection: row.connection,
        resolvedPlaceholders: row.resolvedPlaceholders,
      },
      settingsVersion: row.settingsVersion,
    };
  }

  return {
    /**
     * Puts the rule version on its target through the target's adapter. Keyed by the deployment id,
     * so a retried activity (or a worker that died after the SIEM accepted it) never deploys twice.
     */
    async deployToTarget({ deploymentId }: { deploymentId: string }): Promise<{ query: string; changed: boolean }> {
      // The plan carries the tenant: one query on the path every deployment takes.
      const plan = await loadPlanWithConnection(deploymentId);
      await refuseIfOvertaken(db, deploymentId);
      const rule = compileRuleForTarget(siem, plan.content, plan.ruleId, plan.version, plan.target);
      const adapter = targetAdapter(siem, plan.target);
      const result = await adapter.deploy({ deploymentId, tenantId: plan.tenantId, targetId: plan.target.id, rule });
      // What the rule was compiled with, for the record: the target's settings version (placeholder
      // values, mapping) and a remote target's mapping.
      await db
        .update(deployments)
        .set({
          settingsVersion: plan.settingsVersion,
          ...(adapter.mapping ? { mapping: { name: adapter.mapping.name, version: adapter.mapping.version } } : {}),
        })
        .where(eq(deployments.id, deploymentId));
      return { query: rule.query, changed: result.changed };
    },

    loadDeploymentPlan,

    /**
     * Takes a rule off its target (rollback with no earlier version to restore): the adapter
     * undeploys it, then the record ends as rolled back with the reason. Both steps are idempotent.
     */
    async retireDeployment({ deploymentId, reason }: { deploymentId: string; reason: string }): Promise<void> {
      const plan = await loadPlanWithConnection(deploymentId);
      const [me] = await db.select({ status: deployments.status, error: deployments.error }).from(deployments).where(eq(deployments.id, deploymentId));
      if (me!.status === 'rolled_back' && me!.error === reason) return; // an earlier attempt retired it
      if (!(LIVE_DEPLOYMENT_STATUSES as readonly string[]).includes(me!.status)) {
        // Superseded since the removal was requested: taking it off now would leave the version
        // that replaced it live while reporting the rule removed.
        throw ApplicationFailure.nonRetryable(
          `Deployment ${deploymentId} (v${plan.version}) is no longer live on ${plan.target.name}: it is ${me!.status}, so the live version changed after the removal was requested; nothing was removed`,
          FailureType.LiveVersionChanged,
        );
      }
      await targetAdapter(siem, plan.target).undeploy(plan.tenantId, deploymentId);
      await db
        .update(deployments)
        .set({ status: 'rolled_back', error: reason, updatedAt: sql`now()`, endedAt: sql`now()` })
        .where(and(eq(deployments.id, deploymentId), inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES)));
    },

    async setDeploymentStatus(input: { deploymentId: string; status: DeploymentStatus; error: string | null }): Promise<void> {
      const ended = FINAL.includes(input.status);
      // A live version never ends as `failed`: what fails after activation leaves it live.
      const untouchable: DeploymentStatus[] = input.status === 'failed' ? [...FINAL, ...LIVE_DEPLOYMENT_STATUSES] : FINAL;
      await db
        .update(deployments)
        .set({ status: input.status, error: input.error, updatedAt: sql`now()`, ...(ended ? { endedAt: sql`now()` } : {}) })
        .where(and(eq(deployments.id, input.deploymentId), sql`${deployments.status} not in ${untouchable}`));
    },

    /**
     * Makes this deployment the active one of its rule on its target and supersedes the one before,
     * in one transaction, so there is never zero or two active versions. Running it again is a no-op.
     */
    async activateDeployment({
      deploymentId,
      previousEndsAs = 'superseded',
      reason = null,
    }: {
      deploymentId: string;
      previousEndsAs?: 'superseded' | 'rolled_back';
      reason?: string | null;
    }): Promise<{ superseded: string[] }> {
      // Read before the transaction: the store is another database. A new rule detects from now on.
      // The store's cursor is one commit order for every target, so it is this target's cursor too.
      const storeCursor = await siem.localStore.latestCursor();
      return db.transaction(async (tx) => {
        const [me] = await tx.select().from(deployments).where(eq(deployments.id, deploymentId)).for('update');
        if (!me) throw ApplicationFailure.nonRetryable(`Deployment ${deploymentId} does not exist`, FailureType.DeploymentNotFound);
        const previous = await tx
          .select({ id: deployments.id, cursor: deployments.detectionCursor })
          .from(deployments)
          .where(and(sameRuleOnTarget(me), inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES), ne(deployments.id, me.id)))
          .for('update');
        if (me.status === 'active') {
          // A retry after this transaction committed: the versions it superseded ended at the very
          // moment it was activated (now() is the transaction's start), so the caller still learns
          // which detection schedules to remove.
          const ended = await tx
            .select({ id: deployments.id })
            .from(deployments)
            .where(
              and(
                sameRuleOnTarget(me),
                inArray(deployments.status, ['superseded', 'rolled_back']),
                // Compared in SQL: a JavaScript Date would drop the timestamps' microseconds.
                sql`${deployments.endedAt} = (select a.activated_at from deployments a where a.id = ${me.id})`,
              ),
            );
          return { superseded: ended.map((e) => e.id) };
        }
        await refuseIfOvertaken(tx, deploymentId);
        if (previous.length) {
          await tx
            .update(deployments)
            .set({ status: previousEndsAs, error: reason, updatedAt: sql`now()`, endedAt: sql`now()` })
            .where(
              inArray(
                deployments.id,
                previous.map((p) => p.id),
              ),
            );
        }
        // A new version of a live rule carries on where the old one stopped: no event is evaluated
        // by both or by neither.
        const inherited = previous.find((p) => p.cursor !== null)?.cursor;
        await tx
          .update(deployments)
          .set({ status: 'active', error: null, activatedAt: sql`now()`, updatedAt: sql`now()`, detectionCursor: me.detectionCursor ?? inherited ?? storeCursor })
          .where(eq(deployments.id, me.id));
        return { superseded: previous.map((p) => p.id) };
      });
    },
  };
}

export type DeploymentRecords = ReturnType<typeof deploymentRecords>;
