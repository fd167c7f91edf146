import { and, desc, eq, gte, inArray, isNotNull, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { PgSelect } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client';
import { approvals, deployments, detectionRunTotals, targets } from '../../db/schema';
import { poissonInterval } from '../../lib/poisson-interval';
import type { DomainDeps } from '../deps';
import { round } from '../runs/rounding';
import type { Actor } from '../tenants/actor';
import { inActorEnvironments } from '../tenants/scope';

/**
 * Forecast accuracy: for each deployment, the alerts/day its impact summary projected for its
 * target (recorded on the deployment when the change's impact was computed, approval or not; for
 * deployments recorded before that, the approval's `impact`) against the alerts/day
 * observed since it went live, so teams learn how far to trust a replay. See the README.
 *
 * - observed alerts = what its scheduled detection runs raised + suppressed (and, while demoted,
 *   matched in shadow: the alerts it would have raised), from `detection_runs` (their sums kept per
 *   deployment in `detection_run_totals`);
 * - observed alerts/day = observed alerts × 86,400 / seconds live (activated_at → ended_at, or now);
 * - error ratio = observed / projected; log error = ln(observed / projected), null when either is 0;
 * - within interval: the observed rate lies in the projection's 95% interval (its `ci95`);
 * - a deployment live less than MIN_OBSERVED_DAYS is flagged `short_observation`: its figures are
 *   given, but the distribution leaves it out unless asked to include it.
 */

const DAY_SECONDS = 86_400;
/** Below a day live, daily seasonality has not been observed: the observed rate is flagged and, by default, left out of the distribution. */
export const MIN_OBSERVED_DAYS = 1;

export type Interval = { low: number; high: number };

export type ForecastProjection = {
  /** The approval whose review showed the projection; null for a change deployed without approval. */
  approval_id: string | null;
  computed_at: string | null;
  alerts_per_day: number;
  /** null for an impact summary recorded before projections carried an interval. */
  ci95: Interval | null;
  low_confidence: boolean | null;
  low_confidence_reasons: string[] | null;
};

export type ForecastObservation = {
  from: string;
  to: string;
  live_seconds: number;
  detection_runs: number;
  alerts: number;
  alerts_per_day: number;
  /** Exact Poisson 95% interval of the observed rate. */
  ci95: Interval;
  /** Live less than MIN_OBSERVED_DAYS. */
  short_observation: boolean;
};

export type DeploymentForecast = {
  deployment_id: string;
  rule_id: string;
  version: number;
  target: string;
  environment: string;
  status: string;
  activated_at: string;
  ended_at: string | null;
  projection: ForecastProjection | null;
  observation: ForecastObservation | null;
  /** observed / projected; null when there is no projection or observation, or the projection is 0. */
  error_ratio: number | null;
  /** ln(observed / projected); null when either is 0 (or missing). */
  log_error: number | null;
  /** Whether the observed rate lies in the projection's 95% interval; null when either is missing. */
  within_interval: boolean | null;
  /** Why a figure above is null, or why it should be read with care. */
  reasons: string[];
};

export type HistogramBucket = { label: string; from: number | null; to: number | null; count: number };

export type ForecastDistribution = {
  window: { from: string; to: string };
  min_observed_days: number;
  /** Deployments live at some point in the window, on targets in the actor's environments. */
  deployments: number;
  /** Those with both a projection and an observation of at least min_observed_days: what the figures below describe. */
  compared: number;
  excluded: { no_projection: number; no_observation: number; short_observation: number };
  abs_log_error: { count: number; median: number | null; p90: number | null };
  error_ratio: { count: number; median: number | null };
  within_interval: { count: number; within: number; share: number | null };
  /** Compared deployments by error ratio (observed / projected). */
  histogram: HistogramBucket[];
  /** Why a figure above is null. */
  reasons: string[];
};

/** The buckets of the histogram, by error ratio; both-zero and projected-zero forecasts have their own. */
export const ERROR_RATIO_BUCKETS: ReadonlyArray<{ label: string; from: number; to: number | null }> = [
  { label: '< 0.25×', from: 0, to: 0.25 },
  { label: '0.25–0.5×', from: 0.25, to: 0.5 },
  { label: '0.5–0.8×', from: 0.5, to: 0.8 },
  { label: '0.8–1.25×', from: 0.8, to: 1.25 },
  { label: '1.25–2×', from: 1.25, to: 2 },
  { label: '2–4×', from: 2, to: 4 },
  { label: '≥ 4×', from: 4, to: null },
];

type Row = {
  id: string;
  ruleId: string;
  version: number;
  status: string;
  activatedAt: Date;
  endedAt: Date | null;
  target: string;
  environment: string;
  approvalId: string | null;
  computedAt: string | null;
  projected: { estimate: number | null; published: number | null; ci95: Interval | null; low_confidence: boolean | null; reasons: string[] | null } | null;
  runs: number;
  alerts: number;
};

/** The projection of the deployment's own target, extracted in the database: the impact also holds diffs, which stay there. */
const targetImpact = sql`(select x from jsonb_array_elements(${approvals.impact}->'targets') x where x->>'target' = ${targets.name} limit 1)`;
/** The deployment's projection: recorded on it, or (deployments recorded before that) its approval's impact for its target. */
const projectionOf = sql`coalesce(${deployments.projection}, ${targetImpact})`;
const observedAlerts = sql<number>`coalesce(${detectionRunTotals.alertsRaised} + ${detectionRunTotals.alertsSuppressed} + ${detectionRunTotals.shadowMatches}, 0)`;

/**
 * The tenant's deployments that went live on targets in the actor's environments, with their
 * targets, run totals and approvals joined: `query` selects from deployments.
 */
function wentLive<Q extends PgSelect>(query: Q, actor: Actor, where: SQL | undefined) {
  return (
    query
      .innerJoin(targets, eq(targets.id, deployments.targetId))
      // Its runs summed as they are recorded, not per read: the sum over detection_runs grows with every run.
      .leftJoin(detectionRunTotals, eq(detectionRunTotals.deploymentId, deployments.id))
      // A change's approval and deployments share its workflow id (an equality the planner can hash-join on); the
      // approval's deployment_ids names each of them.
      .leftJoin(
        approvals,
        and(
          eq(approvals.tenantId, deployments.tenantId),
          eq(approvals.workflowId, deployments.workflowId),
          sql`${approvals.deploymentIds} @> jsonb_build_array(${deployments.id}::text)`,
        ),
      )
      .where(and(eq(deployments.tenantId, actor.tenantId), isNotNull(deployments.activatedAt), inActorEnvironments(actor, targets.environment), where))
  );
}

/** The deployments that went live, with their projection (from their approval's impact, for their target) and what detection observed. */
async function forecastRows(db: Db, actor: Actor, where: SQL | undefined): Promise<Row[]> {
  const rows = await wentLive(
    db
      .select({
        id: deployments.id,
        ruleId: deployments.ruleId,
        version: deployments.version,
        status: deployments.status,
        activatedAt: deployments.activatedAt,
        endedAt: deployments.endedAt,
        target: targets.name,
        environment: targets.environment,
        approvalId: approvals.id,
        computedAt: sql<string | null>`coalesce(${deployments.projection}->>'computed_at', ${approvals.impact}->>'computed_at')`,
        projected: sql<Row['projected']>`(select case when p.x is null then null else jsonb_build_object(
          'estimate', p.x->'alerts_per_day'->'estimate',
          'published', p.x->'projected_alerts_per_day',
          'ci95', p.x->'alerts_per_day'->'ci95',
          'low_confidence', p.x->'low_confidence',
          'reasons', p.x->'low_confidence_reasons') end from (select ${projectionOf} as x) p)`,
        runs: sql<number>`coalesce(${detectionRunTotals.runs}, 0)`,
        alerts: observedAlerts,
      })
      .from(deployments)
      .$dynamic(),
    actor,
    where,
  ).orderBy(desc(deployments.activatedAt), deployments.id);
  return rows.map((r) => ({ ...r, activatedAt: r.activatedAt!, runs: Number(r.runs), alerts: Number(r.alerts) }));
}

/** No deployment in any exclusion: what the counts start from. */
const NO_EXCLUSIONS: Readonly<ForecastDistribution['excluded']> = { no_projection: 0, no_observation: 0, short_observation: 0 };

/** Seconds from going live to ending (null while live). */
const secondsLive = sql`extract(epoch from (${deployments.endedAt} - ${deployments.activatedAt}))`;

/**
 * How many deployments that ended after less than `minObservedSeconds` live fall in each of the
 * distribution's exclusions, counted in the database: such a deployment can never be compared, and a
 * tenant that deploys often has many (each superseded within minutes), so their rows are not read.
 * The classification is compareForecast's, in its order: no projected rate, then no run or no time
 * live, then too short; forecast-accuracy.test.ts holds the two to the same answers.
 */
async function endedTooSoonCounts(db: Db, actor: Actor, where: SQL | undefined, minObservedSeconds: number): Promise<ForecastDistribution['excluded']> {
  const rate = (path: string) => sql.raw(`jsonb_typeof(p.x->${path}) = 'number'`);
  const exclusion = sql<keyof ForecastDistribution['excluded']>`(select case
      when p.x is null or not (${rate(`'alerts_per_day'->'estimate'`)} or ${rate(`'projected_alerts_per_day'`)}) then 'no_projection'
      when coalesce(${detectionRunTotals.runs}, 0) = 0 or ${deployments.endedAt} <= ${deployments.activatedAt} then 'no_observation'
      else 'short_observation' end from (select ${projectionOf} as x) p)`;
  const rows = await wentLive(
    db
      .select({ exclusion, n: sql<number>`count(*)::int` })
      .from(deployments)
      .$dynamic(),
    actor,
    and(where, isNotNull(deployments.endedAt), sql`${secondsLive} < ${minObservedSeconds}`),
  ).groupBy(sql`1`);
  const counts = { ...NO_EXCLUSIONS };
  for (const r of rows) counts[r.exclusion] += Number(r.n);
  return counts;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** One deployment's forecast against what it observed (see the module comment for the formulas). */
function compareForecast(row: Row, now: Date): DeploymentForecast {
  const reasons: string[] = [];
  let projection: ForecastProjection | null = null;
  if (row.projected === null)
    reasons.push(
      row.approvalId === null
        ? 'no projection: no impact summary was recorded for it (a restore by rollback computes none; deployments made before projections were kept have none)'
        : 'no projection: its approval has no impact summary for this target',
    );
  else {
    const rate = num(row.projected.estimate) ?? num(row.projected.published);
    const ci = row.projected.ci95;
    if (rate === null) reasons.push('no projection: its impact summary has no projected alerts/day');
    else
      projection = {
        approval_id: row.approvalId,
        computed_at: row.computedAt,
        alerts_per_day: rate,
        ci95: ci && num(ci.low) !== null && num(ci.high) !== null ? { low: ci.low, high: ci.high } : null,
        low_confidence: typeof row.projected.low_confidence === 'boolean' ? row.projected.low_confidence : null,
        low_confidence_reasons: Array.isArray(row.projected.reasons) ? row.projected.reasons : null,
      };
    if (projection && projection.ci95 === null) reasons.push('no projected interval: the impact summary was recorded before projections carried one');
    if (projection?.low_confidence) reasons.push('the projection was flagged low_confidence when it was made');
  }

  const to = row.endedAt ?? now;
  const liveSeconds = Math.max(0, (to.getTime() - row.activatedAt.getTime()) / 1000);
  let observation: ForecastObservation | null = null;
  if (row.runs === 0) reasons.push('no observation: no detection run has evaluated it yet');
  else if (liveSeconds === 0) reasons.push('no observation: it was live for no time');
  else {
    const perDay = DAY_SECONDS / liveSeconds;
    const ci = poissonInterval(row.alerts);
    observation = {
      from: row.activatedAt.toISOString(),
      to: to.toISOString(),
      live_seconds: round(liveSeconds, 3),
      detection_runs: row.runs,
      alerts: row.alerts,
      alerts_per_day: round(row.alerts * perDay),
      ci95: { low: round(ci.low * perDay), high: round(ci.high * perDay) },
      short_observation: liveSeconds < MIN_OBSERVED_DAYS * DAY_SECONDS,
    };
    if (observation.short_observation)
      reasons.push(`short observation: live ${round(liveSeconds / 3_600, 2)} h, under ${MIN_OBSERVED_DAYS} day: daily seasonality is not observed`);
  }

  let errorRatio: number | null = null;
  let logError: number | null = null;
  let within: boolean | null = null;
  if (projection && observation) {
    const observed = observation.alerts_per_day;
    const projected = projection.alerts_per_day;
    if (projected > 0) errorRatio = round(observed / projected);
    else reasons.push(observed > 0 ? 'no error ratio: it projected 0 alerts/day and observed some' : 'no error ratio: it projected and observed 0 alerts/day');
    if (projected > 0 && observed > 0) logError = round(Math.log(observed / projected));
    else if (projected > 0) reasons.push('no log error: it observed 0 alerts');
    if (projection.ci95) within = observed >= projection.ci95.low && observed <= projection.ci95.high;
  }
  return {
    deployment_id: row.id,
    rule_id: row.ruleId,
    version: row.version,
    target: row.target,
    environment: row.environment,
    status: row.status,
    activated_at: row.activatedAt.toISOString(),
    ended_at: row.endedAt?.toISOString() ?? null,
    projection,
    observation,
    error_ratio: errorRatio,
    log_error: logError,
    within_interval: within,
    reasons,
  };
}

/**
 * (a) Every deployment of the rule that went live (on `target` when given; of `deploymentIds` when given), the latest first, with
 * its forecast against what it observed. Only the actor's tenant, only targets in its environments;
 * an unknown rule or target has none (the endpoint decides whether that is a 404).
 */
export async function deploymentForecasts(
  deps: Pick<DomainDeps, 'database' | 'now'>,
  actor: Actor,
  input: { ruleId: string; target?: string | undefined; /** Only these (none when empty). */ deploymentIds?: readonly string[] },
): Promise<DeploymentForecast[]> {
  const now = (deps.now ?? (() => new Date()))();
  if (input.deploymentIds?.length === 0) return [];
  const rows = await forecastRows(
    deps.database.db,
    actor,
    and(
      eq(deployments.ruleId, input.ruleId.toLowerCase()),
      input.target !== undefined ? eq(targets.name, input.target) : undefined,
      input.deploymentIds !== undefined ? inArray(deployments.id, [...input.deploymentIds]) : undefined,
    ),
  );
  return rows.map((r) => compareForecast(r, now));
}

/** The q-quantile (0–1) of sorted values, interpolated linearly between the closest ranks (as percentile_cont); null for none. */
export function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** The distribution of forecasts (see ForecastDistribution) over deployments already compared. */
export function summarizeForecasts(
  forecasts: readonly DeploymentForecast[],
  window: { from: Date; to: Date },
  minObservedDays = MIN_OBSERVED_DAYS,
  /** Deployments of the window already classified as excluded, without their forecasts. */
  alsoExcluded: ForecastDistribution['excluded'] = NO_EXCLUSIONS,
): ForecastDistribution {
  const excluded = { ...alsoExcluded };
  const alsoExcludedCount = Object.values(alsoExcluded).reduce((a, b) => a + b, 0);
  const compared: DeploymentForecast[] = [];
  for (const f of forecasts) {
    if (!f.projection) excluded.no_projection++;
    else if (!f.observation) excluded.no_observation++;
    else if (f.observation.live_seconds < minObservedDays * DAY_SECONDS) excluded.short_observation++;
    else compared.push(f);
  }
  const absLog = compared
    .map((f) => f.log_error)
    .filter((v): v is number => v !== null)
    .map(Math.abs)
    .sort((a, b) => a - b);
  const ratios = compared
    .map((f) => f.error_ratio)
    .filter((v): v is number => v !== null)
    .sort((a, b) => a - b);
  const judged = compared.filter((f) => f.within_interval !== null);
  const within = judged.filter((f) => f.within_interval).length;
  const histogram: HistogramBucket[] = [
    ...ERROR_RATIO_BUCKETS.map((b) => ({
      label: b.label,
      from: b.from,
      to: b.to,
      count: ratios.filter((r) => r >= b.from && (b.to === null || r < b.to)).length,
    })),
    { label: 'projected 0, observed some', from: null, to: null, count: compared.filter((f) => f.projection!.alerts_per_day === 0 && f.observation!.alerts > 0).length },
    { label: 'projected 0, observed 0', from: null, to: null, count: compared.filter((f) => f.projection!.alerts_per_day === 0 && f.observation!.alerts === 0).length },
  ];
  const reasons: string[] = [];
  if (forecasts.length + alsoExcludedCount === 0) reasons.push('no deployment was live in the window');
  else if (compared.length === 0)
    reasons.push(
      `no deployment has both a projection and ${minObservedDays > 0 ? `at least ${minObservedDays} day(s) of observation` : 'an observation'} (${excluded.no_projection} without projection, ${excluded.no_observation} without observation, ${excluded.short_observation} observed too briefly)`,
    );
  else {
    if (absLog.length === 0) reasons.push('no log error: every compared forecast has a zero projected or observed rate');
    if (judged.length === 0) reasons.push('no interval check: no compared projection carries an interval');
  }
  const r4 = (v: number | null) => (v === null ? null : round(v));
  return {
    window: { from: window.from.toISOString(), to: window.to.toISOString() },
    min_observed_days: minObservedDays,
    deployments: forecasts.length + alsoExcludedCount,
    compared: compared.length,
    excluded,
    abs_log_error: { count: absLog.length, median: r4(quantile(absLog, 0.5)), p90: r4(quantile(absLog, 0.9)) },
    error_ratio: { count: ratios.length, median: r4(quantile(ratios, 0.5)) },
    within_interval: { count: judged.length, within, share: judged.length ? round(within / judged.length) : null },
    histogram,
    reasons,
  };
}

/**
 * (b) The distribution of forecast accuracy over the tenant's deployments live at some point in
 * [from, to) (activated before `to`, not ended before `from`), on targets in the actor's
 * environments. Each is observed over its whole time live. Deployments live less than
 * `minObservedDays` (default MIN_OBSERVED_DAYS) are counted in `excluded.short_observation`, not
 * in the figures; those that ended that soon are only counted (endedTooSoonCounts).
 */
export async function forecastAccuracyDistribution(
  deps: Pick<DomainDeps, 'database' | 'now'>,
  actor: Actor,
  input: { from: Date; to: Date; minObservedDays?: number },
): Promise<ForecastDistribution> {
  const now = (deps.now ?? (() => new Date()))();
  const minObservedDays = input.minObservedDays ?? MIN_OBSERVED_DAYS;
  const minObservedSeconds = minObservedDays * DAY_SECONDS;
  const liveInWindow = and(lt(deployments.activatedAt, input.to), or(isNull(deployments.endedAt), gte(deployments.endedAt, input.from)));
  const [rows, endedTooSoon] = await Promise.all([
    forecastRows(deps.database.db, actor, and(liveInWindow, or(isNull(deployments.endedAt), sql`${secondsLive} >= ${minObservedSeconds}`))),
    endedTooSoonCounts(deps.database.db, actor, liveInWindow, minObservedSeconds),
  ]);
  return summarizeForecasts(
    rows.map((r) => compareForecast(r, now)),
    input,
    minObservedDays,
    endedTooSoon,
  );
}
