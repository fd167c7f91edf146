import crypto from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { idempotencyKeys } from '../db/schema';
import { idempotencyKeyReused } from './errors';

function requestHash(body: unknown): string {
  return crypto
    .createHash('sha256')
    .update(JSON.stringify(body ?? null))
    .digest('hex');
}

/**
 * Claims the key for this request. Returns the resource id the key stands for: a new random id the
 * first time, the same one on every retry (the database row is the memory, so ids never collide
 * across installations that share a Temporal namespace). The same key with a different request body is refused, since answering with the
 * first request's resource would silently ignore the second request's intent.
 */
export async function claimIdempotencyKey(db: Db, tenantId: string, scope: string, key: string, body: unknown): Promise<string> {
  const hash = requestHash(body);
  await db.insert(idempotencyKeys).values({ tenantId, scope, key, requestHash: hash, resourceId: crypto.randomUUID() }).onConflictDoNothing();
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
  if (row!.requestHash !== hash) {
    throw idempotencyKeyReused('This Idempotency-Key was already used with a different request body; use a new key for a new request');
  }
  return row!.resourceId;
}

/**
 * The resource id a key already stands for, or undefined when the key is new. Like
 * `claimIdempotencyKey`, refuses the key when it came with another request body.
 */
export async function claimedIdempotencyKey(db: Db, tenantId: string, scope: string, key: string, body: unknown): Promise<string | undefined> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
  if (!row) return undefined;
  if (row.requestHash !== requestHash(body)) {
    throw idempotencyKeyReused('This Idempotency-Key was already used with a different request body; use a new key for a new request');
  }
  return row.resourceId;
}

/** Makes a claimed key stand for another resource: the existing one its request turned out to be equal to. */
export async function repointIdempotencyKey(db: Pick<Db, 'update'>, tenantId: string, scope: string, key: string, resourceId: string): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ resourceId })
    .where(and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
}
