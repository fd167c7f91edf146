import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveTemporalCli } from '../../worker/temporal-cli';
import { eq } from 'drizzle-orm';
import pg from 'pg';
import type { Database } from '../../db/client';
import { approvals } from '../../db/schema';
import { createTestDatabase, pauseLocalDetection, processRule, request, startTestService, testDbKind, until, type TestService } from '../support/harness';
import { freePort, spawnService, type ServiceProcess } from '../support/service-process';

/**
 * The runbook of the embedded default, as an operator follows it: `npm start` in a child process
 * with a deploy waiting for approval and an active deployment; a backup taken while it runs;
 * the service stopped; the backup copied as a new DATA_DIR and started there: the approval is
 * decided and deploys, and the active deployment raises an alert on a matching event.
 */
const ACTIVE_RULE = 'e6000000-0000-4000-8000-000000000001';
const WAITING_RULE = 'e6000000-0000-4000-8000-000000000002';
const LATE_RULE = 'e6000000-0000-4000-8000-000000000003';

// Calls made while the service pauses for the backup may fail: they count as "not yet".
const eventually = <T>(what: string, fn: () => Promise<T | undefined>, seconds: number) => until(what, fn, seconds, { retryErrors: true });

type Service = ServiceProcess & { url: string; temporalPort: number };

async function startService(dataDir: string): Promise<Service> {
  const [port, temporalPort, uiPort] = [await freePort(), await freePort(), await freePort()];
  const service = spawnService('worker/start.ts', {
    DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(uiPort),
    TEMPORAL_CLI_PATH: resolveTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH, log: () => undefined }),
  });
  try {
    await service.waitFor(/detflow is running/, 150);
  } catch (err) {
    service.child.kill('SIGKILL');
    throw err;
  }
  return { ...service, url: `http://127.0.0.1:${port}`, temporalPort };
}

async function stopService(service: Service | undefined): Promise<number | null> {
  if (!service) return null;
  if (service.child.exitCode === null) service.child.kill('SIGTERM');
  const timer = setTimeout(() => service.child.kill('SIGKILL'), 30_000);
  const code = await service.exited;
  clearTimeout(timer);
  return code;
}

