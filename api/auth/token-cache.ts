import type { Actor } from '../../domain/tenants/actor';

export type CachedToken = { auth: Actor; expiresAt: number | null };

/**
 * Resolved tokens for a short time, so most requests skip the token lookup and only bump their
 * rate-limit counter. Revocation through this process evicts at once; another API process sharing
 * the database sees it within TTL_MS. Only usable tokens are cached: unknown, revoked and expired
 * ones are looked up every time.
 */
export class TokenCache {
  static readonly TTL_MS = 1_000;
  private readonly entries = new Map<string, { token: CachedToken; until: number }>();

  constructor(private readonly maxEntries = 10_000) {}

  get(hash: string): CachedToken | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.until < performance.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.token;
  }

  set(hash: string, token: CachedToken): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { token, until: performance.now() + TokenCache.TTL_MS });
  }

  evictToken(tokenId: string): void {
    for (const [hash, entry] of this.entries) if (entry.token.auth.tokenId === tokenId) this.entries.delete(hash);
  }

  evictTenant(tenantId: string): void {
    for (const [hash, entry] of this.entries) if (entry.token.auth.tenantId === tenantId) this.entries.delete(hash);
  }
}
