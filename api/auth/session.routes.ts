import { z } from 'zod';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';

const Session = openapi(
  z.object({
    token_id: z.string(),
    tenant_id: z.string(),
    principal: z.string().describe('The person (or system) the token acts for; four-eyes compares principals'),
    permissions: z.array(z.string()).describe('What the token holds, with what admin implies'),
    environments: z.array(z.string()).nullable().describe('null: every environment of the tenant'),
    expires_at: z.string().nullable(),
  }),
  'Session',
);

/**
 * GET /session: what the presenting token is and may do. The console shows only what a token may
 * see and marks the reviewer's own changes (four-eyes) from it; any valid token may ask about itself.
 */
export function sessionRoutes() {
  return [
    defineRoute({
      method: 'get',
      path: '/session',
      operationId: 'getSession',
      summary: 'The presenting token: its principal, permissions and environments',
      tag: 'settings',
      scope: { kind: 'tenant' },
      responses: { 200: { description: 'The token itself (never its secret)', schema: Session } },
      handler: async ({ auth }) => ({
        status: 200,
        body: {
          token_id: auth.tokenId,
          tenant_id: auth.tenantId,
          principal: auth.principal,
          permissions: [...auth.permissions].sort(),
          environments: auth.environments ?? null,
          expires_at: auth.expiresAt?.toISOString() ?? null,
        },
      }),
    }),
  ];
}
