import type { ApiDeps } from '../context';
import type { TokenCache } from '../auth/token-cache';
import { defineRoute } from '../http/route';
import { PageQuery, decodeCursor, encodeCursor } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { createTenantWithAdmin, listTenants, updateTenant } from '../../domain/tenants/tenant-service';
import { issuedApiKeyView } from './api-key.view';
import { tenantView } from './tenant.view';
import { CreateTenantBody, CreatedTenant, IdParams, Tenant, TenantList, UpdateTenantBody } from './schemas';

/** Tenant management is the service operator's (`operator` permission), not a customer admin's. */
export function tenantRoutes(deps: ApiDeps, tokenCache: TokenCache) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'post',
      path: '/settings/tenants',
      operationId: 'createTenant',
      summary: 'Create a tenant with its environments and first admin token',
      tag: 'settings',
      permission: 'operator',
      scope: { kind: 'service' },
      body: CreateTenantBody,
      responses: {
        201: { description: 'The tenant and its admin token (shown only now)', schema: CreatedTenant },
        409: { description: 'The tenant id is taken', schema: ProblemSchema },
      },
      handler: async ({ body, auth }) => {
        const { tenant, adminKey } = await createTenantWithAdmin(db, { id: body.id, name: body.name, tier: body.tier, environments: body.environments }, auth.tokenId);
        return {
          status: 201,
          headers: { Location: `/api/v1/settings/tenants/${body.id}` },
          body: { ...tenantView(tenant), admin_token: issuedApiKeyView(adminKey) },
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
      scope: { kind: 'service' },
      query: PageQuery.strict(),
      responses: { 200: { description: 'A page of tenants', schema: TenantList } },
      handler: async ({ query }) => {
        const page = await listTenants(db, { after: decodeCursor<string>(query.cursor, 'string'), limit: query.limit });
        return { status: 200, body: { items: page.items.map(tenantView), next_cursor: page.more ? encodeCursor(page.items.at(-1)!.tenant.id) : null } };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/settings/tenants/{id}',
      operationId: 'updateTenant',
      summary: "Change a tenant's name, tier or event retention",
      tag: 'settings',
      permission: 'operator',
      scope: { kind: 'service' },
      params: IdParams,
      body: UpdateTenantBody,
      responses: {
        200: { description: 'The tenant', schema: Tenant },
        404: { description: 'No such tenant', schema: ProblemSchema },
      },
      handler: async ({ params, body }) => {
        const tenant = await updateTenant(db, params.id, { name: body.name, tier: body.tier, retentionDays: body.retention_days });
        // A new tier applies to the tenant's next request on this process.
        tokenCache.evictTenant(params.id);
        return { status: 200, body: tenantView(tenant) };
      },
    }),
  ];
}
