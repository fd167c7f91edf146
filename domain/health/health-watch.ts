import type { FieldPresenceMemo } from './field-presence-memo';
import { and, desc, eq, gte, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { deployments, detectionRuns, ruleHealthStates, targets } from '../../db/schema';
import type { SiemAdapters } from '../../siem/adapters';
import { dataQualityOf } from './rule-health';
import { errorRateOf } from './error-rate';
import { readHealthThresholds } from './health-settings';
import { worstGrade, type Grade, type HealthStatus } from './health-status';

/** What the check after a detection run needs: the records, the target's adapter, the clock. */
export type HealthWatchDeps = {
  db: Db;
  siem: SiemAdapters;
  now: () => Date;
  /** A detection pass's shared field-presence answers (one scan per logsource per pass). */
  presence?: FieldPresenceMemo;
};

/** A deployment whose health got worse: the `rule.health_degraded` notification to send. */
export type HealthCrossing = { tenantId: string; data: Record<string, unknown> };

const ORDER: readonly Grade[] = ['ok', 'degraded', 'failing'];
const isGrade = (s: HealthStatus): s is Grade => (ORDER as readonly string[]).includes(s);
/** True when `next` is a worse grade than `previous` (a figure never graded counts as ok). */
export const worsened = (previous: Grade | null, next: Grade): boolean => ORDER.indexOf(next) > ORDER.indexOf(previous ?? 'ok');

/**
 * After a detection run of a live deployment: grades its error rate (its runs of the last
 * `freshness_hours`) and the data quality of its target against the tenant's thresholds, remembers
 * the grades, and answers the notification to send when one of them got worse than it was (ok →
 * degraded or failing, degraded → failing); null otherwise, and for a deployment that is not live.
 * `key` names the check (the activity execution): an attempt retried after an earlier one
 * committed answers what that one found, so the crossing is never lost nor sent twice.
 */
export async function watchDeploymentHealth(deps: HealthWatchDeps, { deploymentId, key }: { deploymentId: string; key: string | null }): Promise<HealthCrossing | null> {
  const { db } = deps;
  const now = deps.now();
  const [row] = await db
    .select({ d: deployments, target: targets.name, targetKind: targets.kind, targetConnection: targets.connection })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .where(eq(deployments.id, deploymentId));
  if (!row || (row.d.status !== 'active' && row.d.status !== 'demoted')) return null;
  const { d } = row;
  const t = await readHealthThresholds(db, d.tenantId);
  const since = new Date(now.getTime() - t.freshness_hours * 3_600_000);

  const recent = and(eq(detectionRuns.deploymentId, deploymentId), gte(detectionRuns.startedAt, since));
  const [runs] = await db
    .select({ runs: sql<number>`count(*)::int`, failed: sql<number>`(count(*) filter (where ${detectionRuns.error} is not null))::int` })
    .from(detectionRuns)
    .where(recent);
  const [last] = await db
    .select({ message: detectionRuns.error, at: detectionRuns.startedAt })
    .from(detectionRuns)
    .where(and(recent, isNotNull(detectionRuns.error)))
    .orderBy(desc(detectionRuns.startedAt))
    .limit(1);
  const errorRate = errorRateOf(Number(runs?.runs ?? 0), Number(runs?.failed ?? 0), last ? { message: last.message!, at: last.at, deploymentId } : null, t);
  const quality = await dataQualityOf(
    { db, siem: deps.siem, ...(deps.presence ? { presence: deps.presence } : {}) },
    d.tenantId,
    d.ruleId,
    [{ version: d.version, target: row.target, targetId: d.targetId, targetKind: row.targetKind, targetConnection: row.targetConnection }],
    t,
    now,
  );

  return db.transaction(async (tx) => {
    await tx.insert(ruleHealthStates).values({ deploymentId, tenantId: d.tenantId }).onConflictDoNothing();
    const [state] = await tx.select().from(ruleHealthStates).where(eq(ruleHealthStates.deploymentId, deploymentId)).for('update');
    if (key !== null && state!.crossingKey === key) return state!.crossing ? { tenantId: d.tenantId, data: state!.crossing } : null;
    // A figure that cannot be graded now (no run, a target that cannot tell) keeps its last grade.
    const errorGrade = isGrade(errorRate.status) ? errorRate.status : state!.errorRate;
    const qualityGrade = isGrade(quality.status) ? quality.status : state!.dataQuality;
    const reasons: string[] = [];
    if (errorGrade && worsened(state!.errorRate, errorGrade) && errorRate.reason) reasons.push(errorRate.reason);
    if (qualityGrade && worsened(state!.dataQuality, qualityGrade) && quality.reason) reasons.push(quality.reason);
    const crossing =
      reasons.length === 0
        ? null
        : {
            deployment_id: deploymentId,
            rule_id: d.ruleId,
            version: d.version,
            target: row.target,
            status: worstGrade([errorGrade ?? 'ok', qualityGrade ?? 'ok']),
            reasons,
            error_rate: {
              status: errorRate.status,
              rate: errorRate.rate,
              runs: errorRate.runs,
              failed_runs: errorRate.failedRuns,
              last_error: errorRate.lastError?.message ?? null,
            },
            data_quality: { status: quality.status, reason: quality.reason },
            window_hours: t.freshness_hours,
          };
    await tx
      .update(ruleHealthStates)
      .set({ errorRate: errorGrade, dataQuality: qualityGrade, updatedAt: now, ...(crossing ? { crossingKey: key, crossing } : {}) })
      .where(eq(ruleHealthStates.deploymentId, deploymentId));
    return crossing ? { tenantId: d.tenantId, data: crossing } : null;
  });
}
