import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { jsonRows } from '../../db/json-rows';
import { alertBacklog, alertClosedRollup, alertRaisedRollup, alerts, deployments, ruleVersions, targets, type TargetCostModel } from '../../db/schema';
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
 * at a cost that grows with the days and groups, not with the alerts (docs/decisions/0060).
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
  const query = db
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
  type Row = { rule_id: string; version: number; status: 'active' | 'demoted'; target_id: string; title: string; level: string | null; tags: string[] };
  const rows = await jsonRows<Row>(db, query);
  return rows.map((r) => ({ ruleId: r.rule_id, version: r.version, status: r.status, targetId: r.target_id, title: r.title, level: r.level, tags: r.tags }));
}

export type ScopedTarget = { id: string; name: string; costModel: TargetCostModel };

/** The tenant's targets in the actor's environments, with their cost models. */
export async function targetsInScope(db: Db, actor: Actor): Promise<ScopedTarget[]> {
  return db
    .select({ id: targets.id, name: targets.name, costModel: targets.costModel })
    .from(targets)
    .where(and(eq(targets.tenantId, actor.tenantId), inActorEnvironments(actor, targets.environment)));
}

/**
 * A window [from, now] as the rollups cover it: raw alerts in [from, wholeDaysFrom), then rollup
 * rows of each span from its `fromDay` (inclusive) to its `toDay` (exclusive; none for the last):
 * single days up to the next 8-day boundary, 8-day spans up to the next 64-day boundary, 64-day
 * spans on (boundaries counted from 1970-01-01, as the triggers key them).
 */
export type SplitWindow = { from: Date; wholeDaysFrom: Date; spans: Array<{ spanDays: number; fromDay: string; toDay: string | null }> };

const DAY_MS = 86_400_000;
const SPANS = [1, 8, 64] as const;

export function splitWindow(from: Date): SplitWindow {
  const firstDay = Math.ceil(from.getTime() / DAY_MS);
  const dayString = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);
  const bounds = [firstDay, ...SPANS.slice(1).map((span) => Math.ceil(firstDay / span) * span)];
  return {
    from,
    wholeDaysFrom: new Date(firstDay * DAY_MS),
    spans: SPANS.map((spanDays, i) => ({ spanDays, fromDay: dayString(bounds[i]!), toDay: i + 1 < bounds.length ? dayString(bounds[i + 1]!) : null })),
  };
}

/** One `select … union all select …` over the rollup rows of the window's spans, each an index-only range scan. */
function spanRows(w: SplitWindow, table: typeof alertRaisedRollup | typeof alertClosedRollup, tenantId: string, columns: SQL): SQL {
  return sql.join(
    w.spans.map(
      (s) =>
        sql`select ${columns} from ${table} where ${table.tenantId} = ${tenantId} and ${table.spanDays} = ${s.spanDays} and ${table.day} >= ${s.fromDay}::date${
          s.toDay === null ? sql`` : sql` and ${table.day} < ${s.toDay}::date`
        }`,
    ),
    sql` union all `,
  );
}

/** Alerts raised since `from` per rule and target: all, those not suppressed (triaged), and per disposition. */
export type RaisedRow = { ruleId: string; targetId: string; alerts: number; triaged: number } & DispositionCounts;

