import crypto from 'node:crypto';
import type { Request } from 'express';
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { idempotencyKeys } from '../../db/schema';
import { AppError, badRequest } from './problem';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!KEY_PATTERN.test(key)) {
    throw badRequest('The Idempotency-Key header must be 1 to 255 visible ASCII characters', [{ pointer: '/headers/idempotency-key', message: 'invalid' }]);
  }
  return key;
}

function requestHash(body: unknown): string {
  return crypto.createHash('sha256').update(JSON.stringify(body ?? null)).digest('hex');
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
    throw new AppError(409, 'idempotency-key-reused', 'Idempotency key reused', 'This Idempotency-Key was already used with a different request body; use a new key for a new request');
  }
  return row!.resourceId;
}
