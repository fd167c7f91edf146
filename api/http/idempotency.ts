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

/** A UUID derived from the key, so every retry of the request names the same resource and run. */
export function resourceIdFor(tenantId: string, scope: string, key: string): string {
  const h = crypto.createHash('sha256').update(`${tenantId}\u0000${scope}\u0000${key}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80; // version 8: custom, name-based
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

function requestHash(body: unknown): string {
  return crypto.createHash('sha256').update(JSON.stringify(body ?? null)).digest('hex');
}

/**
 * Claims the key for this request. Returns the resource id the key stands for: the same one on
 * every retry. The same key with a different request body is refused, since answering with the
 * first request's resource would silently ignore the second request's intent.
 */
export async function claimIdempotencyKey(db: Db, tenantId: string, scope: string, key: string, body: unknown): Promise<string> {
  const hash = requestHash(body);
  const resourceId = resourceIdFor(tenantId, scope, key);
  await db.insert(idempotencyKeys).values({ tenantId, scope, key, requestHash: hash, resourceId }).onConflictDoNothing();
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.tenantId, tenantId), eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
  if (row!.requestHash !== hash) {
    throw new AppError(409, 'idempotency-key-reused', 'Idempotency key reused', 'This Idempotency-Key was already used with a different request body; use a new key for a new request');
  }
  return row!.resourceId;
}
