import { z } from 'zod';
import type { Permission } from '../domain/tenants/permissions';
import { defineRoute, type HttpMethod } from './http/route';
import { ProblemSchema, notImplemented } from './http/problem';

/**
 * Endpoints of the contract whose features have not landed yet. They exist now so clients get the
 * real authentication behaviour (401 without a token) and an honest 501 saying what is missing,
 * instead of a 404 that looks like a wrong URL. Each entry goes away when its feature lands.
 */
const PENDING: Array<{ method: HttpMethod; path: string; operationId: string; permission: Permission; feature: string; hasBody: boolean }> = [
  { method: 'get', path: '/health/dashboard', operationId: 'healthDashboard', permission: 'rules:read', feature: 'dashboard metrics', hasBody: false },
  { method: 'get', path: '/health/roi', operationId: 'healthRoi', permission: 'rules:read', feature: 'ROI report', hasBody: false },
];

export function notYetImplementedRoutes() {
  return PENDING.map((p) =>
    defineRoute({
      method: p.method,
      path: p.path,
      operationId: p.operationId,
      summary: `Not available yet: ${p.feature}`,
      tag: 'pending',
      permission: p.permission,
      // The health reports will read deployments of every environment: a list, filtered by the token's.
      scope: { kind: 'list' },
      ...(p.path.includes('{id}') ? { params: z.object({ id: z.string().min(1).max(200) }) } : {}),
      ...(p.hasBody ? { body: z.record(z.string(), z.unknown()) } : {}),
      responses: { 501: { description: `${p.feature} has not landed yet`, schema: ProblemSchema } },
      handler: async () => {
        throw notImplemented(`${p.feature} is not available in this version of detflow yet`);
      },
    }),
  );
}
