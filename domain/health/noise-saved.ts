import { and, desc, eq, gte, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { detectionRunTotals, detectionRuns, replays } from '../../db/schema';
import { round } from '../runs/rounding';
import type { DeploymentSpan, Replacement } from './deployment-history';

const DAY_MS = 86_400_000;

/**
 * Noise saved: the alerts that changes of rules (new versions, rollbacks, removals) and noise
 * budgets kept from analysts, against what the replaced versions would have raised. The formulas
 * are the README's (ROI); the queries aggregate detection runs in the database, never alert rows.
 */

/** What a deployment's runs produced: alerts opened, alerts suppressed over budget, matches while demoted (shadow). */
export type RunVolume = { raised: number; suppressed: number; shadowMatches: number };

/** Everything a deployment matched: each match is an alert raised, one suppressed, or one a demoted deployment did not raise. */
export const volumeOf = (v: RunVolume | undefined): number => (v ? v.raised + v.suppressed + v.shadowMatches : 0);

const volumeColumns = {
  deploymentId: detectionRuns.deploymentId,
  raised: sql<number>`coalesce(sum(${detectionRuns.alertsRaised}), 0)::float8`,
  suppressed: sql<number>`coalesce(sum(${detectionRuns.alertsSuppressed}), 0)::float8`,
  shadowMatches: sql<number>`coalesce(sum(${detectionRuns.matches}) filter (where ${detectionRuns.mode} = 'shadow'), 0)::float8`,
};

const byDeployment = (rows: Array<{ deploymentId: string } & RunVolume>) =>
  new Map(rows.map((r) => [r.deploymentId, { raised: Number(r.raised), suppressed: Number(r.suppressed), shadowMatches: Number(r.shadowMatches) }]));

/** The volume of every deployment of the tenant over the runs started in [from, to) (an index-only scan of `detection_runs_tenant_started_volumes`). */
export async function windowVolumes(db: Db, tenantId: string, from: Date, to: Date): Promise<Map<string, RunVolume>> {
  const rows = await db
    .select(volumeColumns)
    .from(detectionRuns)
    .where(and(eq(detectionRuns.tenantId, tenantId), gte(detectionRuns.startedAt, from), lt(detectionRuns.startedAt, to)))
    .groupBy(detectionRuns.deploymentId);
  return byDeployment(rows);
}

/** The volume of each given deployment over all its runs (their sums, kept per deployment as runs are recorded). */
export async function lifetimeVolumes(db: Db, tenantId: string, deploymentIds: readonly string[]): Promise<Map<string, RunVolume>> {
  if (deploymentIds.length === 0) return new Map();
  const rows = await db
    .select({
      deploymentId: detectionRunTotals.deploymentId,
      raised: detectionRunTotals.alertsRaised,
      suppressed: detectionRunTotals.alertsSuppressed,
      shadowMatches: detectionRunTotals.shadowMatches,
    })
    .from(detectionRunTotals)
    .where(and(eq(detectionRunTotals.tenantId, tenantId), inArray(detectionRunTotals.deploymentId, [...deploymentIds])));
  return byDeployment(rows);
}

/** The newest completed replay of a stored rule version on a target: its alerts over the part of its window it processed. */
export type ReplayRate = { id: string; alerts: number; from: Date; to: Date };
const replayKey = (ruleId: string, version: number, targetId: string) => `${ruleId}\u0000${version}\u0000${targetId}`;

export async function newestReplays(db: Db, tenantId: string, ruleIds: readonly string[]): Promise<Map<string, ReplayRate>> {
  if (ruleIds.length === 0) return new Map();
  const rows = await db
    .selectDistinctOn([replays.ruleId, replays.version, replays.targetId], {
      id: replays.id,
      ruleId: replays.ruleId,
      version: replays.version,
      targetId: replays.targetId,
      alerts: sql<number | null>`(${replays.result}->'alerts'->>'total')::float8`,
      from: sql<string | null>`${replays.result}->'window_processed'->>'from'`,
      to: sql<string | null>`${replays.result}->'window_processed'->>'to'`,
    })
    .from(replays)
    .where(and(eq(replays.tenantId, tenantId), eq(replays.status, 'completed'), isNotNull(replays.version), inArray(replays.ruleId, [...new Set(ruleIds)])))
    .orderBy(replays.ruleId, replays.version, replays.targetId, desc(replays.endedAt), desc(replays.createdAt));
  const found = new Map<string, ReplayRate>();
  for (const r of rows) {
    if (r.alerts === null || r.from === null || r.to === null) continue;
    found.set(replayKey(r.ruleId, r.version!, r.targetId), { id: r.id, alerts: Number(r.alerts), from: new Date(r.from), to: new Date(r.to) });
  }
  return found;
}

/** The alerts/day a replaced version would have gone on raising, and what that figure rests on. */
export type Counterfactual = {
  basis: 'observed' | 'replayed' | null;
  alertsPerDay: number | null;
  /** How long the replaced version was live, in days. */
  observedDays: number;
  /** Its matches over that time (the observed basis). */
  observedAlerts: number;
  replay: ReplayRate | null;
  reason: string | null;
};

const describeMs = (ms: number) => {
  const [n, unit] = ms >= DAY_MS ? [round(ms / DAY_MS, 2), 'day'] : ms >= 3_600_000 ? [round(ms / 3_600_000, 2), 'hour'] : [round(ms / 1000, 1), 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
};

/**
 * Observed when the replaced version was live at least `minObservedMs`: its matches over its live
 * days. Otherwise replayed: the newest completed replay of that version on that target, its alerts
 * over the days it processed. Otherwise unknown, with the reason.
 */
export function counterfactualRate(replaced: DeploymentSpan, lifetime: RunVolume | undefined, replay: ReplayRate | undefined, minObservedMs: number): Counterfactual {
  const liveMs = replaced.endedAt!.getTime() - replaced.activatedAt.getTime();
  const observedAlerts = volumeOf(lifetime);
  const base = { observedDays: liveMs / DAY_MS, observedAlerts, replay: replay ?? null };
  if (liveMs >= minObservedMs && liveMs > 0) return { ...base, basis: 'observed', alertsPerDay: observedAlerts / (liveMs / DAY_MS), reason: null };
  const replayMs = replay ? replay.to.getTime() - replay.from.getTime() : 0;
  if (replay && replayMs > 0) return { ...base, basis: 'replayed', alertsPerDay: replay.alerts / (replayMs / DAY_MS), reason: null };
  const short = `v${replaced.version} was live ${describeMs(liveMs)}, less than the ${describeMs(minObservedMs)} its observed rate needs`;
  const noReplay = replay
    ? `its newest completed replay on ${replaced.targetName} processed no time`
    : `no completed replay of v${replaced.version} on ${replaced.targetName} exists`;
  return { ...base, basis: null, alertsPerDay: null, reason: `${short}, and ${noReplay}` };
}

export type NoiseSavedItem = Replacement & {
  counterfactual: Counterfactual;
  daysInWindow: number;
  /** Counterfactual alerts/day × days the change was in effect in the window. */
  expectedAlerts: number | null;
  /** What the replacement matched in the window (0 for a removal). */
  actualAlerts: number;
  /** expected − actual; negative when the replacement is noisier. Null when the counterfactual is unknown. */
  noiseSaved: number | null;
};

export type BudgetSavedItem = { deployment: DeploymentSpan; suppressed: number; shadowMatches: number; noiseSaved: number };

export type Window = { from: Date; to: Date };

const overlapMs = (from: Date, until: Date | null, w: Window) => Math.max(0, Math.min((until ?? w.to).getTime(), w.to.getTime()) - Math.max(from.getTime(), w.from.getTime()));

/**
 * Noise saved by each change in effect during the window. The replacement's whole volume
 * (suppressed and shadow matches included) is subtracted here; what the budget kept from analysts
 * is counted once, in the budget items: the two add up to counterfactual − alerts actually opened.
 */
export function changeSavings(
  changes: readonly Replacement[],
  w: Window,
  volumes: { window: Map<string, RunVolume>; lifetime: Map<string, RunVolume>; replays: Map<string, ReplayRate> },
  minObservedMs: number,
): NoiseSavedItem[] {
  const items: NoiseSavedItem[] = [];
  for (const c of changes) {
    const ms = overlapMs(c.from, c.until, w);
    if (ms <= 0) continue;
    const r = c.replaced;
    const counterfactual = counterfactualRate(r, volumes.lifetime.get(r.id), volumes.replays.get(replayKey(r.ruleId, r.version, r.targetId)), minObservedMs);
    const daysInWindow = ms / DAY_MS;
    const actualAlerts = c.replacement ? volumeOf(volumes.window.get(c.replacement.id)) : 0;
    const expectedAlerts = counterfactual.alertsPerDay === null ? null : counterfactual.alertsPerDay * daysInWindow;
    items.push({ ...c, counterfactual, daysInWindow, expectedAlerts, actualAlerts, noiseSaved: expectedAlerts === null ? null : expectedAlerts - actualAlerts });
  }
  return items;
}

/** Alerts a noise budget kept from analysts in the window: suppressed over budget, or matched while demoted. */
export function budgetSavings(history: readonly DeploymentSpan[], window: Map<string, RunVolume>): BudgetSavedItem[] {
  const items: BudgetSavedItem[] = [];
  for (const d of history) {
    const v = window.get(d.id);
    if (!v || v.suppressed + v.shadowMatches === 0) continue;
    items.push({ deployment: d, suppressed: v.suppressed, shadowMatches: v.shadowMatches, noiseSaved: v.suppressed + v.shadowMatches });
  }
  return items;
}

/** The replaced deployments whose lifetime volume the observed basis needs. */
export const observedCandidates = (changes: readonly Replacement[], minObservedMs: number) =>
  changes.filter((c) => c.replaced.endedAt!.getTime() - c.replaced.activatedAt.getTime() >= minObservedMs).map((c) => c.replaced.id);
