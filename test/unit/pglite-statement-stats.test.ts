import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Writable } from 'node:stream';
import { openDatabase, type Database } from '../../db/client';
import { startStatementStatsReports } from '../../worker/pglite-statement-stats';

/** The busiest statements of the embedded database, per period (DETFLOW_PGLITE_STATEMENT_STATS_MINUTES). */
describe('statement statistics of the embedded database', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: undefined, statementStats: true });
    await database.migrate();
  });
  afterAll(() => database.close());

  it('is off unless asked for', async () => {
    const plain = await openDatabase({ kind: 'pglite', dataDir: undefined });
    try {
      expect(plain.takeStatementStats).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('counts each statement of the period, the busiest first, and starts again after each read', async () => {
    await database.takeStatementStats!(100);
    for (let i = 0; i < 7; i++) await database.queryPrepared('test_stats_targets', 'select id from targets where tenant_id = $1', [`t${i}`]);
    await database.queryPrepared('test_stats_series', 'select count(*) from generate_series(1, $1::int)', [200_000]);

    const first = await database.takeStatementStats!(100);
    const targets = first.find((s) => /from targets where tenant_id = \$1/.test(s.query));
    expect(targets).toMatchObject({ calls: 7, rows: 0 });
    const series = first.find((s) => /generate_series/.test(s.query));
    expect(series).toMatchObject({ calls: 1, rows: 1 });
    expect(series!.totalMs).toBeGreaterThan(targets!.meanMs);
    // Planning counts too (PGlite plans every query it is given), within the total.
    expect(targets!.planMs).toBeGreaterThan(0);
    expect(targets!.planMs).toBeLessThanOrEqual(targets!.totalMs);
    expect(first.map((s) => s.totalMs)).toEqual([...first.map((s) => s.totalMs)].sort((a, b) => b - a));
    // Its own reads are not reported.
    expect(first.some((s) => /pg_stat_statements/.test(s.query))).toBe(false);

    await database.queryPrepared('test_stats_targets', 'select id from targets where tenant_id = $1', ['t']);
    const second = await database.takeStatementStats!(100);
    expect(second.find((s) => /from targets where tenant_id = \$1/.test(s.query))).toMatchObject({ calls: 1 });
    expect(second.some((s) => /generate_series/.test(s.query))).toBe(false);
    expect(await database.takeStatementStats!(1)).toHaveLength(0);
  });

  it('opens a data folder once opened with statistics without them (the library stays preloaded, tracking nothing)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-stats-'));
    try {
      const first = await openDatabase({ kind: 'pglite', dataDir: dir, statementStats: true });
      await first.migrate();
      await first.close();
      const again = await openDatabase({ kind: 'pglite', dataDir: dir });
      try {
        expect(again.takeStatementStats).toBeUndefined();
        expect(await again.queryPrepared<{ n: number }>('test_stats_reopen', 'select count(*)::int as n from rules', [])).toEqual([{ n: 0 }]);
        expect(await again.queryPrepared<{ track: string }>('test_stats_track', `select current_setting('pg_stat_statements.track') as track`, [])).toEqual([
          { track: 'none' },
        ]);
      } finally {
        await again.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('logs one line per period at info even when the service logs only warnings, and stops', async () => {
    const lines: Array<Record<string, any>> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const logger = pino({ level: 'warn' }, sink);
    const reporter = startStatementStatsReports({ takeStatementStats: database.takeStatementStats! }, { everyMs: 30, top: 3, logger });
    try {
      await database.queryPrepared('test_stats_report', 'select count(*) from rules', []);
      while (reporter.reports < 2) await new Promise((r) => setTimeout(r, 10));
    } finally {
      await reporter.stop();
    }
    const reported = reporter.reports;
    await new Promise((r) => setTimeout(r, 100));
    expect(reporter.reports).toBe(reported);
    expect(lines.length).toBe(reported);
    expect(lines[0]).toMatchObject({ level: 30, component: 'pglite-statement-stats' });
    expect(lines[0]!.statements.some((s: { query: string; calls: number }) => /from rules/.test(s.query) && s.calls === 1)).toBe(true);
    expect(lines.every((l) => l.statements.length <= 3)).toBe(true);
  });
});