const event = (image: string) => JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Windows\\${image}`, CommandLine: `${image} --now`, Computer: 'host-b' });

// The service processes run on the embedded default; PostgreSQL's runbook (pg_dump) is tested apart.
const describeEmbedded = testDbKind() === 'pglite' ? describe : describe.skip;

describeEmbedded('backup and restore of the embedded default', () => {
  const folders: string[] = [];
  let first: Service | undefined;
  let restored: Service | undefined;
  afterAll(async () => {
    await stopService(first);
    await stopService(restored);
    for (const f of folders) fs.rmSync(f, { recursive: true, force: true });
  });

  it('backs up while running; restored into a new DATA_DIR, a pending approval deploys and an active deployment raises alerts', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-backup-'));
    folders.push(dataDir);
    first = await startService(dataDir);
    const admin = /Bootstrap admin token[^:]*: (\S+)/.exec(first.output())![1]!;
    const api = (svc: Service, method: string, p: string, body?: unknown, token = admin) => request(svc.url, method, p, { token, ...(body !== undefined ? { body } : {}) });

    // Scheduled detection every second, an active deployment, and a deploy waiting for a reviewer.
    const local = (await api(first, 'GET', '/api/v1/settings/targets/local')).body;
    const { name, kind, environment, connection, cost_model } = local;
    expect((await api(first, 'PUT', '/api/v1/settings/targets/local', { name, kind, environment, connection, cost_model, detection_interval: 'PT1S' })).status).toBe(200);
    expect((await api(first, 'POST', '/api/v1/rules', { rule: processRule(ACTIVE_RULE, { title: 'Active', image: '\\active.exe' }) })).status).toBe(201);
    expect((await api(first, 'POST', '/api/v1/rules', { rule: processRule(WAITING_RULE, { title: 'Waiting', image: '\\waiting.exe' }) })).status).toBe(201);
    const active = await api(first, 'POST', '/api/v1/rules/deploy', { rule_id: ACTIVE_RULE, target: 'local', approval_required: false });
    expect(active.status).toBe(202);
    await eventually(
      'the active deployment',
      async () => ((await api(first!, 'GET', `/api/v1/deployments/${active.body.id}`)).body.status === 'active' ? true : undefined),
      60,
    );
    const reviewer = (await api(first, 'POST', '/api/v1/settings/api-keys', { name: 'reviewer', permissions: ['approve', 'rules:read'], principal: 'reviewer' })).body
      .token as string;
    const waiting = await api(first, 'POST', '/api/v1/rules/deploy', { rule_id: WAITING_RULE, target: 'local', approval_required: true });
    expect(waiting.status).toBe(202);
    const approvalId = (waiting.body.links.approval as string).split('/').at(-1)!;
    await eventually('the approval waiting', async () => ((await api(first!, 'GET', `/api/v1/approvals/${approvalId}`)).body.status === 'pending' ? true : undefined), 60);
    // An event stored before the backup is in it (a replay over the restored store finds it).
    const before = await request(first.url, 'POST', '/api/v1/events?product=windows&category=process_creation', {
      token: admin,
      body: event('waiting.exe'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(before.status).toBe(200);
    const windowStart = new Date(Date.now() - 3_600_000).toISOString();

    // The backup, taken while the service runs; only the operator may take one.
    expect((await api(first, 'POST', '/api/v1/settings/backup', undefined, reviewer)).status).toBe(403);
    const backup = await api(first, 'POST', '/api/v1/settings/backup');
    expect(backup.status).toBe(201);
    expect(backup.body.path.startsWith(path.join(dataDir, 'backups'))).toBe(true);
    expect(backup.body.files).toEqual(expect.arrayContaining(['secret.key', 'siem/events.duckdb', 'temporal/temporal.db', 'pglite/PG_VERSION']));
    expect(backup.body.temporal_paused_ms).toBeGreaterThan(0);
    // Still running afterwards: ready again, and a change after the backup is not in it.
    await eventually('ready after the backup', async () => ((await api(first!, 'GET', '/readyz')).status === 200 ? true : undefined), 60);
    expect((await api(first, 'POST', '/api/v1/rules', { rule: processRule(LATE_RULE, { title: 'After the backup' }) })).status).toBe(201);
    expect(await stopService(first)).toBe(0);

    // Restore: the backup folder is the new DATA_DIR.
    const newDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-restored-'));
    folders.push(newDataDir);
    fs.cpSync(backup.body.path, newDataDir, { recursive: true });
    restored = await startService(newDataDir);
    const again = (method: string, p: string, body?: unknown, token = admin) => api(restored!, method, p, body, token);
    expect((await again('GET', `/api/v1/rules/${LATE_RULE}`)).status).toBe(404);
    expect((await again('GET', `/api/v1/approvals/${approvalId}`)).body.status).toBe('pending');

    const replay = await eventually(
      'a replay started',
      async () => {
        const res = await again('POST', '/api/v1/rules/replay', { target: 'local', rule_id: WAITING_RULE, from: windowStart, to: new Date().toISOString() });
        return res.status === 202 ? res : undefined;
      },
      60,
    );
    const replayed = (await again('GET', `/api/v1/replays/${replay.body.id}?wait=30`)).body;
    expect(replayed).toMatchObject({ status: 'completed', result: { alerts: { total: 1 } } });

    const decided = await eventually(
      'the decision',
      async () => {
        const res = await again('POST', `/api/v1/approvals/${approvalId}/decision`, { decision: 'approve', comment: 'after the restore' }, reviewer);
        return res.status === 200 ? res : undefined;
      },
      60,
    );
    expect(decided.status).toBe(200);
    await eventually(
      'the approved deployment active',
      async () => ((await again('GET', `/api/v1/deployments/${waiting.body.id}`)).body.status === 'active' ? true : undefined),
      60,
    );

    const ingested = await request(restored.url, 'POST', '/api/v1/events?product=windows&category=process_creation', {
      token: admin,
      body: [event('active.exe'), event('waiting.exe')].join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(ingested.status).toBe(200);
    const alerts = await eventually(
      'alerts of both deployments',
      async () => {
        const items = (await again('GET', '/api/v1/alerts?limit=50')).body.items as Array<{ rule_id: string }>;
        const rules = new Set(items.map((a) => a.rule_id));
        return rules.has(ACTIVE_RULE) && rules.has(WAITING_RULE) ? items : undefined;
      },
      60,
    );
    expect(alerts.filter((a) => a.rule_id === ACTIVE_RULE)).toHaveLength(1);
    expect(await stopService(restored)).toBe(0);
  }, 300_000);
});

// PostgreSQL + an external Temporal: detflow's database goes through pg_dump/pg_restore while the
// service runs (Temporal's persistence is backed up with Temporal's own tools and is not tested here).
const describePostgres = testDbKind() === 'postgres' && hasPgTools() ? describe : describe.skip;

function hasPgTools(): boolean {
  return ['pg_dump', 'pg_restore'].every((tool) => spawnSync(tool, ['--version']).status === 0);
}

const MOVING = ['public.audit_log', 'public.rate_limit_counters'];

async function tableCounts(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ schema: string; name: string }>(
      "select table_schema as schema, table_name as name from information_schema.tables where table_schema in ('public', 'drizzle') and table_type = 'BASE TABLE' order by 1, 2",
    );
    const counts: Record<string, number> = {};
    for (const t of tables.rows) counts[`${t.schema}.${t.name}`] = Number((await client.query(`select count(*) as n from "${t.schema}"."${t.name}"`)).rows[0].n);
    return counts;
  } finally {
    await client.end();
  }
}

describePostgres('backup and restore of detflow on PostgreSQL', () => {
  let svc: TestService;
  let restored: { database: Database; url: string | undefined; drop(): Promise<void> } | undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-pgdump-'));
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
    await restored?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('pg_dump while the service runs, pg_restore into a new database: every table and row, migrations current', async () => {
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(ACTIVE_RULE, { title: 'Active', image: '\\active.exe' }) } })).status).toBe(201);
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(WAITING_RULE, { title: 'Waiting', image: '\\waiting.exe' }) } })).status).toBe(201);
    const active = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: ACTIVE_RULE, target: 'local', approval_required: false } });
    await eventually(
      'the active deployment',
      async () => ((await svc.request('GET', `/api/v1/deployments/${active.body.id}`)).body.status === 'active' ? true : undefined),
      60,
    );
    const waiting = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: WAITING_RULE, target: 'local', approval_required: true } });
    expect(waiting.status).toBe(202);
    const approvalId = (waiting.body.links.approval as string).split('/').at(-1)!;
    await eventually('the approval waiting', async () => ((await svc.request('GET', `/api/v1/approvals/${approvalId}`)).body.status === 'pending' ? true : undefined), 60);

    // Backups through the API are the embedded default's; this process refuses with a pointer to pg_dump.
    const refused = await svc.request('POST', '/api/v1/settings/backup');
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(refused.body.detail).toMatch(/pg_dump/);

    // Only requests move during the dump: a scheduled pass on a five-minute mark would add run records after it.
    await pauseLocalDetection(svc, 'the dump is compared with the tables afterwards');
    // One consistent snapshot (pg_dump runs in one repeatable-read transaction), taken while requests keep coming.
    const file = path.join(dir, 'detflow.dump');
    const reads = Promise.all(Array.from({ length: 20 }, () => svc.request('GET', '/api/v1/rules')));
    const dump = spawnSync('pg_dump', ['--format=custom', '--no-owner', '--file', file, svc.databaseUrl!], { encoding: 'utf8' });
    expect(dump.stderr).toBe('');
    expect(dump.status).toBe(0);
    expect((await reads).every((r) => r.status === 200)).toBe(true);
    const source = await tableCounts(svc.databaseUrl!);

    restored = await createTestDatabase();
    const restore = spawnSync('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', restored.url!, file], { encoding: 'utf8' });
    expect(restore.stderr).toBe('');
    expect(restore.status).toBe(0);
    // Every request writes an audit row and a request count, after the dump too: those may only have grown since.
    const moving = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).filter(([t]) => !MOVING.includes(t)));
    const copy = await tableCounts(restored.url!);
    expect(moving(copy)).toEqual(moving(source));
    for (const t of MOVING) expect(copy[t]).toBeGreaterThan(0);
    for (const t of MOVING) expect(copy[t]).toBeLessThanOrEqual(source[t]!);
    expect(copy['public.deployments']).toBeGreaterThanOrEqual(2);
    // The restored database is at the current schema: migrating it changes nothing.
    await restored.database.migrate();
    expect(await tableCounts(restored.url!)).toEqual(copy);
    const [approval] = await restored.database.db.select({ status: approvals.status }).from(approvals).where(eq(approvals.id, approvalId));
    expect(approval?.status).toBe('pending');
  }, 120_000);
});
