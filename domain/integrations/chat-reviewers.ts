import { and, eq, inArray } from 'drizzle-orm';
import type { DomainDeps } from '../deps';
import type { Db } from '../../db/client';
import { apiTokens, tenants } from '../../db/schema';
import { insufficientScope, invalidRequest } from '../errors';
import { effectivePermissions, type Actor } from '../tenants/actor';

/**
 * Chat users who decide approvals do so *as an API key*: revoking the key revokes the chat user,
 * its environments still limit them, and four-eyes compares its principal with the requester's.
 */

/**
 * Checks, when an admin sets a chat integration, that every mapped key is of the tenant, live and
 * holds `approve`; a refusal points at the offending entry (`/body/reviewers/<i>/api_key_id`).
 */
export async function checkReviewerKeys(db: Db, tenantId: string, reviewers: ReadonlyArray<{ api_key_id: string }>): Promise<void> {
  const ids = [...new Set(reviewers.map((r) => r.api_key_id))];
  const tokens = ids.length
    ? await db
        .select()
        .from(apiTokens)
        .where(and(eq(apiTokens.tenantId, tenantId), inArray(apiTokens.id, ids)))
    : [];
  const byId = new Map(tokens.map((t) => [t.id, t]));
  reviewers.forEach((r, i) => {
    const token = byId.get(r.api_key_id);
    const pointer = `/body/reviewers/${i}/api_key_id`;
    if (!token) throw invalidRequest(`No API key ${r.api_key_id} in this tenant`, [{ pointer, message: 'unknown API key' }]);
    if (token.revokedAt) throw invalidRequest(`API key ${r.api_key_id} is revoked`, [{ pointer, message: 'revoked' }]);
    if (!effectivePermissions(token.permissions).has('approve')) {
      throw invalidRequest(`API key ${r.api_key_id} does not hold the approve permission`, [{ pointer, message: 'lacks approve' }]);
    }
  });
}

/** Refuses a list that maps one chat user twice (`key` names the user as the chat tool does). */
export function refuseDuplicateReviewers<R>(reviewers: readonly R[], key: (r: R) => string, what: string): void {
  const seen = new Set<string>();
  reviewers.forEach((r, i) => {
    const k = key(r);
    if (seen.has(k)) throw invalidRequest(`${what} ${k} is mapped twice`, [{ pointer: `/body/reviewers/${i}`, message: `duplicate ${what}` }]);
    seen.add(k);
  });
}

/**
 * The actor a chat user decides as: the key they are mapped to, checked again at each click (it
 * may have been revoked, or may have expired, since it was mapped). `who` names the chat user in
 * refusals, `settingsPath` where an admin maps them.
 */
export async function reviewerActor(deps: DomainDeps, tenantId: string, apiKeyId: string | undefined, who: string, settingsPath: string, now: Date): Promise<Actor> {
  if (!apiKeyId) throw insufficientScope(`${who} is not mapped to a detflow reviewer; an admin maps them in ${settingsPath}`);
  const [row] = await deps.database.db
    .select({ token: apiTokens, tier: tenants.tier })
    .from(apiTokens)
    .innerJoin(tenants, eq(tenants.id, apiTokens.tenantId))
    .where(and(eq(apiTokens.id, apiKeyId), eq(apiTokens.tenantId, tenantId)));
  const token = row?.token;
  if (!token || token.revokedAt || (token.expiresAt && token.expiresAt <= now)) {
    throw insufficientScope(`The API key ${who} is mapped to is revoked, expired or gone`);
  }
  const permissions = effectivePermissions(token.permissions);
  if (!permissions.has('approve')) throw insufficientScope(`The API key ${who} is mapped to does not hold approve`);
  return {
    tokenId: token.id,
    tenantId,
    tier: row.tier,
    permissions,
    environments: token.environments ?? null,
    principal: token.principal,
    expiresAt: token.expiresAt,
  };
}
