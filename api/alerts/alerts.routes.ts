import { and, desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { ApiDeps } from '../context';
import { ALERT_STATUSES, DISPOSITIONS, alerts, targets } from '../../db/schema';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { newestFirstAfter, newestFirstCursor } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { notFound } from '../../domain/errors';
import { UuidParams } from '../settings/schemas';

const Alert = openapi(
  z.object({
    id: z.string(),
    rule_id: z.string(),
    version: z.number().int(),
    deployment_id: z.string(),
    target: z.string(),
    event_id: z.string(),
    event_time: z.string(),
    event: z.record(z.string(), z.unknown()),
    status: z.enum(ALERT_STATUSES),
    disposition: z.enum(DISPOSITIONS).nullable(),
    assignee: z.string().nullable(),
    team: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    acknowledged_at: z.string().nullable(),
    closed_at: z.string().nullable(),
  }),
  'Alert',
);
const AlertList = openapi(z.object({ items: z.array(Alert), next_cursor: z.string().nullable() }), 'AlertList');
const AlertQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().max(512).optional(),
    status: z.enum(ALERT_STATUSES).optional(),
    disposition: z.enum(DISPOSITIONS).optional(),
    rule_id: z.string().min(1).max(200).optional(),
    deployment_id: z.uuid().optional(),
    assignee: z.string().min(1).max(200).optional(),
    team: z.string().min(1).max(200).optional(),
  })
  .strict();
const PatchAlert = openapi(
  z
    .object({
      assignee: z.string().min(1).max(200).nullable().optional(),
      team: z.string().min(1).max(200).nullable().optional(),
      status: z.enum(['open', 'acknowledged', 'closed']).optional(),
      disposition: z.enum(DISPOSITIONS).nullable().optional(),
    })
    .strict(),
  'AlertUpdate',
);

type AlertRow = typeof alerts.$inferSelect;
function alertView(a: AlertRow, target: string) {
  return {
    id: a.id,
    rule_id: a.ruleId,
    version: a.version,
    deployment_id: a.deploymentId,
    target,
    event_id: a.eventId,
    event_time: a.eventTime.toISOString(),
    event: a.event,
    status: a.status,
    disposition: a.disposition,
    assignee: a.assignee,
    team: a.team,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
    acknowledged_at: a.acknowledgedAt?.toISOString() ?? null,
    closed_at: a.closedAt?.toISOString() ?? null,
  };
}

/** Alerts raised by scheduled detection, and their triage: the data the health reports compute from. */
export function alertRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const now = deps.now ?? (() => new Date());

  async function find(tenantId: string, id: string) {
    const [row] = await db
      .select({ a: alerts, target: targets.name })
      .from(alerts)
      .innerJoin(targets, eq(targets.id, alerts.targetId))
      .where(and(eq(alerts.id, id), eq(alerts.tenantId, tenantId)));
    if (!row) throw notFound(`No alert ${id} in this tenant`);
    return row;
  }

  return [
    defineRoute({
      method: 'get',
      path: '/alerts',
      operationId: 'listAlerts',
      summary: 'Alerts, newest first, filtered by status, disposition, rule, deployment, assignee, team',
      tag: 'alerts',
      permission: 'rules:read',
      query: AlertQuery,
      responses: { 200: { description: 'A page of alerts', schema: AlertList } },
      handler: async ({ query, auth }) => {
        const rows = await db
          .select({ a: alerts, target: targets.name })
          .from(alerts)
          .innerJoin(targets, eq(targets.id, alerts.targetId))
          .where(
            and(
              eq(alerts.tenantId, auth.tenantId),
              newestFirstAfter(query.cursor, alerts.createdAt, alerts.id),
              query.status ? eq(alerts.status, query.status) : undefined,
              query.disposition ? eq(alerts.disposition, query.disposition) : undefined,
              query.rule_id ? eq(alerts.ruleId, query.rule_id.toLowerCase()) : undefined,
              query.deployment_id ? eq(alerts.deploymentId, query.deployment_id) : undefined,
              query.assignee ? eq(alerts.assignee, query.assignee) : undefined,
              query.team ? eq(alerts.team, query.team) : undefined,
            ),
          )
          .orderBy(desc(alerts.createdAt), desc(alerts.id))
          .limit(query.limit + 1);
        const page = rows.slice(0, query.limit);
        const last = page.at(-1);
        return {
          status: 200,
          body: {
            items: page.map((r) => alertView(r.a, r.target)),
            next_cursor: newestFirstCursor(last?.a, rows.length > query.limit),
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/alerts/{id}',
      operationId: 'getAlert',
      summary: 'One alert with its event',
      tag: 'alerts',
      permission: 'rules:read',
      params: UuidParams,
      responses: { 200: { description: 'The alert', schema: Alert }, 404: { description: 'No such alert', schema: ProblemSchema } },
      handler: async ({ params, auth }) => {
        const row = await find(auth.tenantId, params.id);
        return { status: 200, body: alertView(row.a, row.target) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/alerts/{id}',
      operationId: 'updateAlert',
      summary: 'Triage an alert: assignee, team, status, disposition',
      tag: 'alerts',
      permission: 'rules:write',
      params: UuidParams,
      body: PatchAlert,
      responses: { 200: { description: 'The alert', schema: Alert }, 404: { description: 'No such alert', schema: ProblemSchema } },
      handler: async ({ params, body, auth }) => {
        const row = await find(auth.tenantId, params.id);
        const at = now();
        const set: Partial<AlertRow> = { updatedAt: at };
        if (body.assignee !== undefined) set.assignee = body.assignee;
        if (body.team !== undefined) set.team = body.team;
        if (body.disposition !== undefined) set.disposition = body.disposition;
        // A disposition is a verdict: giving one closes the alert unless a status says otherwise.
        const status = body.status ?? (body.disposition ? 'closed' : undefined);
        if (status !== undefined) {
          set.status = status;
          if (status !== 'open' && !row.a.acknowledgedAt) set.acknowledgedAt = at;
          set.closedAt = status === 'closed' ? (row.a.closedAt ?? at) : null;
        }
        const [updated] = await db.update(alerts).set(set).where(eq(alerts.id, row.a.id)).returning();
        return { status: 200, body: alertView(updated!, row.target) };
      },
    }),
  ];
}
