import { and, desc, eq, lt } from 'drizzle-orm';
import type { DomainDeps } from '../deps';
import type { Db } from '../../db/client';
import { apiTokens } from '../../db/schema';
import { insufficientScope, invalidRequest, notFound } from '../errors';
import type { Actor } from './actor';
import type { Permission } from './permissions';
import { environmentsExist, issueApiKey, type IssuedApiKey } from './tenant-service';

export type ApiKeyRow = typeof apiTokens.$inferSelect;

export type ApiKeyRequest = {
  name: string;
  permissions: Permission[];
  /** null: every environment of the tenant. */
  environments: string[] | null;
  expiresAt: Date | null;
};

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

/** Creates a token of the actor's tenant, with at most what the actor holds, on environments the tenant has. */
export async function createApiKey(deps: DomainDeps, auth: Actor, request: ApiKeyRequest): Promise<IssuedApiKey> {
  const { db } = deps.database;
  const now = deps.now ?? (() => new Date());
  checkGrantable(auth, request.permissions, request.environments);
  if (request.environments) {
    const unknown = await environmentsExist(db, auth.tenantId, request.environments);
    if (unknown.length) {
      throw invalidRequest(
        'Unknown environments',
        unknown.map((e) => ({ pointer: `/body/environments/${request.environments!.indexOf(e)}`, message: `no environment ${e} in this tenant` })),
      );
    }
  }
  if (request.expiresAt && request.expiresAt.getTime() <= now().getTime()) {
    throw invalidRequest('expires_at is in the past', [{ pointer: '/body/expires_at', message: 'must be in the future' }]);
  }
  return issueApiKey(db, {
    tenantId: auth.tenantId,
    name: request.name,
    permissions: request.permissions,
    environments: request.environments,
    expiresAt: request.expiresAt,
    createdBy: auth.tokenId,
  });
}

/** The tenant's tokens, newest id first, after the id a previous page ended at. */
export async function listApiKeys(db: Db, auth: Actor, page: { after: string | undefined; limit: number }): Promise<{ items: ApiKeyRow[]; more: boolean }> {
  const rows = await db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.tenantId, auth.tenantId), page.after ? lt(apiTokens.id, page.after) : undefined))
    .orderBy(desc(apiTokens.id))
    .limit(page.limit + 1);
  return { items: rows.slice(0, page.limit), more: rows.length > page.limit };
}

/**
 * Revokes a token of the actor's tenant; revoking it again changes nothing. `revokedNow` tells
 * whether this call revoked it, so whoever caches tokens knows to forget it.
 */
export async function revokeApiKey(deps: DomainDeps, auth: Actor, id: string): Promise<{ key: ApiKeyRow; revokedNow: boolean }> {
  const { db } = deps.database;
  const at = (deps.now ?? (() => new Date()))();
  const [row] = await db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.id, id), eq(apiTokens.tenantId, auth.tenantId)));
  if (!row) throw notFound(`No API key ${id} in this tenant`);
  if (row.revokedAt) return { key: row, revokedNow: false };
  const [updated] = await db.update(apiTokens).set({ revokedAt: at }).where(eq(apiTokens.id, row.id)).returning();
  return { key: updated!, revokedNow: true };
}
