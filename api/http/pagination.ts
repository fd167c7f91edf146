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
