import { eq } from 'drizzle-orm';
import type { Request } from 'express';
import type { Db } from '../../db/client';
import { apiTokens, tenants } from '../../db/schema';
import type { Tier } from '../../config/env';
import { PERMISSIONS, type Permission } from './permissions';
import { displayPrefix, hashToken, isWellFormedToken, TOKEN_PREFIX } from './token-format';

export type AuthContext = {
  tokenId: string;
  tenantId: string;
  tier: Tier;
  permissions: ReadonlySet<Permission>;
  /** Environment names the token may act on; null means every environment of its tenant. */
  environments: readonly string[] | null;
};

export type Identity =
  | { ok: true; auth: AuthContext; prefix: string }
  | { ok: false; reason: string; prefix: string | null };

// `admin` manages its tenant, so it can do everything inside it; `operator` (the service operator's
// permission over all tenants) is never implied.
const IMPLIED_BY_ADMIN: readonly Permission[] = ['rules:read', 'rules:write', 'deploy', 'approve'];

export function effectivePermissions(granted: readonly string[]): Set<Permission> {
  const set = new Set(granted.filter((p): p is Permission => (PERMISSIONS as readonly string[]).includes(p)));
  if (set.has('admin')) for (const p of IMPLIED_BY_ADMIN) set.add(p);
  return set;
}

/** Reads the bearer token and resolves it to its tenant and scopes, or says why it cannot. */
export async function identify(db: Db, req: Request, now: Date): Promise<Identity> {
  const header = req.headers.authorization;
  if (!header) return { ok: false, reason: 'No Authorization header; send "Authorization: Bearer <token>"', prefix: null };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return { ok: false, reason: 'The Authorization header is not of the form "Bearer <token>"', prefix: null };
  const token = match[1]!;
  const prefix = token.startsWith(TOKEN_PREFIX) ? displayPrefix(token) : null;
  if (!isWellFormedToken(token)) {
    return { ok: false, reason: `The token is malformed: expected ${TOKEN_PREFIX} followed by 38 base62 characters with a valid checksum`, prefix };
  }
  const rows = await db
    .select({
      id: apiTokens.id,
      tenantId: apiTokens.tenantId,
      permissions: apiTokens.permissions,
      environments: apiTokens.environments,
      expiresAt: apiTokens.expiresAt,
      revokedAt: apiTokens.revokedAt,
      tier: tenants.tier,
    })
    .from(apiTokens)
    .innerJoin(tenants, eq(tenants.id, apiTokens.tenantId))
    .where(eq(apiTokens.hash, hashToken(token)))
    .limit(1);
  const row = rows[0];
  if (!row) return { ok: false, reason: 'The token is not known', prefix };
  if (row.revokedAt) return { ok: false, reason: `The token was revoked at ${row.revokedAt.toISOString()}`, prefix };
  if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) {
    return { ok: false, reason: `The token expired at ${row.expiresAt.toISOString()}`, prefix };
  }
  return {
    ok: true,
    prefix: prefix ?? '',
    auth: {
      tokenId: row.id,
      tenantId: row.tenantId,
      tier: row.tier,
      permissions: effectivePermissions(row.permissions),
      environments: row.environments ?? null,
    },
  };
}

export function mayUseEnvironment(auth: AuthContext, environment: string): boolean {
  return auth.environments === null || auth.environments.includes(environment);
}
