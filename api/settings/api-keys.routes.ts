import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { PageQuery, decodeCursor, encodeCursor } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import type { TokenCache } from '../auth/token-cache';
import { createApiKey, listApiKeys, revokeApiKey } from '../../domain/tenants/api-keys';
import { apiKeyView, issuedApiKeyView } from './api-key.view';
import { ApiKey, ApiKeyList, CreateApiKeyBody, CreatedApiKey, UuidParams } from './schemas';

export function apiKeyRoutes(deps: ApiDeps, tokenCache: TokenCache) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'post',
      path: '/settings/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API token (shown once)',
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'tenant' },
      body: CreateApiKeyBody,
      responses: { 201: { description: 'The token, shown only now', schema: CreatedApiKey } },
      handler: async ({ body, auth }) => {
        const key = await createApiKey(deps, auth, {
          name: body.name,
          permissions: body.permissions,
          environments: body.environments,
          expiresAt: body.expires_at ? new Date(body.expires_at) : null,
          principal: body.principal,
        });
        return { status: 201, headers: { Location: `/api/v1/settings/api-keys/${key.id}` }, body: issuedApiKeyView(key, key.expiresAtCapped) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/settings/api-keys',
      operationId: 'listApiKeys',
      summary: "List the tenant's API tokens (never the tokens themselves; the operator's only to an operator)",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'tenant' },
      query: PageQuery.strict(),
      responses: { 200: { description: 'A page of tokens', schema: ApiKeyList } },
      handler: async ({ query, auth }) => {
        const page = await listApiKeys(db, auth, { after: decodeCursor<string>(query.cursor, 'uuid'), limit: query.limit });
        return {
          status: 200,
          body: { items: page.items.map(apiKeyView), next_cursor: page.more ? encodeCursor(page.items.at(-1)!.id) : null },
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/settings/api-keys/{id}',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API token no wider than the revoking one; it stops working at once',
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'tenant' },
      params: UuidParams,
      responses: {
        200: { description: 'The revoked token', schema: ApiKey },
        403: { description: 'The token lacks admin, or the token to revoke holds a permission or environment this one does not', schema: ProblemSchema },
        404: { description: 'No such token in this tenant (an operator token, to a token without operator)', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const { key, revokedNow } = await revokeApiKey(deps, auth, params.id);
        if (revokedNow) tokenCache.evictToken(key.id);
        return { status: 200, body: apiKeyView(key) };
      },
    }),
  ];
}
