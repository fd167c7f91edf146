import { and, desc, eq, inArray, lt } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { webhookAttempts, webhookDeliveries } from '../../db/schema';
import type { Actor } from '../tenants/actor';

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;
export type DeliveryWithAttempts = { delivery: DeliveryRow; attempts: AttemptRow[] };

export type DeliveryFilter = {
  /** Only deliveries created before this instant (where a previous page ended). */
  before: Date | undefined;
  status: DeliveryRow['status'] | undefined;
  event: string | undefined;
  limit: number;
};

/** The tenant's webhook deliveries, newest first, each with every attempt in order. */
export async function listDeliveries(db: Db, auth: Actor, filter: DeliveryFilter): Promise<{ items: DeliveryWithAttempts[]; more: boolean }> {
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.tenantId, auth.tenantId),
        filter.before !== undefined ? lt(webhookDeliveries.createdAt, filter.before) : undefined,
        filter.status !== undefined ? eq(webhookDeliveries.status, filter.status) : undefined,
        filter.event !== undefined ? eq(webhookDeliveries.event, filter.event) : undefined,
      ),
    )
    .orderBy(desc(webhookDeliveries.createdAt))
    .limit(filter.limit + 1);
  const page = rows.slice(0, filter.limit);
  const attempts = page.length
    ? await db
        .select()
        .from(webhookAttempts)
        .where(
          inArray(
            webhookAttempts.deliveryId,
            page.map((d) => d.id),
          ),
        )
        .orderBy(webhookAttempts.attempt)
    : [];
  return { items: page.map((delivery) => ({ delivery, attempts: attempts.filter((a) => a.deliveryId === delivery.id) })), more: rows.length > filter.limit };
}