export async function alertsRaisedSince(db: Db, actor: Actor, from: Date): Promise<RaisedRow[]> {
  const w = splitWindow(from);
  const is = (disposition: string) => sql`(${alerts.disposition} is not distinct from ${disposition})::int`;
  type Row = { rule_id: string; target_id: string; alerts: number; triaged: number; true_positive: number; false_positive: number; benign: number; duplicate: number };
  // Summed per (rule, target) first, then limited to the targets in scope: the join sees the groups, not the days.
  const rows = await jsonRows<Row>(
    db,
    sql`select s.* from (
      select u.rule_id, u.target_id, sum(u.alerts)::int as alerts, sum(u.triaged)::int as triaged, sum(u.true_positive)::int as true_positive,
        sum(u.false_positive)::int as false_positive, sum(u.benign)::int as benign, sum(u.duplicate)::int as duplicate
      from (
        ${spanRows(
          w,
          alertRaisedRollup,
          actor.tenantId,
          sql`${alertRaisedRollup.ruleId}, ${alertRaisedRollup.targetId}, ${alertRaisedRollup.alerts}, ${alertRaisedRollup.triaged}, ${alertRaisedRollup.truePositive},
            ${alertRaisedRollup.falsePositive}, ${alertRaisedRollup.benign}, ${alertRaisedRollup.duplicate}`,
        )}
        union all
        select ${alerts.ruleId}, ${alerts.targetId}, 1, (${alerts.status} <> 'suppressed')::int, ${is('true_positive')}, ${is('false_positive')}, ${is('benign')}, ${is('duplicate')}
        from ${alerts} where ${alerts.tenantId} = ${actor.tenantId} and ${alerts.createdAt} >= ${w.from.toISOString()}::timestamptz
          and ${alerts.createdAt} < ${w.wholeDaysFrom.toISOString()}::timestamptz
      ) u
      group by u.rule_id, u.target_id
    ) s join ${targets} on ${targets.id} = s.target_id
    where s.alerts > 0 and ${inActorEnvironments(actor, targets.environment) ?? sql`true`}`,
  );
  return rows.map((r) => ({
    ruleId: r.rule_id,
    targetId: r.target_id,
    alerts: r.alerts,
    triaged: r.triaged,
    truePositive: r.true_positive,
    falsePositive: r.false_positive,
    benign: r.benign,
    duplicate: r.duplicate,
  }));
}

/**
 * The backlog and the alerts closed since `from`: per (team, assignee) the workload, per (team,
 * level of the rule version that raised the alert) the resolutions, with the sum of their
 * resolution times in seconds, each time taken at the millisecond (as the API shows them).
 */
export async function workloadAndResolutionsSince(db: Db, actor: Actor, from: Date): Promise<{ workload: WorkloadRow[]; resolutions: ResolutionRow[] }> {
  const w = splitWindow(from);
  type ClosedRow = { team: string | null; assignee: string | null; level: string | null; alerts: number; ms: number };
  const [backlog, closed] = await Promise.all([
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
    // Summed per target first, then limited to the targets in scope; the groups are added up below.
    jsonRows<ClosedRow>(
      db,
      sql`select c.team, c.assignee, c.level, c.alerts, c.ms from (
        select u.target_id, u.team, u.assignee, u.level, sum(u.alerts)::int as alerts, sum(u.ms)::float8 as ms
        from (
          ${spanRows(
            w,
            alertClosedRollup,
            actor.tenantId,
            sql`${alertClosedRollup.targetId}, ${alertClosedRollup.team}, ${alertClosedRollup.assignee}, ${alertClosedRollup.level}, ${alertClosedRollup.alerts},
              ${alertClosedRollup.resolutionMs} as ms`,
          )}
          union all
          select ${alerts.targetId}, ${alerts.team}, ${alerts.assignee}, ${ruleVersions.level}, 1,
            (extract(epoch from (date_trunc('milliseconds', ${alerts.closedAt}) - date_trunc('milliseconds', ${alerts.createdAt}))) * 1000)::bigint
          from ${alerts} left join ${ruleVersions}
            on ${ruleVersions.tenantId} = ${alerts.tenantId} and ${ruleVersions.ruleId} = ${alerts.ruleId} and ${ruleVersions.version} = ${alerts.version}
          where ${alerts.tenantId} = ${actor.tenantId} and ${alerts.status} = 'closed' and ${alerts.closedAt} >= ${w.from.toISOString()}::timestamptz
            and ${alerts.closedAt} < ${w.wholeDaysFrom.toISOString()}::timestamptz
        ) u
        group by u.target_id, u.team, u.assignee, u.level
      ) c join ${targets} on ${targets.id} = c.target_id
      where c.alerts > 0 and ${inActorEnvironments(actor, targets.environment) ?? sql`true`}`,
    ),
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
  for (const c of closed) {
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
