import { and, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client';
import { alertBacklog, alertClosedDaily, alertRaisedDaily, alerts, deployments, ruleVersions, targets, type TargetCostModel } from '../../db/schema';
import type { Actor } from '../tenants/actor';
import { inActorEnvironments } from '../tenants/scope';
import type { DispositionCounts } from './noise-ratio';
import type { WorkloadRow } from './team-workload';
import type { ResolutionRow } from './mttr';

/**
 * What the dashboard reads, grouped queries of the actor's tenant limited to the targets of its
 * environments: the store counts, the pure modules beside this one compute. Alert figures of a
 * window read its whole UTC days from the rollups (db/schema/alert-rollups.ts) and its first,
 * partial day from `alerts`, and add them up: the same numbers as one aggregate over the alerts,
 * at a cost that grows with the days and groups, not with the alerts (docs/decisions/0055).
 */

/** A deployment that is on its target (active or demoted), with the rule version it runs. */
export type LiveDeployment = {
  ruleId: string;
  version: number;
  status: 'active' | 'demoted';
  targetId: string;
  title: string;
  level: string | null;
  tags: string[];
};

export async function liveDeployments(db: Db, actor: Actor): Promise<LiveDeployment[]> {
  const rows = await db
    .select({
      ruleId: deployments.ruleId,
      version: deployments.version,
      status: deployments.status,
      targetId: deployments.targetId,
      title: ruleVersions.title,
      level: ruleVersions.level,
      tags: ruleVersions.tags,
    })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .innerJoin(ruleVersions, and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)))
    .where(and(eq(deployments.tenantId, actor.tenantId), inArray(deployments.status, ['active', 'demoted']), inActorEnvironments(actor, targets.environment)));
  return rows.map((r) => ({ ...r, status: r.status as 'active' | 'demoted' }));
}

export type ScopedTarget = { id: string; name: string; costModel: TargetCostModel };

/** The tenant's targets in the actor's environments, with their cost models. */
export async function targetsInScope(db: Db, actor: Actor): Promise<ScopedTarget[]> {
  return db
    .select({ id: targets.id, name: targets.name, costModel: targets.costModel })
    .from(targets)
    .where(and(eq(targets.tenantId, actor.tenantId), inActorEnvironments(actor, targets.environment)));
}

/** A window split where the rollups' UTC days begin: raw alerts in [from, wholeDaysFrom), rollup days from `day` on. */
export type SplitWindow = { from: Date; wholeDaysFrom: Date; day: string };

const DAY_MS = 86_400_000;

export function splitWindow(from: Date): SplitWindow {
  const wholeDaysFrom = new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS);
  return { from, wholeDaysFrom, day: wholeDaysFrom.toISOString().slice(0, 10) };
}

/** Alerts raised since `from` per rule and target: all, those not suppressed (triaged), and per disposition. */
export type RaisedRow = { ruleId: string; targetId: string; alerts: number; triaged: number } & DispositionCounts;

const raisedFigures = ['alerts', 'triaged', 'truePositive', 'falsePositive', 'benign', 'duplicate'] as const;

export async function alertsRaisedSince(db: Db, actor: Actor, from: Date): Promise<RaisedRow[]> {
  const w = splitWindow(from);
  const count = (where?: SQL) => (where ? sql<number>`(count(*) filter (where ${where}))::int` : sql<number>`count(*)::int`);
  const total = (column: PgColumn) => sql<number>`sum(${column})::int`;
  const [days, partial] = await Promise.all([
    db
      .select({
        ruleId: alertRaisedDaily.ruleId,
        targetId: alertRaisedDaily.targetId,
        alerts: total(alertRaisedDaily.alerts),
        triaged: total(alertRaisedDaily.triaged),
        truePositive: total(alertRaisedDaily.truePositive),
        falsePositive: total(alertRaisedDaily.falsePositive),
        benign: total(alertRaisedDaily.benign),
        duplicate: total(alertRaisedDaily.duplicate),
      })
      .from(alertRaisedDaily)
      .innerJoin(targets, eq(targets.id, alertRaisedDaily.targetId))
      .where(and(eq(alertRaisedDaily.tenantId, actor.tenantId), gte(alertRaisedDaily.day, w.day), inActorEnvironments(actor, targets.environment)))
      .groupBy(alertRaisedDaily.ruleId, alertRaisedDaily.targetId),
    w.wholeDaysFrom > from
      ? db
          .select({
            ruleId: alerts.ruleId,
            targetId: alerts.targetId,
            alerts: count(),
            triaged: count(sql`${alerts.status} <> 'suppressed'`),
            truePositive: count(eq(alerts.disposition, 'true_positive')),
            falsePositive: count(eq(alerts.disposition, 'false_positive')),
            benign: count(eq(alerts.disposition, 'benign')),
            duplicate: count(eq(alerts.disposition, 'duplicate')),
          })
          .from(alerts)
          .innerJoin(targets, eq(targets.id, alerts.targetId))
          .where(and(eq(alerts.tenantId, actor.tenantId), gte(alerts.createdAt, from), lt(alerts.createdAt, w.wholeDaysFrom), inActorEnvironments(actor, targets.environment)))
          .groupBy(alerts.ruleId, alerts.targetId)
      : [],
  ]);
  const sums = new Map<string, RaisedRow>();
  for (const r of [...days, ...partial]) {
    const key = JSON.stringify([r.ruleId, r.targetId]);
    const sum = sums.get(key);
    if (!sum) sums.set(key, { ...r });
    else for (const f of raisedFigures) sum[f] += r[f];
  }
  return [...sums.values()].filter((r) => r.alerts > 0);
}

