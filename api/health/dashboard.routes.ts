import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { isoDurationToMs } from '../../config/iso-duration';
import { healthDashboard, healthNavigatorLayer } from '../../domain/health/dashboard';
import { dashboardView } from './dashboard.view';
import { DashboardQuery, HealthDashboard, NavigatorLayer, NavigatorLayerQuery } from './dashboard.schemas';

/**
 * The health dashboard and its coverage as an ATT&CK Navigator layer. Both read deployments and
 * alerts of every environment the token has: a list, filtered by the domain (scope `list`).
 * Formulas: README "Dashboard"; why: docs/decisions/0056.
 */
export function dashboardRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/health/dashboard',
      operationId: 'healthDashboard',
      summary: 'ATT&CK coverage of the active rules, noise ratio, team workload, MTTR and the value score of each active rule',
      tag: 'health',
      permission: 'rules:read',
      scope: { kind: 'list' },
      query: DashboardQuery,
      responses: { 200: { description: 'The dashboard; each figure is null with a reason when there is nothing to compute it from', schema: HealthDashboard } },
      handler: async ({ query, auth }) => {
        const window = { duration: query.window, ms: isoDurationToMs(query.window)! };
        return { status: 200, body: dashboardView(await healthDashboard(deps, auth, window)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/health/dashboard/navigator-layer',
      operationId: 'healthNavigatorLayer',
      summary: 'The ATT&CK coverage of the active rules as an ATT&CK Navigator layer (format 4.5), scored by the number of active rules per technique',
      tag: 'health',
      permission: 'rules:read',
      scope: { kind: 'list' },
      query: NavigatorLayerQuery,
      responses: { 200: { description: 'A layer file the ATT&CK Navigator imports', schema: NavigatorLayer } },
      handler: async ({ auth }) => ({
        status: 200,
        body: await healthNavigatorLayer(deps, auth),
        headers: { 'content-disposition': `attachment; filename="detflow-coverage-${auth.tenantId.replace(/[^A-Za-z0-9_.-]/g, '_')}.json"` },
      }),
    }),
  ];
}
