import type { FieldPresenceMemo } from './field-presence-memo';
import { and, desc, eq, gte, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { deploymentForecasts, type DeploymentForecast } from './forecast-accuracy';
import { alerts, deployments, detectionRuns, ruleVersions, rules, targets } from '../../db/schema';
import { MissingCapability } from '../../siem/adapter';
import { openDriftOf } from '../drift/drift-queries';
import { siemStatistics, type SiemStatistics } from './siem-statistics';
import { driftView, type DriftView } from '../drift/drift-view';
import { adapterFor, TargetMisconfigured, UnsupportedTargetKind } from '../../siem/adapters';
import type { DomainDeps } from '../deps';
import { notFound } from '../errors';
import { LIVE_DEPLOYMENT_STATUSES } from '../statuses';
import type { Actor } from '../tenants/actor';
import { inActorEnvironments } from '../tenants/scope';
import { gradeLogsource, ruleNeeds, unknownQuality, type LogsourceQuality } from './data-quality';
import { errorRateOf, type ErrorRate } from './error-rate';
import { readHealthThresholds, type HealthThresholds } from './health-settings';
import { worstGrade, type HealthStatus } from './health-status';
import { latencyOf, type Latency } from './latency';
import { noiseBudgetOf, type NoiseBudget } from './noise-budget';
import { snrOf, type Snr } from './snr';
import { changeOf, type Change } from './trend';

const DAY_MS = 86_400_000;

export type HealthWindow = { from: Date; to: Date };

export type RuleHealthQuery = { ruleId: string; target: string | undefined; windowMs: number };

export type DeploymentInScope = {
  id: string;
  version: number;
  status: string;
  target: string;
  targetId: string;
  targetKind: string;
  /** The target's stored connection settings (credentials sealed), for reaching it. */
  targetConnection: Record<string, unknown>;
  maxAlertsPerDay: number | null;
  activatedAt: Date | null;
  endedAt: Date | null;
};

export type RuleHealth = {
  ruleId: string;
  title: string;
  target: string | null;
  window: HealthWindow;
  thresholds: HealthThresholds;
  status: HealthStatus;
  reasons: string[];
  snr: Snr;
  latency: Latency;
  errorRate: ErrorRate;
  noiseBudget: NoiseBudget;
  dataQuality: { status: HealthStatus; reason: string | null; logsources: LogsourceQuality[] };
  trend: { previousWindow: HealthWindow; alerts: Change; snr: Change; precision: Change; errorRate: Change; latencyP95Ms: Change };
  /** Live deployments (active, or demoted to shadow) within the scope. */
  deployments: DeploymentInScope[];
  /** Each deployment live in the window (or live now): the alerts/day its change projected against what detection observed. */
  forecasts: DeploymentForecast[];
  /** Open drift of the rule's objects on the targets in scope (domain/drift/). */
  drift: Array<DriftView & { target: string }>;
  /** What each remote SIEM the rule is live on reports of its alerts and runs. */
  siem: SiemStatistics[];
};

/** Figures of one window, the same for the window asked and the one before it. */
type WindowFigures = { alerts: number; suppressed: number; snr: Snr; latency: Latency; runs: number; failedRuns: number };

const n = (v: unknown) => Number(v ?? 0);
const orNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** The alert figures of a window, as aggregates filtered to it: both windows are read by one scan. */
function alertFiguresIn(w: HealthWindow) {
  const inW = sql`${alerts.createdAt} >= ${w.from} and ${alerts.createdAt} < ${w.to}`;
  const latencyMs = sql`round(extract(epoch from (${alerts.createdAt} - ${alerts.eventTime})) * 1000)::bigint`;
  return {
    total: sql<number>`(count(*) filter (where ${inW}))::int`,
    suppressed: sql<number>`(count(*) filter (where ${inW} and ${alerts.status} = 'suppressed'))::int`,
    tp: sql<number>`(count(*) filter (where ${inW} and ${alerts.disposition} = 'true_positive'))::int`,
    fp: sql<number>`(count(*) filter (where ${inW} and ${alerts.disposition} = 'false_positive'))::int`,
    benign: sql<number>`(count(*) filter (where ${inW} and ${alerts.disposition} = 'benign'))::int`,
    duplicate: sql<number>`(count(*) filter (where ${inW} and ${alerts.disposition} = 'duplicate'))::int`,
    none: sql<number>`(count(*) filter (where ${inW} and ${alerts.disposition} is null))::int`,
    p50: sql<string | null>`percentile_disc(0.5) within group (order by ${latencyMs}) filter (where ${inW})`,
    p95: sql<string | null>`percentile_disc(0.95) within group (order by ${latencyMs}) filter (where ${inW})`,
    max: sql<string | null>`max(${latencyMs}) filter (where ${inW})`,
  };
}

/**
 * The figures of the window asked and of the one before it (adjacent, the earlier first): one
 * query over the rule's alerts and one over its detection runs, each spanning both windows.
 */
async function windowFigures(
  db: Db,
  tenantId: string,
  ruleId: string,
  targetIds: readonly string[],
  deploymentIds: readonly string[],
  [previous, current]: readonly [HealthWindow, HealthWindow],
): Promise<[WindowFigures, WindowFigures]> {
  const [a] = targetIds.length
    ? await db
        .select({ previous: alertFiguresIn(previous), current: alertFiguresIn(current) })
        .from(alerts)
        .where(
          and(
            eq(alerts.tenantId, tenantId),
            eq(alerts.ruleId, ruleId),
            inArray(alerts.targetId, [...targetIds]),
            gte(alerts.createdAt, previous.from),
            lt(alerts.createdAt, current.to),
          ),
        )
    : [undefined];
  const runsIn = (w: HealthWindow) => sql`${detectionRuns.startedAt} >= ${w.from} and ${detectionRuns.startedAt} < ${w.to}`;
  const [r] = deploymentIds.length
    ? await db
        .select({
          previousRuns: sql<number>`(count(*) filter (where ${runsIn(previous)}))::int`,
          previousFailed: sql<number>`(count(*) filter (where ${runsIn(previous)} and ${detectionRuns.error} is not null))::int`,
          currentRuns: sql<number>`(count(*) filter (where ${runsIn(current)}))::int`,
          currentFailed: sql<number>`(count(*) filter (where ${runsIn(current)} and ${detectionRuns.error} is not null))::int`,
        })
        .from(detectionRuns)
        .where(runsOf(tenantId, deploymentIds, { from: previous.from, to: current.to }))
    : [undefined];
  const figures = (f: { [K in keyof ReturnType<typeof alertFiguresIn>]: unknown } | undefined, runs: unknown, failed: unknown): WindowFigures => {
    const total = n(f?.total);
    return {
      alerts: total,
      suppressed: n(f?.suppressed),
      snr: snrOf({ truePositives: n(f?.tp), falsePositives: n(f?.fp), benign: n(f?.benign), duplicates: n(f?.duplicate), undispositioned: n(f?.none) }),
      latency: latencyOf(total, orNull(f?.p50), orNull(f?.p95), orNull(f?.max)),
      runs: n(runs),
      failedRuns: n(failed),
    };
  };
  return [figures(a?.previous, r?.previousRuns, r?.previousFailed), figures(a?.current, r?.currentRuns, r?.currentFailed)];
}

/** The detection runs of the deployments started in the window. */
function runsOf(tenantId: string, deploymentIds: readonly string[], w: HealthWindow) {
  return and(
    eq(detectionRuns.tenantId, tenantId),
    inArray(detectionRuns.deploymentId, [...deploymentIds]),
    gte(detectionRuns.startedAt, w.from),
    lt(detectionRuns.startedAt, w.to),
  );
}

/** The latest failed detection run of the rule's deployments in the window: what the error rate shows. */
async function lastErrorIn(db: Db, tenantId: string, deploymentIds: readonly string[], w: HealthWindow): Promise<ErrorRate['lastError']> {
  if (deploymentIds.length === 0) return null;
  const [last] = await db
    .select({ message: detectionRuns.error, at: detectionRuns.startedAt, deploymentId: detectionRuns.deploymentId })
    .from(detectionRuns)
    .where(and(runsOf(tenantId, deploymentIds, w), isNotNull(detectionRuns.error)))
    .orderBy(desc(detectionRuns.startedAt))
    .limit(1);
  return last ? { message: last.message!, at: last.at, deploymentId: last.deploymentId } : null;
}

/** The tenant's rule (404 when it has none), and the target the query names (404 when unknown or outside the token's environments). */
async function resolve(db: Db, actor: Actor, q: RuleHealthQuery): Promise<{ ruleId: string; title: string }> {
  const ruleId = q.ruleId.toLowerCase();
  const [rule] = await db
    .select({ title: rules.title })
    .from(rules)
    .where(and(eq(rules.tenantId, actor.tenantId), eq(rules.ruleId, ruleId)));
  if (!rule) throw notFound(`No rule ${ruleId} in this tenant`);
  if (q.target !== undefined) {
    const [t] = await db
      .select({ id: targets.id })
      .from(targets)
      .where(and(eq(targets.tenantId, actor.tenantId), eq(targets.name, q.target), inActorEnvironments(actor, targets.environment)));
    if (!t) throw notFound(`No target ${q.target} in this tenant`);
  }
  return { ruleId, title: rule.title };
}

/**
 * A rule's health over a window (default 30 days) ending now: SNR, detection latency, error rate,
 * noise-budget consumption, data quality of its live deployments' targets, the trend against the
 * window before, and its live deployments. Only targets within the token's environments (and the
 * one `target` names) count. Formulas: README "Rule health"; choices: docs/decisions/0054.
 */
export async function ruleHealth(deps: DomainDeps, actor: Actor, q: RuleHealthQuery): Promise<RuleHealth> {
  const { db } = deps.database;
  const now = (deps.now ?? (() => new Date()))();
  const { ruleId, title } = await resolve(db, actor, q);
  const thresholds = await readHealthThresholds(db, actor.tenantId);
  const window = { from: new Date(now.getTime() - q.windowMs), to: now };
  const previousWindow = { from: new Date(now.getTime() - 2 * q.windowMs), to: window.from };

  // The targets in scope, and the deployments of the rule on them that can hold a run or an alert of
  // either window: live or in progress (not ended), or ended since the day before the previous window
  // began (a run in flight when its deployment ended records a little after). A rule redeployed often
  // has a long tail of older ones, none of which a figure here reads.
  const endedBound = new Date(previousWindow.from.getTime() - DAY_MS);
  const scopedTargets = await db
    .select({ id: targets.id, name: targets.name, kind: targets.kind })
    .from(targets)
    .where(and(eq(targets.tenantId, actor.tenantId), inActorEnvironments(actor, targets.environment), q.target !== undefined ? eq(targets.name, q.target) : undefined));
  const targetIds = scopedTargets.map((t) => t.id);
  const all: DeploymentInScope[] = targetIds.length
    ? (
        await db
          .select({ d: deployments, target: targets.name, targetKind: targets.kind, targetConnection: targets.connection })
          .from(deployments)
          .innerJoin(targets, eq(targets.id, deployments.targetId))
          .where(
            and(
              eq(deployments.tenantId, actor.tenantId),
              eq(deployments.ruleId, ruleId),
              inArray(deployments.targetId, targetIds),
              or(isNull(deployments.endedAt), gte(deployments.endedAt, endedBound)),
            ),
          )
          .orderBy(deployments.createdAt)
      ).map(({ d, target, targetKind, targetConnection }) => ({
        id: d.id,
        version: d.version,
        status: d.status,
        target,
        targetId: d.targetId,
        targetKind,
        targetConnection,
        maxAlertsPerDay: d.noiseBudget?.max_alerts_per_day ?? null,
        activatedAt: d.activatedAt,
        endedAt: d.endedAt,
      }))
    : [];
  const deploymentIds = all.map((d) => d.id);
  // Live at some time of the window: activated before its end, not ended before its start.
  const inWindow = all.filter((d) => d.activatedAt !== null && d.activatedAt < window.to && (d.endedAt === null || d.endedAt >= window.from));
  const live = all.filter((d) => (LIVE_DEPLOYMENT_STATUSES as readonly string[]).includes(d.status));

  const [[previous, current], lastError] = await Promise.all([
    windowFigures(db, actor.tenantId, ruleId, targetIds, deploymentIds, [previousWindow, window]),
    lastErrorIn(db, actor.tenantId, deploymentIds, window),
  ]);
  const errorRate = errorRateOf(current.runs, current.failedRuns, lastError, thresholds);

  const days = deploymentIds.length
    ? await db
        .select({
          deploymentId: alerts.deploymentId,
          day: sql<string>`to_char(${alerts.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`,
          alerts: sql<number>`count(*)::int`,
          suppressed: sql<number>`(count(*) filter (where ${alerts.status} = 'suppressed'))::int`,
        })
        .from(alerts)
        .where(and(eq(alerts.tenantId, actor.tenantId), inArray(alerts.deploymentId, deploymentIds), gte(alerts.createdAt, window.from), lt(alerts.createdAt, window.to)))
        .groupBy(alerts.deploymentId, sql`2`)
    : [];
  const budgeted = all.filter((d) => inWindow.includes(d) || days.some((x) => x.deploymentId === d.id));
  const noiseBudget = noiseBudgetOf(
    days.map((d) => ({ deploymentId: d.deploymentId, day: d.day, alerts: n(d.alerts), suppressed: n(d.suppressed) })),
    budgeted.map((d) => ({ deploymentId: d.id, target: d.target, version: d.version, maxAlertsPerDay: d.maxAlertsPerDay })),
    now.toISOString().slice(0, 10),
    q.windowMs / DAY_MS,
  );

  const forecastIds = [...new Set([...inWindow, ...live].map((d) => d.id))];
  const [dataQuality, forecasts, openDrift, siem] = await Promise.all([
    dataQualityOf({ db, siem: deps.siem }, actor.tenantId, ruleId, live, thresholds, now),
    deploymentForecasts(deps, actor, { ruleId, target: q.target, deploymentIds: forecastIds }),
    openDriftOf(db, { tenantId: actor.tenantId, ruleId, targetIds }),
    siemStatistics(deps.siem, actor.tenantId, ruleId, live, window),
  ]);
  const targetNames = new Map(scopedTargets.map((t) => [t.id, t.name]));
  const drift = openDrift.map((r) => ({ ...driftView(r), target: targetNames.get(r.targetId) ?? r.targetId }));

  const reasons: string[] = [];
  let status: HealthStatus;
  if (inWindow.length === 0 && current.alerts === 0 && current.runs === 0) {
    status = 'no_data';
    reasons.push(`rule '${ruleId}' has no deployment in the window${q.target !== undefined ? ` on target ${q.target}` : ''}`);
  } else {
    status = worstGrade([errorRate.status, dataQuality.status]) ?? 'unknown';
    if (errorRate.reason && errorRate.status !== 'ok') reasons.push(errorRate.reason);
    for (const l of dataQuality.logsources) if (l.reason && l.status !== 'ok') reasons.push(l.reason);
    if (status === 'unknown' && reasons.length === 0) reasons.push('no figure of the window could be graded');
  }
  // What runs on a target that drifted is not what was reviewed: never `ok` while it lasts.
  for (const d of drift) reasons.push(`drift on ${d.target}: ${d.detail}`);
  if (drift.length > 0 && (status === 'ok' || status === 'unknown')) status = 'degraded';

  return {
    ruleId,
    title,
    target: q.target ?? null,
    window,
    thresholds,
    status,
    reasons,
    snr: current.snr,
    latency: current.latency,
    errorRate,
    noiseBudget,
    dataQuality,
    trend: {
      previousWindow,
      alerts: changeOf(current.alerts, previous.alerts),
      snr: changeOf(current.snr.ratio, previous.snr.ratio),
      precision: changeOf(current.snr.precision, previous.snr.precision),
      errorRate: changeOf(errorRate.rate, errorRateOf(previous.runs, previous.failedRuns, null, thresholds).rate),
      latencyP95Ms: changeOf(current.latency.p95Ms, previous.latency.p95Ms),
    },
    deployments: live,
    forecasts,
    drift,
    siem,
  };
}

/**
 * Data quality for each live deployment's target and rule version: the fields its detection reads,
 * on the target's events of its logsource of the last `freshness_hours`. Targets whose adapter
 * cannot tell are `unknown`, with the reason.
 */
export async function dataQualityOf(
  deps: { db: Db; siem: DomainDeps['siem']; presence?: FieldPresenceMemo },
  tenantId: string,
  ruleId: string,
  live: readonly Pick<DeploymentInScope, 'version' | 'target' | 'targetId' | 'targetKind' | 'targetConnection'>[],
  thresholds: HealthThresholds,
  now: Date,
): Promise<RuleHealth['dataQuality']> {
  if (live.length === 0) return { status: 'no_data', reason: `rule '${ruleId}' has no live deployment to check the data of`, logsources: [] };
  const versions = [...new Set(live.map((d) => d.version))];
  const texts = await deps.db
    .select({ version: ruleVersions.version, content: ruleVersions.content })
    .from(ruleVersions)
    .where(and(eq(ruleVersions.tenantId, tenantId), eq(ruleVersions.ruleId, ruleId), inArray(ruleVersions.version, versions)));
  const since = new Date(now.getTime() - thresholds.freshness_hours * 3_600_000);
  const logsources: LogsourceQuality[] = [];
  for (const d of live) {
    const content = texts.find((t) => t.version === d.version)?.content;
    const needs = content === undefined ? undefined : ruleNeeds(content);
    if (!needs) {
      logsources.push(unknownQuality(d.target, {}, [], `version ${d.version} of rule ${ruleId} does not parse any more`));
      continue;
    }
    let adapter;
    try {
      adapter = adapterFor(deps.siem, { id: d.targetId, name: d.target, kind: d.targetKind, connection: d.targetConnection });
    } catch (err) {
      if (!(err instanceof UnsupportedTargetKind) && !(err instanceof TargetMisconfigured)) throw err;
      logsources.push(unknownQuality(d.target, needs.logsource, needs.fields, err.message));
      continue;
    }
    if (!adapter.capabilities().fieldPresence) {
      logsources.push(unknownQuality(d.target, needs.logsource, needs.fields, `${d.targetKind} targets cannot tell which fields their events carry`));
      continue;
    }
    try {
      // Local targets store events under the Sigma field names (no field mapping to apply).
      const request = { tenantId, targetId: d.targetId, logsource: needs.logsource, fields: needs.fields, since };
      const found = await (deps.presence ? deps.presence.fieldPresence(adapter, request) : adapter.fieldPresence(request));
      logsources.push(gradeLogsource(d.target, needs, found, thresholds));
    } catch (err) {
      if (!(err instanceof MissingCapability)) throw err;
      logsources.push(unknownQuality(d.target, needs.logsource, needs.fields, err.message));
    }
  }
  const status = worstGrade(logsources.map((l) => l.status)) ?? 'unknown';
  const worst = logsources.find((l) => l.status === status && l.reason !== null);
  return { status, reason: worst?.reason ?? null, logsources };
}
