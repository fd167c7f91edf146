import { decodeCursor, encodeCursor } from '../http/pagination';

/**
 * The (created_at, id) key of the alert a newest-first page ended at, from the cursor
 * `newestFirstCursor` wrote (`<created_at>|<id>`). Each half is checked as the cursor kind it is —
 * an instant PostgreSQL can compare, a UUID — so a forged cursor is the same 400 as in every list.
 * (This belongs beside `newestFirstAfter` in api/http/pagination.ts, which builds the query from the
 * cursor instead; the alerts' query is the domain's.)
 */
export function decodeNewestFirstKey(cursor: string | undefined): { createdAt: Date; id: string } | undefined {
  const after = decodeCursor<string>(cursor, 'string');
  if (after === undefined) return undefined;
  const [at = '', id = ''] = after.split('|');
  return { createdAt: new Date(decodeCursor<string>(encodeCursor(at), 'time')!), id: decodeCursor<string>(encodeCursor(id), 'uuid')! };
}
