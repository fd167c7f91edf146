import type { Request } from 'express';
import type { Database } from '../../db/client';
import type { TokenCache } from './token-cache';
import type { Tier } from '../../config/env';
import { effectivePermissions, type Actor } from '../../domain/tenants/actor';
import { displayPrefix, hashToken, isWellFormedToken, TOKEN_PREFIX } from '../../domain/tenants/token-format';

export type Identity = { ok: true; auth: Actor; prefix: string } | { ok: false; reason: string; prefix: string | null };

/**
 * Reads the bearer token and resolves it to its tenant and scopes, or says why it cannot. Resolved
 * tokens are cached briefly (TokenCache), since this runs on every request.
 */
export async function identify(database: Database, cache: TokenCache, req: Request, now: Date): Promise<Identity> {
  const header = req.headers.authorization;
  if (!header) return { ok: false, reason: 'No Authorization header; send "Authorization: Bearer <token>"', prefix: null };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return { ok: false, reason: 'The Authorization header is not of the form "Bearer <token>"', prefix: null };
  const token = match[1]!;
  const prefix = token.startsWith(TOKEN_PREFIX) ? displayPrefix(token) : null;
  if (!isWellFormedToken(token)) {
    return { ok: false, reason: `The token is malformed: expected ${TOKEN_PREFIX} followed by 38 base62 characters with a valid checksum`, prefix };
  }
  const hash = hashToken(token);
  let resolved = cache.get(hash);
  if (!resolved) {
    const [row] = await database.queryPrepared<TokenRow>('detflow_token', TOKEN_SQL, [hash]);
    if (!row) return { ok: false, reason: 'The token is not known', prefix };
    if (row.revoked_at) return { ok: false, reason: `The token was revoked at ${new Date(row.revoked_at).toISOString()}`, prefix };
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
    return { ok: false, reason: `The token expired at ${new Date(resolved.expiresAt).toISOString()}`, prefix };
  }
  return { ok: true, prefix: prefix ?? '', auth: resolved.auth };
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
