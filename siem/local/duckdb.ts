import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';

/** A statement that could not run; carries the SQL so the failing expression can be found. */
export class EventStoreQueryError extends Error {
  override readonly name = 'EventStoreQueryError';
  constructor(
    message: string,
    readonly sql: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

function fail(e: unknown, sql: string): never {
  throw new EventStoreQueryError(`local store query failed: ${(e as Error).message}`, sql, { cause: e });
}

export async function exec(con: DuckDBConnection, sql: string, params?: readonly DuckDBValue[]): Promise<void> {
  try {
    await con.run(sql, params ? [...params] : undefined);
  } catch (e) {
    fail(e, sql);
  }
}

/** Rows as objects; BIGINT values arrive as bigint, callers convert with Number(). */
export async function rows(con: DuckDBConnection, sql: string, params?: readonly DuckDBValue[]): Promise<Record<string, unknown>[]> {
  try {
    return (await con.runAndReadAll(sql, params ? [...params] : undefined)).getRowObjects() as Record<string, unknown>[];
  } catch (e) {
    fail(e, sql);
  }
}

/** Runs fn in a transaction on con: committed when it returns, rolled back when it throws. */
export async function transaction<T>(con: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  await exec(con, 'BEGIN TRANSACTION');
  let result: T;
  try {
    result = await fn();
  } catch (e) {
    await exec(con, 'ROLLBACK');
    throw e;
  }
  await exec(con, 'COMMIT');
  return result;
}
