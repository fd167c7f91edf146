import { sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../../db/client';
import { isDatabaseBusy, isDatabaseUnavailable } from '../../db/unavailable';
import { POSTGRES_ADMIN_URL, testDbKind } from '../support/harness';

// The pool is node-postgres' (PGlite has one connection and no pool): PostgreSQL only.
const onPostgres = testDbKind() === 'postgres' ? describe : describe.skip;

const sleep = (db: Database, seconds: number) => db.db.execute(sql`select pg_sleep(${seconds})`);

onPostgres('the PostgreSQL connection pool under a burst', () => {
  it('lets a query wait for a free connection past the 1.5 s bound of a connection attempt', async () => {
    const database = await openDatabase({ kind: 'postgres', url: POSTGRES_ADMIN_URL, poolSize: 2 });
    try {
      // Two connections held for 2 s each: the third query waits about 2 s for one of them.
      const started = Date.now();
      const outcomes = await Promise.allSettled([sleep(database, 2), sleep(database, 2), database.db.execute(sql`select 1 as one`)]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    } finally {
      await database.close();
    }
  });

  it('refuses a query whose wait runs out as the pool busy, not the database unreachable', async () => {
    const database = await openDatabase({ kind: 'postgres', url: POSTGRES_ADMIN_URL, poolSize: 1, poolWaitMs: 300 });
    try {
      // The query builder runs a query when it is awaited: `then` starts it now.
      const held = sleep(database, 1.5).then(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
      const err = await database.db.execute(sql`select 1`).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isDatabaseBusy(err)).toBe(true);
      // Still a condition that passes: runs wait for it as for an outage.
      expect(isDatabaseUnavailable(err)).toBe(true);
      await held;
      // The connection is free again: the next query is served.
      expect(((await database.db.execute(sql`select 1 as one`)) as unknown as { rows: unknown[] }).rows).toEqual([{ one: 1 }]);
    } finally {
      await database.close();
    }
  });
});
