import type { Request } from 'express';
import type { Database } from '../../db/client';
import type { TokenCache } from './token-cache';
import type { Tier } from '../../config/env';
import { effectivePermissions, type Actor } from '../../domain/tenants/actor';
import { displayPrefix, hashToken, isWellFormedToken, TOKEN_PREFIX } from '../../domain/tenants/token-format';

/** Why a request could not be attributed to a token; recorded in the audit row, never answered in detail. */
export type AuthFailure = 'missing' | 'not-bearer' | 'malformed' | 'unknown' | 'revoked' | 'expired' | 'throttled';

export type Identity =
  | { ok: true; auth: Actor; prefix: string; tokenHash: string }
  | {
      ok: false;
      failure: AuthFailure;
      reason: string;
      prefix: string | null;
      /** The token's own id and tenant when it was real (revoked or expired): its use is the tenant's to see. */
      owner?: { tokenId: string; tenantId: string };
      /** For `throttled`: seconds until the address may present an unknown token again. */
      retryAfter?: number;
    };

/**
 * What an unknown, revoked or expired token is answered: one message for all three, so a leaked
 * token's holder cannot learn that it was once real. The reason is kept in the audit row.
 */
export const INVALID_TOKEN =
  'The token is not valid: it is unknown, revoked or expired. Send a current token as "Authorization: Bearer <token>"; a tenant admin can create one (POST /api/v1/settings/api-keys)';

/**
 * Reads the bearer token and resolves it to its tenant and scopes, or says why it cannot. Resolved
 * tokens are cached briefly (TokenCache), since this runs on every request. `refuseLookup`, given the
 * token's hash, may refuse the lookup (seconds to wait) when the client is throttled for failures.
 */
export async function identify(
  database: Database,
  cache: TokenCache,
  req: Request,
  now: Date,
  refuseLookup: (tokenHash: string) => number | null = () => null,
): Promise<Identity> {
  const header = req.headers.authorization;
  if (!header) return { ok: false, failure: 'missing', reason: 'No Authorization header; send "Authorization: Bearer <token>"', prefix: null };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return { ok: false, failure: 'not-bearer', reason: 'The Authorization header is not of the form "Bearer <token>"', prefix: null };
  const token = match[1]!;
  const prefix = token.startsWith(TOKEN_PREFIX) ? displayPrefix(token) : null;
  if (!isWellFormedToken(token)) {
    return {
      ok: false,
      failure: 'malformed',
      reason: `The token is malformed: expected ${TOKEN_PREFIX} followed by 38 base62 characters with a valid checksum`,
      prefix,
    };
  }
  const hash = hashToken(token);
  const retryAfter = refuseLookup(hash);
  if (retryAfter !== null) return { ok: false, failure: 'throttled', reason: INVALID_TOKEN, prefix, retryAfter };
  let resolved = cache.get(hash);
  if (!resolved) {
    const [row] = await database.queryPrepared<TokenRow>('detflow_token', TOKEN_SQL, [hash]);
    if (!row) return { ok: false, failure: 'unknown', reason: INVALID_TOKEN, prefix };
    if (row.revoked_at) return { ok: false, failure: 'revoked', reason: INVALID_TOKEN, prefix, owner: { tokenId: row.id, tenantId: row.tenant_id } };
    resolved = {
      expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null,
      auth: {
        tokenId: row.id,
        tenantId: row.tenant_id,
        tier: row.tier,
        permissions: effectivePermissions(row.permissions),
        environments: row.environments ?? null,
        principal: row.principal,
        expiresAt: row.expires_at ? new Date(row.expires_at) : null,
      },
    };
    cache.set(hash, resolved);
  }
  if (resolved.expiresAt !== null && resolved.expiresAt <= now.getTime()) {
    return { ok: false, failure: 'expired', reason: INVALID_TOKEN, prefix, owner: { tokenId: resolved.auth.tokenId, tenantId: resolved.auth.tenantId } };
  }
  return { ok: true, prefix: prefix ?? '', auth: resolved.auth, tokenHash: hash };
}

const TOKEN_SQL = `
  select t.id, t.tenant_id, t.permissions, t.environments, t.principal, t.expires_at, t.revoked_at, tn.tier
  from api_tokens t join tenants tn on tn.id = t.tenant_id
  where t.hash = $1`;

type TokenRow = {
  id: string;
  tenant_id: string;
  permissions: string[];
  environments: string[] | null;
  principal: string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  tier: Tier;
};