/**
 * The backlog and the alerts closed since `from`: per (team, assignee) the workload, per (team,
 * level of the rule version that raised the alert) the resolutions, with the sum of their
 * resolution times in seconds, each time taken at the millisecond (as the API shows them).
 */
export async function workloadAndResolutionsSince(db: Db, actor: Actor, from: Date): Promise<{ workload: WorkloadRow[]; resolutions: ResolutionRow[] }> {
  const w = splitWindow(from);
  const ms = sql<number>`coalesce(sum(extract(epoch from (date_trunc('milliseconds', ${alerts.closedAt}) - date_trunc('milliseconds', ${alerts.createdAt}))) * 1000), 0)::float8`;
  const [backlog, days, partial] = await Promise.all([
    db
      .select({
        team: alertBacklog.team,
        assignee: alertBacklog.assignee,
        open: sql<number>`sum(${alertBacklog.open})::int`,
        acknowledged: sql<number>`sum(${alertBacklog.acknowledged})::int`,
      })
      .from(alertBacklog)
      .innerJoin(targets, eq(targets.id, alertBacklog.targetId))
      .where(and(eq(alertBacklog.tenantId, actor.tenantId), inActorEnvironments(actor, targets.environment)))
      .groupBy(alertBacklog.team, alertBacklog.assignee),
    db
      .select({
        team: alertClosedDaily.team,
        assignee: alertClosedDaily.assignee,
        level: alertClosedDaily.level,
        alerts: sql<number>`sum(${alertClosedDaily.alerts})::int`,
        ms: sql<number>`sum(${alertClosedDaily.resolutionMs})::float8`,
      })
      .from(alertClosedDaily)
      .innerJoin(targets, eq(targets.id, alertClosedDaily.targetId))
      .where(and(eq(alertClosedDaily.tenantId, actor.tenantId), gte(alertClosedDaily.day, w.day), inActorEnvironments(actor, targets.environment)))
      .groupBy(alertClosedDaily.team, alertClosedDaily.assignee, alertClosedDaily.level),
    w.wholeDaysFrom > from
      ? db
          .select({ team: alerts.team, assignee: alerts.assignee, level: ruleVersions.level, alerts: sql<number>`count(*)::int`, ms })
          .from(alerts)
          .innerJoin(targets, eq(targets.id, alerts.targetId))
          .leftJoin(ruleVersions, and(eq(ruleVersions.tenantId, alerts.tenantId), eq(ruleVersions.ruleId, alerts.ruleId), eq(ruleVersions.version, alerts.version)))
          .where(
            and(
              eq(alerts.tenantId, actor.tenantId),
              eq(alerts.status, 'closed'),
              gte(alerts.closedAt, from),
              lt(alerts.closedAt, w.wholeDaysFrom),
              inActorEnvironments(actor, targets.environment),
            ),
          )
          .groupBy(alerts.team, alerts.assignee, ruleVersions.level)
      : [],
  ]);
  const workload = new Map<string, WorkloadRow>();
  const groupOf = (team: string | null, assignee: string | null) => {
    const key = JSON.stringify([team, assignee]);
    const row = workload.get(key) ?? { team, assignee, open: 0, acknowledged: 0, handled: 0 };
    workload.set(key, row);
    return row;
  };
  for (const b of backlog) Object.assign(groupOf(b.team, b.assignee), { open: b.open, acknowledged: b.acknowledged });
  // Milliseconds are whole numbers, added exactly; seconds are made once, from their sum.
  const resolutions = new Map<string, { team: string | null; level: string | null; alerts: number; ms: number }>();
  for (const c of [...days, ...partial]) {
    groupOf(c.team, c.assignee).handled += c.alerts;
    const key = JSON.stringify([c.team, c.level]);
    const r = resolutions.get(key) ?? { team: c.team, level: c.level, alerts: 0, ms: 0 };
    r.alerts += c.alerts;
    r.ms += c.ms;
    resolutions.set(key, r);
  }
  return {
    workload: [...workload.values()].filter((r) => r.open + r.handled > 0),
    resolutions: [...resolutions.values()].filter((r) => r.alerts > 0).map(({ ms: total, ...r }) => ({ ...r, seconds: total / 1000 })),
  };
}
