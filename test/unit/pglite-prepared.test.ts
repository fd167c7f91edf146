import { openDatabase, type Database } from '../../db/client';

// queryPrepared on PGlite keeps named statements in the backend; these pin down that it behaves
// like PGlite.query did: parameters of every kind, NULLs, results parsed, errors thrown with their
// SQLSTATE, and a name reused for other SQL running the new SQL.
describe('queryPrepared on PGlite', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: undefined });
    await database.migrate();
  });
  afterAll(() => database.close());

  it('binds text, numbers, arrays and NULLs, and parses the rows', async () => {
    const rows = await database.queryPrepared<{ a: string; b: number; c: string[]; d: null; e: Date; j: { x: number } }>(
      'test_kinds',
      `select $1::text as a, $2::int + 1 as b, $3::text[] as c, $4::text as d, $5::timestamptz as e, '{"x":1}'::jsonb as j`,
      ["it's", 41, ['x', 'y,z', 'q"'], null, '2026-01-02T03:04:05.000Z'],
    );
    expect(rows).toEqual([{ a: "it's", b: 42, c: ['x', 'y,z', 'q"'], d: null, e: new Date('2026-01-02T03:04:05.000Z'), j: { x: 1 } }]);
    // The same statement again, with other values: the prepared statement is reused.
    const again = await database.queryPrepared<{ a: string; b: number }>(
      'test_kinds',
      `select $1::text as a, $2::int + 1 as b, $3::text[] as c, $4::text as d, $5::timestamptz as e, '{"x":1}'::jsonb as j`,
      ['b', 1, [], 'd', new Date(0)],
    );
    expect(again[0]).toMatchObject({ a: 'b', b: 2, c: [], d: 'd', e: new Date(0) });
  });

  it('returns no rows for writes without RETURNING, and rows for writes with it', async () => {
    expect(await database.queryPrepared('test_insert', `insert into rate_limit_counters (bucket, day, count) values ($1, $2, $3)`, ['b1', '2026-01-01', 3])).toEqual([]);
    const rows = await database.queryPrepared<{ count: number }>(
      'test_upsert',
      `insert into rate_limit_counters (bucket, day, count) values ($1, $2, $3) on conflict (bucket, day) do update set count = rate_limit_counters.count + excluded.count returning count`,
      ['b1', '2026-01-01', 2],
    );
    expect(rows).toEqual([{ count: 5 }]);
  });

  it('throws database errors with their code, and keeps working afterwards', async () => {
    await expect(
      database.queryPrepared('test_insert', `insert into rate_limit_counters (bucket, day, count) values ($1, $2, $3)`, ['b1', '2026-01-01', 1]),
    ).rejects.toMatchObject({ code: '23505' });
    await expect(database.queryPrepared('test_bad', 'select * from no_such_table', [])).rejects.toMatchObject({ code: '42P01' });
    await expect(database.queryPrepared('test_cast', 'select $1::int as n', ['not a number'])).rejects.toMatchObject({ code: '22P02' });
    expect(await database.queryPrepared('test_cast', 'select $1::int as n', [7])).toEqual([{ n: 7 }]);
  });

  it('runs the new SQL when a name is reused for other SQL', async () => {
    expect(await database.queryPrepared('test_reuse', 'select 1 as n', [])).toEqual([{ n: 1 }]);
    expect(await database.queryPrepared('test_reuse', 'select $1::text as s', ['two'])).toEqual([{ s: 'two' }]);
  });

  it('never interleaves with a transaction', async () => {
    const order: string[] = [];
    const tx = database.db.transaction(async (t) => {
      order.push('tx start');
      await t.execute('select pg_sleep(0.05)');
      order.push('tx end');
    });
    while (!order.includes('tx start')) await new Promise((r) => setImmediate(r));
    const read = database.queryPrepared('test_after_tx', 'select 1 as n', []).then(() => order.push('query'));
    await Promise.all([tx, read]);
    expect(order).toEqual(['tx start', 'tx end', 'query']);
  });
});
