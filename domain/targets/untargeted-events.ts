import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { targets } from '../../db/schema';
import type { SiemAdapters } from '../../siem/adapters';

/**
 * Gives the local store's events written before events had a target to each tenant's built-in
 * local target, the one `POST /events` sent them to by default. Events sent then to another local
 * target of the tenant were not told apart, so they join the built-in target too: no target other
 * than the built-in one sees events from before. Runs at start-up, before the worker and the API
 * serve; once done, the store remembers it and later calls read nothing.
 */
export async function adoptUntargetedEvents(db: Db, siem: Pick<SiemAdapters, 'localStore'>): Promise<number> {
  if (!(await siem.localStore.hasUntargetedEvents())) return 0;
  const owners = await db
    .select({ tenantId: targets.tenantId, targetId: targets.id })
    .from(targets)
    .where(and(eq(targets.builtIn, true), eq(targets.kind, 'local')));
  return siem.localStore.adoptUntargetedEvents(owners);
}
