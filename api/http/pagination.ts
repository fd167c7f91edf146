import { and, eq, lt, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { badRequest } from './problem';

/** Lists are paged with `limit` and an opaque `cursor` (base64url of the last key seen). */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).optional(),
});

export function encodeCursor(value: string | number): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor<T extends string | number>(cursor: string | undefined, kind: 'string' | 'number'): T | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof value === kind) return value as T;
  } catch {
    // fall through to the uniform error below: the cursor is opaque to clients
  }
  throw badRequest('The cursor is not one this API issued', [{ pointer: '/query/cursor', message: 'invalid cursor' }]);
}

/**
 * Newest-first lists keyed by (created_at, id): the cursor is the last row's pair, and the next page
 * is every row strictly older in that order, so rows created in the same instant are not skipped.
 */
export function newestFirstAfter(cursor: string | undefined, createdAt: PgColumn, id: PgColumn): SQL | undefined {
  const after = decodeCursor<string>(cursor, 'string');
  if (after === undefined) return undefined;
  const [at, key] = after.split('|');
  const when = new Date(at ?? '');
  if (Number.isNaN(when.getTime()) || !key) {
    throw badRequest('The cursor is not one this API issued', [{ pointer: '/query/cursor', message: 'invalid cursor' }]);
  }
  return or(lt(createdAt, when), and(eq(createdAt, when), lt(id, key)));
}

export function newestFirstCursor(last: { createdAt: Date; id: string } | undefined, more: boolean): string | null {
  return more && last ? encodeCursor(`${last.createdAt.toISOString()}|${last.id}`) : null;
}
