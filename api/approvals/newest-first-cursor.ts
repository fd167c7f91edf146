import { decodeCursor, encodeCursor } from '../http/pagination';
import type { NewestFirstKey } from '../../domain/approvals/approvals';

/**
 * The key a newest-first cursor holds (`<created_at>|<id>`, as `newestFirstCursor` writes it), for
 * the domain to continue after. Checked like `newestFirstAfter` checks it: each part by
 * `decodeCursor`'s own rules for its kind (an instant PostgreSQL can compare, a UUID), so a forged
 * cursor gets the one refusal every cursor this API did not issue gets.
 * It belongs in api/http/pagination.ts, beside newestFirstCursor, where it could use the checks
 * directly (and newestFirstAfter would be this plus the domain's condition); here until that file moves.
 */
export function decodeNewestFirstCursor(cursor: string | undefined): NewestFirstKey | undefined {
  const after = decodeCursor<string>(cursor, 'string');
  if (after === undefined) return undefined;
  const [at = '', key = ''] = after.split('|');
  const createdAt = decodeCursor<string>(encodeCursor(at), 'time')!;
  const id = decodeCursor<string>(encodeCursor(key), 'uuid')!;
  return { createdAt: new Date(createdAt), id };
}
