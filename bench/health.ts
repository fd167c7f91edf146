import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import pino from 'pino';
import { openDatabase, type Database } from '../db/client';
import { SecretBox } from '../config/secret-box';
import { openSiemAdapters } from '../siem/adapters';
import { createTenant, createToken, ensureBootstrap } from '../domain/tenants/tenant-service';
import { startApi } from '../api/server';
import { queryRows, seedTenant, type SeedScale } from './health-seed';
import { seedEvents } from './health-events';
import { printTable } from './support';

/**
 * The health reports at scale: `GET /health/dashboard`, `/health/roi` and `/health/rules/{id}` over
 * 1,000 rules, 1,000,000 alerts and 100,000 detection runs of one tenant (a second, small tenant
 * beside it, so tenant filtering does real work), on PGlite and on PostgreSQL. Target: p99 ≤ 200 ms.
 *
 * Each database is made fresh, migrated, and seeded in bulk in SQL (bench/health-seed.ts), then
 * analysed as autovacuum would have; the local event store gets the last days' events of the
 * rules' logsources (bench/health-events.ts), which rule health's data-quality figures read. The API runs in this process on loopback, as `npm start`
 * wires it (request log to /dev/null, token, rate limit, audit); Temporal is not needed by these
 * reads, so its client is a lazy one that never connects. Requests are sequential, so the figures
 * are latencies, not throughput. Baselines in the same run, timed the same way: a primary-key read
 * of one alert through the same database driver, and `GET /alerts/{id}` (the same read through the
 * whole HTTP stack). A reference line, not a target: a bare count of the P30D window's alerts through
 * the same driver, what one pass over the raw alerts costs. An endpoint that does not answer 200 is
 * reported as not available.
 *
 *   npm run bench:health                                  # full scale, both databases
 *   npm run bench:health -- --alerts 100000 --runs 10000 --events 100000  # a quick run
 *   npm run bench:health -- --db postgres                 # one database
 */

const { values: opts } = parseArgs({
  options: {
    rules: { type: 'string', default: '1000' },
    alerts: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '100000' },
    replays: { type: 'string', default: '50' },
    events: { type: 'string', default: '1000000' },
    'event-days': { type: 'string', default: '7' },
    requests: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '10' },
    db: { type: 'string', default: 'both' },
  },
});

