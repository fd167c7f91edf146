import { openDatabase, type Database } from '../../db/client';
import { startPeriodicVacuum } from '../../worker/pglite-vacuum';
import { ensureBootstrap } from '../../domain/tenants/tenant-service';
import { seedTenant } from '../../bench/health-seed';

/**
 * PGlite has no autovacuum: without the periodic pass the planner keeps an empty table's
 * estimates. The alert list (newest first, a page of 20) is the query the soak found slowed by it.
 */
describe('the embedded database is vacuumed and analyzed periodically', () => {
  let database: Database;
  const tenant = 'default';
  const listPlan = async () =>
    (
      await database.queryPrepared<{ 'QUERY PLAN': string }>(
        'test_vacuum_plan',
        `explain select a.id from alerts a join targets t on t.id = a.target_id where a.tenant_id = $1 order by a.created_at desc, a.id desc limit 21`,
        [tenant],
      )
    )
      .map((r) => r['QUERY PLAN'])
      .join('\n');
  const analyzedRows = async () =>
    Number((await database.queryPrepared<{ n: number }>('test_vacuum_reltuples', `select reltuples::float8 as n from pg_class where relname = 'alerts'`, []))[0]!.n);

  beforeAll(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: undefined });
    await database.migrate();
    await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined });
    await seedTenant(database.db, tenant, { rules: 5, alerts: 4_000, runs: 10, replays: 1 });
  });
  afterAll(() => database.close());

  it('gives the planner real row counts, so the alert list reads its page from the index', async () => {
    // Never analyzed: PGlite itself never will.
    expect(await analyzedRows()).toBe(-1);
    expect(await listPlan()).not.toMatch(/Index Scan Backward using alerts_tenant_created/);

    const vacuum = startPeriodicVacuum({ vacuum: database.vacuum! }, { everyMs: 50, firstAfterMs: 0, logger: { debug: () => undefined, error: () => undefined } });
    while (vacuum.passes < 2) await new Promise((r) => setTimeout(r, 10));
    await vacuum.stop();

    expect(await analyzedRows()).toBe(4000);
    expect(await listPlan()).toMatch(/Index Scan Backward using alerts_tenant_created/);
  });
});

describe('the periodic vacuum schedule', () => {
  it('logs a failed pass and keeps its schedule; stop waits for the pass under way and ends the schedule', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    let release: () => void = () => undefined;
    const vacuum = startPeriodicVacuum(
      {
        vacuum: async () => {
          calls++;
          if (calls === 1) throw new Error('disk full');
          await new Promise<void>((r) => (release = r));
        },
      },
      { everyMs: 20, firstAfterMs: 0, logger: { debug: () => undefined, error: (o: unknown) => errors.push(o) } },
    );
    while (calls < 2) await new Promise((r) => setTimeout(r, 5));
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as { err: Error }).err.message)).toBe('disk full');
    let stopped = false;
    const stopping = vacuum.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(vacuum.passes).toBe(1);
    await new Promise((r) => setTimeout(r, 60));
    expect(calls).toBe(2);
  });
});
