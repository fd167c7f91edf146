import { z } from 'zod';
import { invalidRequest } from '../../domain/errors';
import { findUnstorableText } from '../../lib/storable-text';
import type { NewestFirstKey } from '../../domain/paging';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Lists are paged with `limit` and an opaque `cursor` (base64url of the last key seen). */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).optional(),
});

export function encodeCursor(value: string | number): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

const invalidCursor = () => invalidRequest('The cursor is not one this API issued', [{ pointer: '/query/cursor', message: 'invalid cursor' }]);

/** The instants this API keys lists by: a cursor's time must be one PostgreSQL can compare with. */
function isCursorTime(d: Date): boolean {
  const year = d.getUTCFullYear();
  return !Number.isNaN(d.getTime()) && year >= 1 && year <= 9999;
}

/**
 * A cursor's value, checked as strictly as a client could forge it: strings PostgreSQL can store,
 * numbers that are whole and not negative, for `time` an ISO instant in years 1–9999, and for
 * `uuid` a UUID (compared with a uuid column, anything else would be a failed query).
 */
export function decodeCursor<T extends string | number>(cursor: string | undefined, kind: 'string' | 'number' | 'time' | 'uuid'): T | undefined {
  if (cursor === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor(); // opaque to clients: one uniform error
  }
  if (kind === 'number' && typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value as T;
  if (kind !== 'number' && typeof value === 'string' && !findUnstorableText(value)) {
    if (kind === 'time' && !isCursorTime(new Date(value))) throw invalidCursor();
    if (kind === 'uuid' && !UUID.test(value)) throw invalidCursor();
    return value as T;
  }
  throw invalidCursor();
}

/** The (created_at, id) a newest-first list's cursor holds (see domain/paging.ts). */
export function decodeNewestFirstCursor(cursor: string | undefined): NewestFirstKey | undefined {
  const after = decodeCursor<string>(cursor, 'string');
  if (after === undefined) return undefined;
  const [at, key] = after.split('|');
  const when = new Date(at ?? '');
  // Every list keyed this way has UUID ids.
  if (!isCursorTime(when) || !key || !UUID.test(key)) throw invalidCursor();
  return { createdAt: when, id: key };
}

export function newestFirstCursor(last: { createdAt: Date; id: string } | undefined, more: boolean): string | null {
  return more && last ? encodeCursor(`${last.createdAt.toISOString()}|${last.id}`) : null;
}