function count(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: a whole number ≥ 1, not ${value}`);
  return n;
}

const SCALE: SeedScale = { rules: count('rules', opts.rules), alerts: count('alerts', opts.alerts), runs: count('runs', opts.runs), replays: count('replays', opts.replays) };
/** The second tenant: small, but with the same kinds of records, so every query must filter it out. */
const OTHER_SCALE: SeedScale = { rules: 20, alerts: Math.min(SCALE.alerts, 5_000), runs: Math.min(SCALE.runs, 500), replays: 2 };
const EVENTS = count('events', opts.events);
const EVENT_DAYS = count('event-days', opts['event-days']);
const REQUESTS = count('requests', opts.requests);
const WARMUP = count('warmup', opts.warmup);
const KINDS: ReadonlyArray<'pglite' | 'postgres'> | undefined =
  opts.db === 'both' ? ['pglite', 'postgres'] : opts.db === 'pglite' || opts.db === 'postgres' ? [opts.db] : undefined;
if (!KINDS) throw new Error(`--db: pglite, postgres or both, not ${opts.db}`);
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TARGET_P99_MS = 200;

const fmt = (n: number) => n.toLocaleString('en-US');
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));
const log = (line: string) => process.stdout.write(`${line}\n`);

type Stats = { n: number; p50: number; p95: number; p99: number; max: number };
function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return { n: s.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: s.at(-1)! };
}

type Measured = { name: string; stats: Stats | null; note: string; isBaseline: boolean };

/** A fresh database of `kind`: PGlite in a temporary folder, or a scratch PostgreSQL database dropped afterwards. */
async function freshDatabase(kind: 'pglite' | 'postgres'): Promise<{ database: Database; label: string; drop(): Promise<void> }> {
  if (kind === 'pglite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-health-'));
    const database = await openDatabase({ kind: 'pglite', dataDir: dir });
    return {
      database,
      label: `PGlite (files in ${dir})`,
      drop: async () => {
        await database.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `bench_health_${process.pid}`;
  const admin = async (text: string) => {
    const c = new pg.Client({ connectionString: POSTGRES_URL });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  await admin(`drop database if exists ${name} with (force)`);
  await admin(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 10 });
  return {
    database,
    label: `PostgreSQL ${(await queryRows<{ server_version: string }>(database.db, 'show server_version'))[0]!.server_version} (database ${name})`,
    drop: async () => {
      await database.close();
      await admin(`drop database if exists ${name} with (force)`);
    },
  };
}

async function seed(database: Database): Promise<void> {
  const t0 = performance.now();
  await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined });
  await createTenant(database.db, { id: 'other', name: 'Other tenant', tier: 'enterprise', environments: ['dev', 'staging', 'prod'] });
  for (const [tenant, scale] of [
    ['default', SCALE],
    ['other', OTHER_SCALE],
  ] as const) {
    await seedTenant(database.db, tenant, scale, (label, took) => log(`  seed ${tenant}: ${label} ${(took / 1000).toFixed(1)} s`));
  }
  const analyse = performance.now();
  // What autovacuum would have done to tables of this age: statistics for the planner, and the
  // visibility map for index-only scans.
  await database.db.execute(sql.raw('vacuum analyze'));
  log(`  vacuum analyze ${((performance.now() - analyse) / 1000).toFixed(1)} s`);
  log(`  seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function printSizes(database: Database): Promise<void> {
  const tables = [
    'rules',
    'rule_versions',
    'targets',
    'deployments',
    'approvals',
    'alerts',
    'alert_raised_rollup',
    'alert_closed_rollup',
    'alert_backlog',
    'detection_runs',
    'replays',
  ];
  const rows: Array<Record<string, string>> = [];
  for (const table of tables) {
    const [r] = await queryRows<{ main: string | number; other: string | number; bytes: string | number }>(
      database.db,
      `select count(*) filter (where tenant_id = 'default') as main, count(*) filter (where tenant_id <> 'default') as other,
        pg_total_relation_size('${table}') as bytes from ${table}`,
    );
    rows.push({
      table,
      'rows (default)': fmt(Number(r!.main)),
      'rows (other)': fmt(Number(r!.other)),
      'size incl. indexes': `${(Number(r!.bytes) / 2 ** 20).toFixed(1)} MiB`,
    });
  }
  printTable(rows);
}

/** Times `call` `REQUESTS` times after `WARMUP` untimed calls; `call(i)` returns the HTTP status (or 200 for a driver read). */
async function timeCalls(call: (i: number) => Promise<number>): Promise<{ samples: number[]; errors: string[] }> {
  const errors: string[] = [];
  for (let i = 0; i < WARMUP; i++) await call(i);
  const samples: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    const status = await call(WARMUP + i);
    samples.push(performance.now() - t0);
    if (status !== 200) errors.push(`request ${i}: ${status}`);
  }
  return { samples, errors };
}

