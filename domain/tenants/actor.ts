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
