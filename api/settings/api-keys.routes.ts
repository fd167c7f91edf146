import { and, desc, eq, lt } from 'drizzle-orm';
import type { ApiDeps } from '../context';
import { apiTokens } from '../../db/schema';
import { defineRoute } from '../http/route';
import { PageQuery, decodeCursor, encodeCursor } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { insufficientScope, invalidRequest, notFound } from '../../domain/errors';
import { type Actor } from '../../domain/tenants/actor';
import type { TokenCache } from '../auth/token-cache';
import { createToken, environmentsExist } from '../../domain/tenants/tenant-service';
import { ApiKey, ApiKeyList, CreateApiKeyBody, CreatedApiKey, UuidParams } from './schemas';

type TokenRow = typeof apiTokens.$inferSelect;

export function apiKeyView(row: Pick<TokenRow, 'id' | 'name' | 'displayPrefix' | 'tenantId' | 'permissions' | 'environments' | 'createdAt' | 'expiresAt' | 'revokedAt'>) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.displayPrefix,
    tenant_id: row.tenantId,
    permissions: row.permissions,
    environments: row.environments ?? null,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

/** A token can hand out only what it holds itself: no wider environments, no `operator` unless it has it. */
function checkGrantable(auth: Actor, permissions: string[], environments: string[] | null) {
  if (permissions.includes('operator') && !auth.permissions.has('operator')) {
    throw insufficientScope('Only a token with the operator permission can grant it');
  }
  if (auth.environments !== null) {
    if (environments === null) throw insufficientScope('This token is limited to some environments; it cannot grant all of them');
    const outside = environments.filter((e) => !auth.environments!.includes(e));
    if (outside.length) throw insufficientScope(`This token cannot grant environments outside its own: ${outside.join(', ')}`);
  }
}

export function apiKeyRoutes(deps: ApiDeps, tokenCache: TokenCache) {
  const { db } = deps.database;
  const now = deps.now ?? (() => new Date());
  return [
    defineRoute({
      method: 'post',
      path: '/settings/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API token (shown once)',
      tag: 'settings',
      permission: 'admin',
      body: CreateApiKeyBody,
      responses: { 201: { description: 'The token, shown only now', schema: CreatedApiKey } },
      handler: async ({ body, auth }) => {
        checkGrantable(auth, body.permissions, body.environments);
        if (body.environments) {
          const unknown = await environmentsExist(db, auth.tenantId, body.environments);
          if (unknown.length) {
            throw invalidRequest('Unknown environments', unknown.map((e) => ({ pointer: `/body/environments/${body.environments!.indexOf(e)}`, message: `no environment ${e} in this tenant` })));
          }
        }
        const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
        if (expiresAt && expiresAt.getTime() <= now().getTime()) {
          throw invalidRequest('expires_at is in the past', [{ pointer: '/body/expires_at', message: 'must be in the future' }]);
        }
        const created = await createToken(db, {
          tenantId: auth.tenantId,
          name: body.name,
          permissions: body.permissions,
          environments: body.environments,
          expiresAt,
          createdBy: auth.tokenId,
        });
        return {
          status: 201,
          headers: { Location: `/api/v1/settings/api-keys/${created.id}` },
          body: {
            ...apiKeyView({
              id: created.id,
              name: body.name,
              displayPrefix: created.displayPrefix,
              tenantId: auth.tenantId,
              permissions: body.permissions,
              environments: body.environments,
              createdAt: created.createdAt,
              expiresAt,
              revokedAt: null,
            }),
            token: created.token,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/settings/api-keys',
      operationId: 'listApiKeys',
      summary: "List the tenant's API tokens (never the tokens themselves)",
      tag: 'settings',
      permission: 'admin',
      query: PageQuery.strict(),
      responses: { 200: { description: 'A page of tokens', schema: ApiKeyList } },
      handler: async ({ query, auth }) => {
        const after = decodeCursor<string>(query.cursor, 'uuid');
        const rows = await db
          .select()
          .from(apiTokens)
          .where(and(eq(apiTokens.tenantId, auth.tenantId), after ? lt(apiTokens.id, after) : undefined))
          .orderBy(desc(apiTokens.id))
          .limit(query.limit + 1);
        const page = rows.slice(0, query.limit);
        return {
          status: 200,
          body: { items: page.map(apiKeyView), next_cursor: rows.length > query.limit ? encodeCursor(page.at(-1)!.id) : null },
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/settings/api-keys/{id}',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API token; it stops working at once',
      tag: 'settings',
      permission: 'admin',
      params: UuidParams,
      responses: {
        200: { description: 'The revoked token', schema: ApiKey },
        404: { description: 'No such token in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const at = now();
        const [row] = await db
          .select()
          .from(apiTokens)
          .where(and(eq(apiTokens.id, params.id), eq(apiTokens.tenantId, auth.tenantId)));
        if (!row) throw notFound(`No API key ${params.id} in this tenant`);
        if (row.revokedAt) return { status: 200, body: apiKeyView(row) };
        const [updated] = await db.update(apiTokens).set({ revokedAt: at }).where(eq(apiTokens.id, row.id)).returning();
        tokenCache.evictToken(row.id);
        return { status: 200, body: apiKeyView(updated!) };
      },
    }),
  ];
}
