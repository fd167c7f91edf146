import type { Tier } from '../../config/env';
import { PERMISSIONS, type Permission } from './permissions';

/** Who is acting: a token of one tenant, with what it may do and on which environments. */
export type Actor = {
  tokenId: string;
  tenantId: string;
  tier: Tier;
  permissions: ReadonlySet<Permission>;
  /** Environment names the token may act on; null means every environment of its tenant. */
  environments: readonly string[] | null;
  /** The person (or system) the token acts for: four-eyes compares principals, not tokens. */
  principal: string;
  /** When the token stops working; null: never. A token it creates may not outlive it. */
  expiresAt: Date | null;
};

// `admin` manages its tenant, so it can do everything inside it; `operator` (the service operator's
// permission over all tenants) is never implied.
const IMPLIED_BY_ADMIN: readonly Permission[] = ['rules:read', 'rules:write', 'events:write', 'deploy', 'approve'];

export function effectivePermissions(granted: readonly string[]): Set<Permission> {
  const set = new Set(granted.filter((p): p is Permission => (PERMISSIONS as readonly string[]).includes(p)));
  if (set.has('admin')) for (const p of IMPLIED_BY_ADMIN) set.add(p);
  return set;
}

export function mayUseEnvironment(actor: Actor, environment: string): boolean {
  return actor.environments === null || actor.environments.includes(environment);
}

/**
 * Whether the actor holds everything a token grants: each of its permissions (with `admin`'s
 * implied ones) and each of its environments. Null when it does, else what it lacks.
 */
export function missingScope(actor: Actor, permissions: readonly string[], environments: readonly string[] | null): string | null {
  const lacking = [...effectivePermissions(permissions)].filter((p) => !actor.permissions.has(p));
  if (lacking.length) return `permissions ${lacking.join(', ')}`;
  if (actor.environments === null) return null;
  if (environments === null) return `all environments (this token is limited to ${actor.environments.join(', ')})`;
  const outside = environments.filter((e) => !actor.environments!.includes(e));
  return outside.length ? `environments ${outside.join(', ')}` : null;
}
