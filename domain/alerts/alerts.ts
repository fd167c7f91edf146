import { and, desc, eq } from 'drizzle-orm';
import type { DomainDeps } from '../deps';
import type { Db } from '../../db/client';
import { alerts, targets } from '../../db/schema';
import { notFound } from '../errors';
import type { Actor } from '../tenants/actor';
import { newestFirstAfter, type NewestFirstKey } from '../paging';
import { inActorEnvironments } from '../tenants/scope';

/** Alerts raised by scheduled detection, and their triage: the data the health reports compute from. */
export type AlertRow = typeof alerts.$inferSelect;
/** An alert with the name of the target it was raised on. */
export type AlertOnTarget = { alert: AlertRow; target: string };
type Disposition = NonNullable<AlertRow['disposition']>;

export type AlertFilter = {
  /** The last alert of the previous page, in newest-first order. */
  after: NewestFirstKey | undefined;
  status: AlertRow['status'] | undefined;
  disposition: Disposition | undefined;
  ruleId: string | undefined;
  deploymentId: string | undefined;
  assignee: string | undefined;
  team: string | undefined;
  limit: number;
};

export type AlertTriage = {
  assignee?: string | null | undefined;
  team?: string | null | undefined;
  status?: 'open' | 'acknowledged' | 'closed' | undefined;
  disposition?: Disposition | null | undefined;
};

export async function listAlerts(db: Db, auth: Actor, filter: AlertFilter): Promise<{ items: AlertOnTarget[]; more: boolean }> {
  const rows = await db
    .select({ alert: alerts, target: targets.name })
    .from(alerts)
    .innerJoin(targets, eq(targets.id, alerts.targetId))
    .where(
      and(
        eq(alerts.tenantId, auth.tenantId),
        inActorEnvironments(auth, targets.environment),
        newestFirstAfter(filter.after, alerts.createdAt, alerts.id),
        filter.status ? eq(alerts.status, filter.status) : undefined,
        filter.disposition ? eq(alerts.disposition, filter.disposition) : undefined,
        filter.ruleId ? eq(alerts.ruleId, filter.ruleId.toLowerCase()) : undefined,
        filter.deploymentId ? eq(alerts.deploymentId, filter.deploymentId) : undefined,
        filter.assignee ? eq(alerts.assignee, filter.assignee) : undefined,
        filter.team ? eq(alerts.team, filter.team) : undefined,
      ),
    )
    .orderBy(desc(alerts.createdAt), desc(alerts.id))
    .limit(filter.limit + 1);
  return { items: rows.slice(0, filter.limit), more: rows.length > filter.limit };
}

export async function findAlert(db: Db, auth: Actor, id: string): Promise<AlertOnTarget> {
  const [row] = await db
    .select({ alert: alerts, target: targets.name })
    .from(alerts)
    .innerJoin(targets, eq(targets.id, alerts.targetId))
    .where(and(eq(alerts.id, id), eq(alerts.tenantId, auth.tenantId)));
  if (!row) throw notFound(`No alert ${id} in this tenant`);
  return row;
}

/** Triages an alert: its assignee, team, status and disposition, with the times it was first acknowledged and closed. */
export async function triageAlert(deps: DomainDeps, auth: Actor, id: string, triage: AlertTriage): Promise<AlertOnTarget> {
  const { db } = deps.database;
  const row = await findAlert(db, auth, id);
  const at = (deps.now ?? (() => new Date()))();
  const set: Partial<AlertRow> = { updatedAt: at };
  if (triage.assignee !== undefined) set.assignee = triage.assignee;
  if (triage.team !== undefined) set.team = triage.team;
  if (triage.disposition !== undefined) set.disposition = triage.disposition;
  // A disposition is a verdict: giving one closes the alert unless a status says otherwise.
  const status = triage.status ?? (triage.disposition ? 'closed' : undefined);
  if (status !== undefined) {
    set.status = status;
    if (status !== 'open' && !row.alert.acknowledgedAt) set.acknowledgedAt = at;
    set.closedAt = status === 'closed' ? (row.alert.closedAt ?? at) : null;
  }
  const [updated] = await db.update(alerts).set(set).where(eq(alerts.id, row.alert.id)).returning();
  return { alert: updated!, target: row.target };
}