async function benchOne(kind: 'pglite' | 'postgres'): Promise<{ measured: Measured[]; errors: string[] }> {
  const { database, label, drop } = await freshDatabase(kind);
  // The local event store in a file, as a service keeps it.
  const siemDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-health-siem-'));
  const siem = await openSiemAdapters({ dataDir: siemDir });
  // The health reads never reach Temporal; a lazy connection is made only if something does.
  const temporalClient = new Client({ connection: Connection.lazy({ address: '127.0.0.1:7233' }), namespace: 'default' });
  const errors: string[] = [];
  try {
    log(`\n${label}`);
    await database.migrate();
    await seed(database);
    const local = await queryRows<{ tenant_id: string; id: string }>(database.db, `select tenant_id, id from targets where name = 'local'`);
    const localOf = (tenant: string) => local.find((r) => r.tenant_id === tenant)!.id;
    const t0 = performance.now();
    const events = await seedEvents(
      siem.localStore,
      [
        { tenantId: 'default', targetId: localOf('default'), events: EVENTS },
        { tenantId: 'other', targetId: localOf('other'), events: Math.min(EVENTS, 10_000) },
      ],
      { days: EVENT_DAYS },
    );
    const storeBytes = fs.statSync(path.join(siemDir, 'siem', 'events.duckdb')).size;
    log(
      `  local store: ${fmt(events)} events over the last ${EVENT_DAYS} days in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${(storeBytes / 2 ** 20).toFixed(1)} MiB`,
    );
    await printSizes(database);

    const { token } = await createToken(database.db, {
      tenantId: 'default',
      name: 'bench reader',
      permissions: ['rules:read'],
      environments: null,
      expiresAt: null,
      createdBy: null,
      principal: 'bench',
    });
    const api = await startApi(
      {
        config: { bodyLimit: '5mb', publicUrl: undefined, ingestLimitBytes: 8 * 1024 * 1024 },
        database,
        // Request logs are part of the stack being measured; they go to /dev/null.
        logger: pino({ level: 'info' }, pino.destination('/dev/null')),
        secrets: SecretBox.fromPassphrase('bench'),
        siem,
        temporal: { client: temporalClient, namespace: 'default', taskQueue: 'bench', uiUrl: undefined },
      },
      '127.0.0.1',
      0,
    );
    try {
      const get = async (p: string): Promise<{ status: number; text: string }> => {
        const res = await fetch(`${api.url}/api/v1${p}`, { headers: { authorization: `Bearer ${token}` } });
        return { status: res.status, text: await res.text() };
      };
      const pick = async (text: string) => (await queryRows<{ id: string }>(database.db, text)).map((r) => r.id);
      // Varying ids: the rules in a random order (noisy and quiet ones), alerts anywhere in the table.
      const ruleIds = await pick(`select rule_id as id from rules where tenant_id = 'default' order by random()`);
      const alertIds = await pick(`select id from alerts where tenant_id = 'default' order by random() limit ${REQUESTS + WARMUP}`);

      const measured: Measured[] = [];
      const endpoint = async (name: string, pathOf: (i: number) => string) => {
        const probe = await get(pathOf(0));
        if (probe.status !== 200) {
          let why = probe.text.slice(0, 120);
          try {
            why = (JSON.parse(probe.text) as { detail?: string; title?: string }).detail ?? why;
          } catch {
            // not JSON: keep the text
          }
          measured.push({ name, stats: null, note: `endpoint not available: ${probe.status} ${why}`, isBaseline: false });
          return;
        }
        const run = await timeCalls(async (i) => (await get(pathOf(i))).status);
        errors.push(...run.errors.map((e) => `${label}, ${name}: ${e}`));
        measured.push({
          name,
          stats: stats(run.samples),
          note: `${fmt(probe.text.length)} bytes answered${run.errors.length ? `, ${run.errors.length} errors` : ''}`,
          isBaseline: false,
        });
      };

      // Baseline 1: one alert by primary key through the same driver (a named prepared statement).
      const pk = await timeCalls(async (i) => {
        const rows = await database.queryPrepared<{ id: string }>('bench_alert_by_id', 'select * from alerts where id = $1', [alertIds[i % alertIds.length]]);
        return rows.length === 1 ? 200 : 404;
      });
      errors.push(...pk.errors.map((e) => `${label}, baseline: ${e}`));
      measured.push({ name: 'baseline: alert by primary key (driver)', stats: stats(pk.samples), note: 'select * from alerts where id = $1', isBaseline: true });
      await endpoint('baseline: GET /alerts/{id} (HTTP)', (i) => `/alerts/${alertIds[i % alertIds.length]}`);
      measured.at(-1)!.isBaseline = true;

      // Reference: the cheapest query over the raw alerts that any window figure of the dashboard
      // needs (a bare count of the default window's alerts, P30D, index-only), through the same
      // driver. The dashboard reads rollups instead (docs/decisions/0060); this line says what one
      // pass over the window's alerts costs on this machine, the floor of any query without them.
      const windowCount = await timeCalls(async () => {
        const rows = await database.queryPrepared<{ n: number }>(
          'bench_window_alert_count',
          `select count(*)::int as n from alerts where tenant_id = 'default' and created_at >= now() - interval '30 days'`,
          [],
        );
        return rows.length === 1 ? 200 : 500;
      });
      measured.push({
        name: "reference: count of the P30D window's alerts (driver)",
        stats: stats(windowCount.samples),
        note: 'one pass over the window without rollups; not a target',
        isBaseline: true,
      });

      await endpoint('GET /health/dashboard', () => '/health/dashboard');
      await endpoint('GET /health/roi', () => '/health/roi');
      await endpoint('GET /health/rules/{id}', (i) => `/health/rules/${ruleIds[i % ruleIds.length]}`);
      return { measured, errors };
    } finally {
      await api.close();
    }
  } finally {
    await temporalClient.connection.close().catch(() => undefined);
    await siem.close();
    fs.rmSync(siemDir, { recursive: true, force: true });
    await drop();
  }
}

