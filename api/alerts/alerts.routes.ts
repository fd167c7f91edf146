import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { newestFirstCursor } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { findAlert, listAlerts, triageAlert } from '../../domain/alerts/alerts';
import { UuidParams } from '../settings/schemas';
import { decodeNewestFirstCursor } from '../http/pagination';
import { alertView } from './alert.view';
import { Alert, AlertList, AlertQuery, PatchAlert } from './schemas';

/** Alerts raised by scheduled detection, and their triage: the data the health reports compute from. */
export function alertRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'get',
      path: '/alerts',
      operationId: 'listAlerts',
      summary: 'Alerts, newest first, filtered by status, disposition, rule, deployment, assignee, team',
      tag: 'alerts',
      permission: 'rules:read',
      scope: { kind: 'list' },
      query: AlertQuery,
      responses: { 200: { description: 'A page of alerts', schema: AlertList } },
      handler: async ({ query, auth }) => {
        const page = await listAlerts(db, auth, {
          after: decodeNewestFirstCursor(query.cursor),
          status: query.status,
          disposition: query.disposition,
          ruleId: query.rule_id,
          deploymentId: query.deployment_id,
          assignee: query.assignee,
          team: query.team,
          limit: query.limit,
        });
        return { status: 200, body: { items: page.items.map(alertView), next_cursor: newestFirstCursor(page.items.at(-1)?.alert, page.more) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/alerts/{id}',
      operationId: 'getAlert',
      summary: 'One alert with its event',
      tag: 'alerts',
      permission: 'rules:read',
      scope: { kind: 'object', object: 'alert', param: 'id' },
      params: UuidParams,
      responses: { 200: { description: 'The alert', schema: Alert }, 404: { description: 'No such alert', schema: ProblemSchema } },
      handler: async ({ params, auth }) => ({ status: 200, body: alertView(await findAlert(db, auth, params.id)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/alerts/{id}',
      operationId: 'updateAlert',
      summary: 'Triage an alert: assignee, team, status, disposition',
      tag: 'alerts',
      permission: 'rules:write',
      scope: { kind: 'object', object: 'alert', param: 'id' },
      params: UuidParams,
      body: PatchAlert,
      responses: { 200: { description: 'The alert', schema: Alert }, 404: { description: 'No such alert', schema: ProblemSchema } },
      handler: async ({ params, body, auth }) => ({ status: 200, body: alertView(await triageAlert(deps, auth, params.id, body)) }),
    }),
  ];
}
