import { sql, type SQLWrapper } from 'drizzle-orm';
import type { Db } from './client';

/**
 * The rows of `query` as one JSON document, parsed once: both drivers decode a result cell by
 * cell (PGlite through its wire protocol in WebAssembly, about 1–2 µs a cell), which for the
 * thousand-row reads of the health reports cost more than the queries themselves. Each row is an
 * object keyed by the query's output column names (snake_case for a table column, the alias of a
 * `sql` field); timestamps arrive as ISO 8601 strings, numbers as JSON numbers (`bigint` and
 * `numeric` too: keep them to values a double holds exactly), jsonb as itself.
 */
export async function jsonRows<T>(db: Db, query: SQLWrapper): Promise<T[]> {
  const result = (await db.execute(sql`select coalesce(json_agg(q), '[]'::json)::text as rows from (${query}) q`)) as unknown as { rows: Array<{ rows: string }> };
  return JSON.parse(result.rows[0]!.rows) as T[];
}
