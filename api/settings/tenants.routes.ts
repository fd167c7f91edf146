import { asc, eq, gt } from 'drizzle-orm';
import type { ApiDeps } from '../context';
import type { TokenCache } from '../auth/token-cache';
import { environments, tenants } from '../../db/schema';
import { defineRoute } from '../http/route';
import { PageQuery, decodeCursor, encodeCursor } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { conflict, notFound } from '../../domain/errors';
import { apiKeyView } from './api-keys.routes';
import { ALL_PERMISSIONS, createTenant, createToken } from '../../domain/tenants/tenant-service';
import { CreateTenantBody, CreatedTenant, IdParams, Tenant, TenantList, UpdateTenantBody } from './schemas';

/** Tenant management is the service operator's (`operator` permission), not a customer admin's. */
export function tenantRoutes(deps: ApiDeps, tokenCache: TokenCache) {
  const { db } = deps.database;

  async function tenantView(id: string) {
    const [row] = await db.select().from(tenants).where(eq(tenants.id, id));
    if (!row) return undefined;
    const envs = await db.select({ name: environments.name }).from(environments).where(eq(environments.tenantId, id)).orderBy(asc(environments.createdAt), asc(environments.name));
    return { id: row.id, name: row.name, tier: row.tier, retention_days: row.retentionDays, environments: envs.map((e) => e.name), created_at: row.createdAt.toISOString() };
  }

  return [
    defineRoute({
      method: 'post',
      path: '/settings/tenants',
      operationId: 'createTenant',
      summary: 'Create a tenant with its environments and first admin token',
      tag: 'settings',
      permission: 'operator',
      body: CreateTenantBody,
      responses: {
        201: { description: 'The tenant and its admin token (shown only now)', schema: CreatedTenant },
        409: { description: 'The tenant id is taken', schema: ProblemSchema },
      },
      handler: async ({ body, auth }) => {
        const environmentsList = [...new Set(body.environments)];
        const created = await createTenant(db, { id: body.id, name: body.name, tier: body.tier, environments: environmentsList });
        if (!created) throw conflict(`A tenant ${body.id} already exists`);
        const permissions = ALL_PERMISSIONS.filter((p) => p !== 'operator');
        const token = await createToken(db, { tenantId: body.id, name: 'tenant admin', permissions, environments: null, expiresAt: null, createdBy: auth.tokenId });
        const view = (await tenantView(body.id))!;
        return {
          status: 201,
          headers: { Location: `/api/v1/settings/tenants/${body.id}` },
          body: {
            ...view,
            admin_token: {
              ...apiKeyView({ id: token.id, name: 'tenant admin', displayPrefix: token.displayPrefix, tenantId: body.id, permissions, environments: null, createdAt: token.createdAt, expiresAt: null, revokedAt: null }),
              token: token.token,
            },
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/settings/tenants',
      operationId: 'listTenants',
      summary: 'List tenants',
      tag: 'settings',
      permission: 'operator',
      query: PageQuery.strict(),
      responses: { 200: { description: 'A page of tenants', schema: TenantList } },
      handler: async ({ query }) => {
        const after = decodeCursor<string>(query.cursor, 'string');
        const rows = await db.select({ id: tenants.id }).from(tenants).where(after ? gt(tenants.id, after) : undefined).orderBy(asc(tenants.id)).limit(query.limit + 1);
        const page = rows.slice(0, query.limit);
        const items = await Promise.all(page.map((r) => tenantView(r.id)));
        return { status: 200, body: { items, next_cursor: rows.length > query.limit ? encodeCursor(page.at(-1)!.id) : null } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/settings/tenants/{id}',
      operationId: 'updateTenant',
      summary: "Change a tenant's name, tier or event retention",
      tag: 'settings',
      permission: 'operator',
      params: IdParams,
      body: UpdateTenantBody,
      responses: {
        200: { description: 'The tenant', schema: Tenant },
        404: { description: 'No such tenant', schema: ProblemSchema },
      },
      handler: async ({ params, body }) => {
        const updated = await db
          .update(tenants)
          .set({
            ...(body.name !== undefined ? { name: body.name } : {}),
            ...(body.tier !== undefined ? { tier: body.tier } : {}),
            ...(body.retention_days !== undefined ? { retentionDays: body.retention_days } : {}),
          })
          .where(eq(tenants.id, params.id))
          .returning({ id: tenants.id });
        if (updated.length === 0) throw notFound(`No tenant ${params.id}`);
        // A new tier applies to the tenant's next request on this process.
        tokenCache.evictTenant(params.id);
        return { status: 200, body: await tenantView(params.id) };
      },
    }),
  ];
}
