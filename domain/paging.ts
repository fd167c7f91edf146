import { and, eq, lt, or, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';

/** Where a newest-first list stopped: the last row's (created_at, id). */
export type NewestFirstKey = { createdAt: Date; id: string };

/**
 * Newest-first lists keyed by (created_at, id): the next page is every row strictly older in that
 * order, so rows created in the same instant are not skipped.
 */
export function newestFirstAfter(after: NewestFirstKey | undefined, createdAt: PgColumn, id: PgColumn): SQL | undefined {
  if (after === undefined) return undefined;
  return or(lt(createdAt, after.createdAt), and(eq(createdAt, after.createdAt), lt(id, after.id)));
}
