import { and, desc, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { deployments, ruleVersions, targets, type TargetCostModel } from '../../db/schema';
import { LIVE_DEPLOYMENT_STATUSES, type NoiseBudgetPolicy } from '../statuses';
import { ruleTextDiff } from '../../sigma';
import type { SiemAdapters } from '../../siem/adapters';
import type { DayCount } from '../../siem/adapter';
import { compileRuleForTarget, targetAdapter } from '../rules/rule-compilation';
import { projectAlertRate, type AlertRateProjection, type AlertsPerDay } from '../runs/alert-rate-projection';

/** How much of a target's recent data a projection replays. */
export const PROJECTION_LOOKBACK_DAYS = 7;

export type CostPerDay = {
  currency: string;
  scanning: number;
  triage: number;
  total: number;
  /** total with the alerts/day at the ends of their 95% interval; null when there is no rate. */
  total_ci95: { low: number; high: number } | null;
};

/**
 * A target's impact. The projection's sample, 95% interval and `low_confidence` flag
 * (AlertRateProjection) sit beside the figures that existed before them.
 */
export type TargetImpact = AlertRateProjection & {
  target: string;
  kind: string;
  environment: string;
  lookback_days: number;
  events_scanned: number;
  bytes_scanned: number;
  projected_alerts_per_day: number;
  cost_per_day: CostPerDay;
  /** The replay's matches per UTC day of the window, this version (the first and last days are partial). */
  per_day: DailyAlerts[];
  current: { deployment_id: string; version: number; projected_alerts_per_day: number; alerts_per_day: AlertsPerDay | null; per_day: DailyAlerts[] } | null;
  /** Projected alerts/day of this version minus the version deployed now (all of it when none is). */
  noise_delta_per_day: number;
  over_budget: boolean;
  /** Unified diff from the version deployed on this target now (from nothing when none is). */
  diff: string;
};

/**
 * The impact of a change. `alerts_per_day` is the interval on all targets' alerts together (their
 * counts over the same window add up to one Poisson count); `low_confidence` when any target's is,
 * with each reason prefixed by its target.
 */
export type ImpactSummary = {
  alerts_per_day: AlertsPerDay | null;
  low_confidence: boolean;
  low_confidence_reasons: string[];
  rule_id: string;
  version: number;
  noise_budget: NoiseBudgetPolicy | null;
  projected_alerts_per_day: number;
  over_budget: boolean;
  targets: TargetImpact[];
  computed_at: string;
};

/** Alerts a replay matched on one UTC day (YYYY-MM-DD) of its window. */
export type DailyAlerts = { day: string; alerts: number };

/**
 * One entry per UTC day the window touches, in order: an adapter that lists only the days with
 * events (the local store does) leaves the others at zero.
 */
export function alertsByDay(window: { from: Date; to: Date }, counted: readonly DayCount[]): DailyAlerts[] {
  const matched = new Map<string, number>();
  for (const d of counted) matched.set(d.day, (matched.get(d.day) ?? 0) + d.matched);
  const days: DailyAlerts[] = [];
  const last = window.to.toISOString().slice(0, 10);
  for (let t = Date.UTC(window.from.getUTCFullYear(), window.from.getUTCMonth(), window.from.getUTCDate()); ; t += 86_400_000) {
    const day = new Date(t).toISOString().slice(0, 10);
    if (day > last) break;
    days.push({ day, alerts: matched.get(day) ?? 0 });
  }
  return days;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * scanning = bytes scanned per day / 1e9 × price per GB; triage = alerts per day × minutes per
 * alert / 60 × cost per analyst hour. Both from the target's own cost model. The interval on the
 * total takes the alerts/day at the ends of their 95% interval (scanning is measured, it does not move).
 */
export function costPerDay(model: TargetCostModel, bytesPerDay: number, alertsPerDay: number, interval: AlertsPerDay | null = null): CostPerDay {
  const scanning = (bytesPerDay / 1e9) * model.price_per_gb_scanned;
  const triageOf = (perDay: number) => ((perDay * model.triage_minutes_per_alert) / 60) * model.cost_per_analyst_hour;
  const triage = triageOf(alertsPerDay);
  return {
    currency: model.currency,
    scanning: round(scanning, 4),
    triage: round(triage),
    total: round(scanning + triage),
    total_ci95: interval ? { low: round(scanning + triageOf(interval.ci95.low)), high: round(scanning + triageOf(interval.ci95.high)) } : null,
  };
}

/**
 * The impact of putting a rule version on targets: a replay of each target's last
 * PROJECTION_LOOKBACK_DAYS days projects alerts per day, its cost, and the change against the
 * version deployed there now; the diff shows what changes.
 */
export async function computeImpactSummary(
  deps: { db: Db; siem: SiemAdapters },
  input: { tenantId: string; ruleId: string; version: number; targetIds: string[]; noiseBudget: NoiseBudgetPolicy | null; now: Date },
): Promise<ImpactSummary> {
  const { db, siem } = deps;
  const [candidate] = await db
    .select()
    .from(ruleVersions)
    .where(and(eq(ruleVersions.tenantId, input.tenantId), eq(ruleVersions.ruleId, input.ruleId), eq(ruleVersions.version, input.version)));
  if (!candidate) throw new Error(`No version ${input.version} of rule ${input.ruleId}`);
  const window = { from: new Date(input.now.getTime() - PROJECTION_LOOKBACK_DAYS * 86_400_000), to: input.now };
  const results: TargetImpact[] = [];
  let matchedTotal = 0;
  for (const targetId of input.targetIds) {
    const [target] = await db.select().from(targets).where(eq(targets.id, targetId));
    if (!target) throw new Error(`No target ${targetId}`);
    const adapter = targetAdapter(siem, target);
    const project = async (content: string, version: number) => {
      const compiled = compileRuleForTarget(siem, content, input.ruleId, version, target);
      return adapter.count(input.tenantId, target.id, compiled, window);
    };
    // The replay (the local store) and the live-version lookup (the database) do not depend on
    // each other: overlapping them takes one of the two off the path of every deployment.
    const liveVersion = db
      .select({ id: deployments.id, version: deployments.version, content: ruleVersions.content })
      .from(deployments)
      .innerJoin(
        ruleVersions,
        and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)),
      )
      .where(
        and(
          eq(deployments.tenantId, input.tenantId),
          eq(deployments.ruleId, input.ruleId),
          eq(deployments.targetId, targetId),
          inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES),
        ),
      )
      .orderBy(desc(deployments.activatedAt))
      .limit(1)
      .then((rows) => rows[0]);
    const [counted, live] = await Promise.all([project(candidate.content, candidate.version), liveVersion]);
    const perDay = counted.matched / PROJECTION_LOOKBACK_DAYS;
    const daysWithEvents = counted.perDay.filter((d) => d.scanned > 0).length;
    const projection = projectAlertRate({ events: counted.scanned, alerts: counted.matched, from: window.from, to: window.to, daysWithEvents });
    matchedTotal += counted.matched;
    const liveCount = live ? await project(live.content, live.version) : null;
    const current =
      live && liveCount
        ? {
            deployment_id: live.id,
            version: live.version,
            projected_alerts_per_day: round(liveCount.matched / PROJECTION_LOOKBACK_DAYS),
            alerts_per_day: projectAlertRate({ events: liveCount.scanned, alerts: liveCount.matched, from: window.from, to: window.to, daysWithEvents }).alerts_per_day,
            per_day: alertsByDay(window, liveCount.perDay),
          }
        : null;
    results.push({
      ...projection,
      target: target.name,
      kind: target.kind,
      environment: target.environment,
      lookback_days: PROJECTION_LOOKBACK_DAYS,
      events_scanned: counted.scanned,
      bytes_scanned: counted.bytesScanned,
      projected_alerts_per_day: round(perDay),
      per_day: alertsByDay(window, counted.perDay),
      cost_per_day: costPerDay(target.costModel, counted.bytesScanned / PROJECTION_LOOKBACK_DAYS, perDay, projection.alerts_per_day),
      current,
      noise_delta_per_day: round(perDay - (current?.projected_alerts_per_day ?? 0)),
      over_budget: input.noiseBudget !== null && perDay > input.noiseBudget.max_alerts_per_day,
      diff: ruleTextDiff(input.ruleId, live ? { version: live.version, content: live.content } : null, { version: candidate.version, content: candidate.content }),
    });
  }
  const total = results.reduce((n, t) => n + t.projected_alerts_per_day, 0);
  const events = results.reduce((n, t) => n + t.events_scanned, 0);
  return {
    alerts_per_day: results.length ? projectAlertRate({ events, alerts: matchedTotal, from: window.from, to: window.to, daysWithEvents: null }).alerts_per_day : null,
    low_confidence: results.some((t) => t.low_confidence),
    low_confidence_reasons: results.flatMap((t) => t.low_confidence_reasons.map((r) => `${t.target}: ${r}`)),
    rule_id: input.ruleId,
    version: input.version,
    noise_budget: input.noiseBudget,
    projected_alerts_per_day: round(total),
    over_budget: results.some((t) => t.over_budget),
    targets: results,
    computed_at: input.now.toISOString(),
  };
}