/** Why the PostgreSQL server of BENCH_POSTGRES_URL cannot be used, or undefined when it can. */
async function postgresUnreachable(): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: POSTGRES_URL });
  try {
    await c.connect();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function main() {
  log(
    `bench:health — ${fmt(SCALE.rules)} rules, ${fmt(SCALE.alerts)} alerts, ${fmt(SCALE.runs)} detection runs, ${fmt(SCALE.replays)} replays, ` +
      `${fmt(EVENTS)} events in the local store (tenant default) + ` +
      `${fmt(OTHER_SCALE.rules)} rules, ${fmt(OTHER_SCALE.alerts)} alerts, ${fmt(OTHER_SCALE.runs)} runs (tenant other); ${REQUESTS} sequential requests per endpoint after ${WARMUP} ` +
      `untimed; ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  const allErrors: string[] = [];
  const results: Array<[string, Measured[]]> = [];
  for (const kind of KINDS!) {
    if (kind === 'postgres') {
      const unreachable = await postgresUnreachable();
      if (unreachable) {
        log(`\nPostgreSQL not measured: ${POSTGRES_URL} does not answer (${unreachable}); set BENCH_POSTGRES_URL`);
        continue;
      }
    }
    const { measured, errors } = await benchOne(kind);
    results.push([kind === 'pglite' ? 'PGlite' : 'PostgreSQL', measured]);
    allErrors.push(...errors);
  }
  for (const [db, measured] of results) {
    log(`\n${db}: latency in ms (target p99 ≤ ${TARGET_P99_MS} ms)`);
    const base = measured.find((m) => m.isBaseline && m.stats)?.stats;
    printTable(
      measured.map((m) => ({
        measure: m.name,
        n: m.stats ? m.stats.n : '-',
        p50: m.stats ? ms(m.stats.p50) : '-',
        p95: m.stats ? ms(m.stats.p95) : '-',
        p99: m.stats ? ms(m.stats.p99) : '-',
        max: m.stats ? ms(m.stats.max) : '-',
        'p99 / baseline p99': m.stats && base && !m.isBaseline ? `${(m.stats.p99 / base.p99).toFixed(0)}×` : '',
        target: m.stats && !m.isBaseline ? (m.stats.p99 <= TARGET_P99_MS ? 'met' : 'MISSED') : '',
        note: m.note,
      })),
    );
  }
  if (allErrors.length > 0) {
    log(`\n${allErrors.length} requests failed:\n  ${allErrors.slice(0, 20).join('\n  ')}`);
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
