import { and, desc, eq, lt, sql } from 'drizzle-orm';
import type { DomainDeps } from '../deps';
import type { Db } from '../../db/client';
import { apiTokens } from '../../db/schema';
import { insufficientScope, invalidRequest, notFound } from '../errors';
import { missingScope, type Actor } from './actor';
import type { Permission } from './permissions';
import { environmentsExist, issueApiKey, type IssuedApiKey } from './tenant-service';

export type ApiKeyRow = typeof apiTokens.$inferSelect;

export type ApiKeyRequest = {
  name: string;
  permissions: Permission[];
  /** null: every environment of the tenant. */
  environments: string[] | null;
  expiresAt: Date | null;
  /** The person the token acts for; the creator's when absent. Another person's only for an admin. */
  principal: string | undefined;
};

/** A token just created, and whether its expiry was brought forward to its creator's. */
export type CreatedApiKey = IssuedApiKey & { expiresAtCapped: boolean };

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
export async function createApiKey(deps: DomainDeps, auth: Actor, request: ApiKeyRequest): Promise<CreatedApiKey> {
  const { db } = deps.database;
  const now = deps.now ?? (() => new Date());
  checkGrantable(auth, request.permissions, request.environments);
  const principal = request.principal ?? auth.principal;
  if (principal !== auth.principal && !auth.permissions.has('admin')) {
    throw insufficientScope(`Only an admin token can create a token for another principal; omit principal to create one for ${auth.principal}`);
  }
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
  // A token may not outlive its creator: what it creates expires when it does, at the latest.
  const capped = auth.expiresAt !== null && (request.expiresAt === null || request.expiresAt.getTime() > auth.expiresAt.getTime());
  const key = await issueApiKey(db, {
    tenantId: auth.tenantId,
    name: request.name,
    permissions: request.permissions,
    environments: request.environments,
    expiresAt: capped ? auth.expiresAt : request.expiresAt,
    createdBy: auth.tokenId,
    principal,
  });
  return { ...key, expiresAtCapped: capped };
}

/** Tokens holding `operator` are the service operator's: only operator tokens see and manage them. */
function visibleTo(auth: Actor) {
  return auth.permissions.has('operator') ? undefined : sql`not (${apiTokens.permissions} @> '["operator"]'::jsonb)`;
}

/** The tenant's tokens (the operator's only to an operator), newest id first, after the id a previous page ended at. */
export async function listApiKeys(db: Db, auth: Actor, page: { after: string | undefined; limit: number }): Promise<{ items: ApiKeyRow[]; more: boolean }> {
  const rows = await db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.tenantId, auth.tenantId), visibleTo(auth), page.after ? lt(apiTokens.id, page.after) : undefined))
    .orderBy(desc(apiTokens.id))
    .limit(page.limit + 1);
  return { items: rows.slice(0, page.limit), more: rows.length > page.limit };
}

/**
 * Revokes a token of the actor's tenant that holds no permission and no environment the actor does
 * not hold (an operator's token only by an operator); revoking it again changes nothing. `revokedNow` tells
 * whether this call revoked it, so whoever caches tokens knows to forget it.
 */
export async function revokeApiKey(deps: DomainDeps, auth: Actor, id: string): Promise<{ key: ApiKeyRow; revokedNow: boolean }> {
  const { db } = deps.database;
  const at = (deps.now ?? (() => new Date()))();
  const [row] = await db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.id, id), eq(apiTokens.tenantId, auth.tenantId), visibleTo(auth)));
  if (!row) throw notFound(`No API key ${id} in this tenant`);
  const missing = missingScope(auth, row.permissions, row.environments ?? null);
  if (missing)
    throw insufficientScope(`This token cannot revoke a token wider than itself: that token holds ${missing}, which this one does not; ask an admin who holds them`);
  if (row.revokedAt) return { key: row, revokedNow: false };
  const [updated] = await db.update(apiTokens).set({ revokedAt: at }).where(eq(apiTokens.id, row.id)).returning();
  return { key: updated!, revokedNow: true };
}
