import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import pg from 'pg';
import { inArray, sql } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { openDatabase, type Database } from '../db/client';
import { approvals, deployments } from '../db/schema';
import { SecretBox } from '../config/secret-box';
import { openSiemAdapters } from '../siem/adapters';
import { ensureBootstrap } from '../domain/tenants/tenant-service';
import { startApi } from '../api/server';
import { connectClient, ensureSearchAttributes } from '../worker/temporal-client';
import { createWorker } from '../worker/create-worker';
import { installTemporalRuntime } from '../worker/temporal-runtime';
import { resolveTemporalCli } from '../worker/temporal-cli';
import { startTemporalDevServer } from '../worker/temporal-dev-server';
import { workflowIds } from '../workflows/contracts';
import { Notify } from '../workflows/notify';
import { printTable } from './support';

/**
 * Deployments end to end, through the whole service as `npm start` wires it (Temporal dev server,
 * worker, API over loopback HTTP, PGlite — or PostgreSQL with DATABASE_URL), with real tokens: a CI
 * token that requests and a reviewer token that decides (self-approval is refused).
 *
 * 1. deploy without approval: POST /rules/deploy → GET says `active` (polled every 20 ms), each a
 *    new version of one rule (the usual CI path: impact with the live version, supersede, swap the
 *    detection schedule); sequential, then in groups of concurrent deploys.
 * 2. approval: the decision POST answering → the deployment `active`.
 * 3. BENCH_BULK (500) deploys of distinct rules waiting for approval at once, all approved
 *    (bounded concurrency), all must end `active` with no error.
 * Baseline in the same run: the bare Temporal round trip of the smallest workflow we have (Notify
 * for a tenant without a webhook: start, one activity, result), and per-step times read from the
 * measured runs' histories to show where the time goes. Targets: p50 ≤ 1 s end to end,
 * decision-to-active p50 ≤ 500 ms. Nothing here is asserted.
 */
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 30);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 10);
const CONCURRENT_ROUNDS = Number(process.env.BENCH_CONCURRENT_ROUNDS ?? 3);
const APPROVALS = Number(process.env.BENCH_APPROVALS ?? 30);
const BULK = Number(process.env.BENCH_BULK ?? 500);
const BULK_DECIDE_CONCURRENCY = Number(process.env.BENCH_DECIDE_CONCURRENCY ?? 50);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const POLL_MS = 20;
const TASK_QUEUE = 'bench-deploy';

const uuid = () => crypto.randomUUID();
/** Progress on stderr, so a long run shows where it is without mixing into the figures. */
const progress = (m: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const now = () => performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ruleText(id: string, title: string, image: string): string {
  return `title: ${title}\nid: ${id}\nstatus: test\nlevel: high\nlogsource:\n  category: process_creation\n  product: windows\ndetection:\n  selection:\n    Image|endswith: '\\\\${image}'\n  condition: selection\n`;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
const ms = (v: number) => (Number.isFinite(v) ? Math.round(v) : '-');
function stats(name: string, values: number[], target = '') {
  return { measure: name, n: values.length, 'p50 ms': ms(percentile(values, 50)), 'p99 ms': ms(percentile(values, 99)), 'max ms': ms(Math.max(...values)), target };
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });
}

type Api = { url: string; call(method: string, p: string, token: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }> };

function apiClient(url: string): Api {
  return {
    url,
    async call(method, p, token, body, headers = {}) {
      const init: RequestInit = { method, headers: { authorization: `Bearer ${token}`, ...headers } };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${url}/api/v1${p}`, init);
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      return { status: res.status, body: parsed };
    },
  };
}

async function must(res: Promise<{ status: number; body: any }>, ok: number[], what: string) {
  const r = await res;
  if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/**
 * Reads GET /deployments/{id} until it says `status`; the time it first did (performance.now()).
 * One waiter polls every 20 ms; many at once long-poll (`?wait=`, the server re-reads every 100 ms)
 * instead, since 20 ms polls from each of them would load the API more than the deploys do.
 */
async function waitStatus(api: Api, token: string, id: string, status: string, longPoll = false, timeoutMs = 120_000): Promise<number> {
  const deadline = now() + timeoutMs;
  for (;;) {
    const r = await api.call('GET', `/deployments/${id}${longPoll ? '?wait=30' : ''}`, token);
    if (r.body?.status === status) return now();
    if (r.status !== 200 || ['failed', 'rejected', 'expired', 'changes_requested'].includes(r.body?.status))
      throw new Error(`deployment ${id}: ${r.status} ${JSON.stringify(r.body)}`);
    if (now() > deadline) throw new Error(`deployment ${id} not ${status} after ${timeoutMs} ms (${r.body?.status})`);
    if (!longPoll) await sleep(POLL_MS);
  }
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const tsMs = (t: HistoryEvent['eventTime']) => Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

/**
 * Where a run's time goes, from its history: per activity type, scheduled → completed (queueing +
 * execution); the workflow's own tasks; and from the run's start to the activation completing.
 */
async function profileRun(client: Client, workflowId: string): Promise<Record<string, number>> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const start = tsMs(events[0]!.eventTime);
  const byId = new Map(events.map((e) => [String(e.eventId), e]));
  const out: Record<string, number> = {};
  let wft = 0;
  for (const e of events) {
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const scheduled = byId.get(String(done.scheduledEventId))!;
      const name = scheduled.activityTaskScheduledEventAttributes!.activityType!.name!;
      out[name] = (out[name] ?? 0) + tsMs(e.eventTime) - tsMs(scheduled.eventTime);
      if (name === 'activateDeployment') out['start → activated'] = tsMs(e.eventTime) - start;
    }
    const wftDone = e.workflowTaskCompletedEventAttributes;
    if (wftDone) wft += tsMs(e.eventTime) - tsMs(byId.get(String(wftDone.scheduledEventId))!.eventTime);
  }
  out['workflow tasks'] = wft;
  out['start → closed'] = tsMs(events.at(-1)!.eventTime) - start;
  return out;
}

function profileTable(profiles: Array<Record<string, number>>) {
  const keys = [...new Set(profiles.flatMap((p) => Object.keys(p)))];
  return keys.map((k) => {
    const vals = profiles.map((p) => p[k]).filter((v): v is number => v !== undefined);
    return { step: k, n: vals.length, 'p50 ms': ms(percentile(vals, 50)), 'p99 ms': ms(percentile(vals, 99)) };
  });
}

async function openBenchDatabase(): Promise<{ database: Database; label: string; drop(): Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-deploy-'));
    const database = await openDatabase({ kind: 'pglite', dataDir: dir });
    return { database, label: 'PGlite (file)', drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  // A database of its own on that server, dropped afterwards, so runs never see each other's rows.
  const name = `detflow_bench_deploy_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const own = new URL(url);
  own.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: own.toString(), poolSize: 20 });
  return {
    database,
    label: 'PostgreSQL',
    drop: async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

async function main() {
  const started = now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-deploy-temporal-'));
  const devServer = process.env.TEMPORAL_ADDRESS
    ? undefined
    : await startTemporalDevServer({
        cliPath: resolveTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH }),
        port: await freePort(),
        uiPort: 0,
        dbFile: undefined,
        namespace: 'default',
        headless: true,
        logFile: path.join(dir, 'temporal.log'),
      });
  const address = process.env.TEMPORAL_ADDRESS ?? devServer!.address;
  const stops: Array<() => Promise<void>> = [];
  if (devServer) stops.push(() => devServer.stop());
  try {
    // Logs are part of the stack; they go to /dev/null instead of a terminal.
    const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
    installTemporalRuntime(logger);
    const { database, label, drop } = await openBenchDatabase();
    stops.push(drop, () => database.close());
    await database.migrate();
    // The unlimited tier: rate and resource limits are not what this measures.
    const admin = (await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined }))!;
    const siemDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-deploy-siem-'));
    const siem = await openSiemAdapters({ dataDir: siemDir });
    stops.push(
      async () => fs.rmSync(siemDir, { recursive: true, force: true }),
      () => siem.close(),
    );
    const client = await connectClient(address, 'default');
    stops.push(() => client.connection.close());
    if (!devServer) await ensureSearchAttributes(client, 'default');
    const secrets = SecretBox.fromPassphrase('bench');
    const { worker, connection } = await createWorker({ address, namespace: 'default', taskQueue: TASK_QUEUE, db: database.db, logger, secrets, siem, client });
    const workerRun = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await workerRun;
      await connection.close();
    });
    const server = await startApi(
      {
        config: { bodyLimit: '5mb', publicUrl: undefined, ingestLimitBytes: 256 * 1024 * 1024 },
        database,
        logger,
        secrets,
        siem,
        temporal: { client, namespace: 'default', taskQueue: TASK_QUEUE, uiUrl: undefined },
      },
      '127.0.0.1',
      0,
    );
    stops.push(() => server.close());
    // Schedules outlive the run on a shared Temporal server: remove every detection schedule made.
    stops.push(async () => {
      const rows = await database.db.select({ id: deployments.id, tenantId: deployments.tenantId }).from(deployments);
      await mapLimit(rows, 20, (d) =>
        client.schedule
          .getHandle(workflowIds.detectionSchedule(d.tenantId, d.id))
          .delete()
          .catch(() => undefined),
      );
    });
    const api = apiClient(server.url);

    const requester = (
      await must(api.call('POST', '/settings/api-keys', admin, { name: 'ci', permissions: ['deploy', 'rules:read', 'rules:write'] }), [201], 'requester token')
    ).token as string;
    const reviewer = (await must(api.call('POST', '/settings/api-keys', admin, { name: 'reviewer', permissions: ['approve', 'rules:read'] }), [201], 'reviewer token'))
      .token as string;
    // Detection runs every hour instead of every 5 minutes: scheduled detection is not measured here,
    // and 500 schedules firing together in the middle of a phase would blur its figures.
    const local = await must(api.call('GET', '/settings/targets/local', admin), [200], 'local target');
    await must(
      api.call('PUT', '/settings/targets/local', admin, {
        name: local.name,
        kind: local.kind,
        environment: local.environment,
        connection: local.connection,
        detection_interval: 'PT1H',
        cost_model: local.cost_model,
      }),
      [200],
      'local target update',
    );
    // A week of events, so every impact summary replays real data (1 in 50 matches a bench rule).
    const day = 86_400_000;
    const lines: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      lines.push(
        JSON.stringify({
          '@timestamp': new Date(Date.now() - ((i * 7919) % (7 * day)) - 60_000).toISOString(),
          Image: i % 50 === 0 ? `C:\\w\\bench-${i % 7}.exe` : `C:\\w\\tool-${i % 997}.exe`,
          CommandLine: `tool --run ${i}`,
          User: `u${i % 37}`,
          Computer: `host-${i % 211}`,
        }),
      );
    }
    await must(
      api.call('POST', '/events?product=windows&category=process_creation', admin, lines.join('\n'), { 'content-type': 'application/x-ndjson' }),
      [200, 201, 202],
      'ingest',
    );

    const header = `bench:deploy — ${label}, Temporal ${devServer ? 'dev server (in memory)' : address}, ${EVENTS} events in the local store, ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`;
    process.stdout.write(header);

    progress('baseline');
    // Baseline: the bare Temporal round trip, with the smallest workflow the worker has.
    const roundTrips: number[] = [];
    for (let i = 0; i < 5 + SEQUENTIAL; i++) {
      const t0 = now();
      await client.workflow.execute(Notify, {
        workflowId: `bench/notify/${uuid()}`,
        taskQueue: TASK_QUEUE,
        args: [{ tenantId: 'default', event: 'webhook.test', sourceKey: uuid(), data: {} }],
      });
      if (i >= 5) roundTrips.push(now() - t0);
    }

    progress('deploys without approval');
    // 1. Deploy without approval, each a new version of one rule.
    const upgradeRule = uuid();
    let revision = 0;
    const newVersion = async () => {
      revision++;
      await must(api.call('POST', '/rules', requester, { rule: ruleText(upgradeRule, `Bench upgrade r${revision}`, `bench-${revision % 7}.exe`) }), [201], 'new version');
    };
    const deployOnce = async (ruleId: string, longPoll = false) => {
      const t0 = now();
      const res = await must(api.call('POST', '/rules/deploy', requester, { rule_id: ruleId, target: 'local', approval_required: false }), [202], 'deploy');
      const answered = now();
      const active = await waitStatus(api, requester, res.id, 'active', longPoll);
      return { id: res.id as string, workflowId: res.workflow_id as string, post: answered - t0, total: active - t0 };
    };
    for (let i = 0; i < 3; i++) {
      await newVersion();
      await deployOnce(upgradeRule); // warm-up: first bundles, prepared statements, connections
    }
    const sequential: Array<Awaited<ReturnType<typeof deployOnce>>> = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      await newVersion();
      sequential.push(await deployOnce(upgradeRule));
    }
    const concurrent: Array<Awaited<ReturnType<typeof deployOnce>>> = [];
    for (let round = 0; round < CONCURRENT_ROUNDS; round++) {
      const ids = Array.from({ length: CONCURRENT }, () => uuid());
      await mapLimit(ids, 10, (id, i) =>
        must(api.call('POST', '/rules', requester, { rule: ruleText(id, `Bench concurrent ${round}.${i}`, `bench-${i % 7}.exe`) }), [201], 'rule'),
      );
      concurrent.push(...(await Promise.all(ids.map((id) => deployOnce(id, true)))));
    }

    progress('approvals');
    // 2. Approval: decision answered → active.
    const approvalRule = uuid();
    const approvalRuns: Array<{ decision: number; toActive: number; workflowId: string }> = [];
    for (let i = 0; i < APPROVALS + 2; i++) {
      await must(api.call('POST', '/rules', requester, { rule: ruleText(approvalRule, `Bench approval r${i}`, `bench-${i % 7}.exe`) }), [201], 'rule');
      const res = await must(api.call('POST', '/rules/deploy', requester, { rule_id: approvalRule, target: 'local', approval_required: true }), [202], 'deploy with approval');
      const approvalId = String(res.links.approval).split('/').at(-1)!;
      // A reviewer decides on the impact summary: wait until it is there.
      for (let n = 0; ; n++) {
        const a = await must(api.call('GET', `/approvals/${approvalId}`, reviewer), [200], 'approval');
        if (a.impact) break;
        if (n > 3000) throw new Error(`approval ${approvalId} has no impact after 60 s`);
        await sleep(POLL_MS);
      }
      const t0 = now();
      await must(api.call('POST', `/approvals/${approvalId}/decision`, reviewer, { decision: 'approve', comment: 'bench' }), [200], 'decision');
      const answered = now();
      const active = await waitStatus(api, requester, res.id, 'active');
      if (i >= 2) approvalRuns.push({ decision: answered - t0, toActive: active - answered, workflowId: res.workflow_id });
    }

    // 3. BULK deploys of distinct rules waiting for approval at once, then all approved.
    const bulkRules = Array.from({ length: BULK }, () => uuid());
    await mapLimit(bulkRules, 20, (id, i) => must(api.call('POST', '/rules', requester, { rule: ruleText(id, `Bench bulk ${i}`, `bench-${i % 7}.exe`) }), [201], 'rule'));
    let httpErrors = 0;
    const errorSamples: string[] = [];
    const noteError = (what: string) => {
      httpErrors++;
      if (errorSamples.length < 5) errorSamples.push(what);
    };
    progress(`bulk: submitting ${BULK}`);
    const b0 = now();
    const submitted = (
      await Promise.all(
        bulkRules.map(async (ruleId) => {
          const r = await api
            .call('POST', '/rules/deploy', requester, { rule_id: ruleId, target: 'local', approval_required: true })
            .catch((err: Error) => ({ status: 0, body: err.message }));
          if (r.status !== 202) return noteError(`deploy ${r.status} ${JSON.stringify(r.body)}`);
          return { id: r.body.id as string, approvalId: String(r.body.links.approval).split('/').at(-1)! };
        }),
      )
    ).filter((s): s is { id: string; approvalId: string } => s !== undefined);
    const submittedAt = now();
    const approvalIds = submitted.map((s) => s.approvalId);
    const deploymentIds = submitted.map((s) => s.id);
    // Waiting for approval = pending with its impact summary (what a reviewer decides on).
    for (;;) {
      const [row] = await database.db
        .select({ n: sql<number>`count(*)::int` })
        .from(approvals)
        .where(sql`${inArray(approvals.id, approvalIds)} and ${approvals.status} = 'pending' and ${approvals.impact} is not null`);
      if (Number(row!.n) === approvalIds.length) break;
      if (now() - submittedAt > 600_000) throw new Error(`only ${row!.n} of ${approvalIds.length} approvals pending with an impact after 10 min`);
      await sleep(250);
    }
    const pendingAt = now();
    progress(`bulk: all pending, approving`);
    const decisionAnswered = new Map<string, number>();
    await mapLimit(submitted, BULK_DECIDE_CONCURRENCY, async (s) => {
      const r = await api.call('POST', `/approvals/${s.approvalId}/decision`, reviewer, { decision: 'approve' }).catch((err: Error) => ({ status: 0, body: err.message }));
      if (r.status !== 200) noteError(`decision ${r.status} ${JSON.stringify(r.body)}`);
      else decisionAnswered.set(s.id, Date.now());
    });
    const approvedAt = now();
    progress(`bulk: approved, waiting for active`);
    let counts: Record<string, number> = {};
    for (;;) {
      await sleep(250);
      const rows = await database.db
        .select({ status: deployments.status, n: sql<number>`count(*)::int` })
        .from(deployments)
        .where(inArray(deployments.id, deploymentIds))
        .groupBy(deployments.status);
      counts = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
      const settled = (counts.active ?? 0) + (counts.failed ?? 0);
      if (settled === deploymentIds.length) break;
      if (Math.round(now() - approvedAt) % 5000 < 250) progress(`bulk: ${JSON.stringify(counts)}`);
      if (now() - approvedAt > 600_000) break;
    }
    const allActiveAt = now();
    // The API says the same for every one of them.
    const viewed = await mapLimit(deploymentIds, 20, async (id) => (await api.call('GET', `/deployments/${id}`, requester)).body?.status as string);
    const activeViaApi = viewed.filter((s) => s === 'active').length;
    // Decision → active per deployment, from the server's own clock (decided_at / activated_at).
    const bulkRows = await database.db
      .select({ id: deployments.id, activatedAt: deployments.activatedAt, decidedAt: approvals.decidedAt })
      .from(deployments)
      .innerJoin(approvals, sql`${approvals.workflowId} = ${deployments.workflowId}`)
      .where(inArray(deployments.id, deploymentIds));
    const bulkDecisionToActive = bulkRows.filter((r) => r.activatedAt && r.decidedAt).map((r) => r.activatedAt!.getTime() - r.decidedAt!.getTime());
    const bulkAnsweredToActive = bulkRows.filter((r) => r.activatedAt && decisionAnswered.has(r.id)).map((r) => r.activatedAt!.getTime() - decisionAnswered.get(r.id)!);

    // Retried activities in the bulk runs (a heartbeat or start-to-close timeout on a starved worker
    // shows up here): the attempt of each activity's last start, from the histories.
    const bulkWorkflowIds = (await database.db.select({ w: deployments.workflowId }).from(deployments).where(inArray(deployments.id, deploymentIds))).map((r) => r.w);
    const retried: Record<string, number> = {};
    await mapLimit(bulkWorkflowIds, 10, async (workflowId) => {
      const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const byId = new Map(events.map((e) => [String(e.eventId), e]));
      for (const e of events) {
        const st = e.activityTaskStartedEventAttributes;
        if (st && (st.attempt ?? 1) > 1) {
          const name = byId.get(String(st.scheduledEventId))?.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
          retried[name] = (retried[name] ?? 0) + 1;
        }
      }
    });

    // The same end to end on the server's clock: the deployment row created → activated.
    const serverE2e = async (ids: string[]) =>
      (await database.db.select({ c: deployments.createdAt, a: deployments.activatedAt }).from(deployments).where(inArray(deployments.id, ids)))
        .filter((r) => r.a)
        .map((r) => r.a!.getTime() - r.c.getTime());
    const sequentialServer = await serverE2e(sequential.map((x) => x.id));
    const concurrentServer = await serverE2e(concurrent.map((x) => x.id));

    // Where the time goes, from the histories of the sequential and approval runs.
    const profiles = await mapLimit(sequential, 5, (s) => profileRun(client, s.workflowId));
    const approvalProfiles = await mapLimit(approvalRuns, 5, (s) => profileRun(client, s.workflowId));

    process.stdout.write('\nlatency (client clock: request sent → GET /deployments/{id} reads active, polled every 20 ms)\n');
    printTable([
      stats('baseline: Temporal round trip (Notify, 1 activity)', roundTrips),
      stats(
        'deploy, no approval: POST answered',
        sequential.map((s) => s.post),
      ),
      stats(
        'deploy, no approval: end to end (sequential)',
        sequential.map((s) => s.total),
        'p50 ≤ 1000',
      ),
      stats('  same, server clock (row created → activated)', sequentialServer),
      stats(
        `deploy, no approval: end to end (${CONCURRENT} at once, long-poll)`,
        concurrent.map((s) => s.total),
        'p50 ≤ 1000',
      ),
      stats('  same, server clock (row created → activated)', concurrentServer),
      stats(
        'approval: decision POST answered',
        approvalRuns.map((a) => a.decision),
      ),
      stats(
        'approval: decision answered → active',
        approvalRuns.map((a) => a.toActive),
        'p50 ≤ 500',
      ),
      stats(`bulk ${BULK}: decision answered → active (server)`, bulkAnsweredToActive),
      stats(`bulk ${BULK}: decision recorded → active (server)`, bulkDecisionToActive),
    ]);
    process.stdout.write(`\n${BULK} concurrent deploys waiting for approval, then approved (${BULK_DECIDE_CONCURRENCY} decisions at a time)\n`);
    const s = (a: number, b: number) => ((b - a) / 1000).toFixed(1);
    printTable([
      {
        submitted: submitted.length,
        'submit s': s(b0, submittedAt),
        'all pending s': s(submittedAt, pendingAt),
        'approve s': s(pendingAt, approvedAt),
        'approved → all active s': s(approvedAt, allActiveAt),
        'total s': s(b0, allActiveAt),
        active: counts.active ?? 0,
        'active (API)': activeViaApi,
        failed: counts.failed ?? 0,
        'http errors': httpErrors,
        'deploys/s after approval': ((counts.active ?? 0) / ((allActiveAt - pendingAt) / 1000)).toFixed(1),
      },
    ]);
    process.stdout.write(`activities retried in the bulk runs: ${Object.keys(retried).length ? JSON.stringify(retried) : 'none'}\n`);
    if (errorSamples.length) process.stdout.write(`errors (first ${errorSamples.length}): ${errorSamples.join(' | ')}\n`);
    process.stdout.write('\nwhere a deploy without approval spends its time (from the run histories; activity = scheduled → completed)\n');
    printTable(profileTable(profiles));
    process.stdout.write('\nwhere an approved deploy spends its time\n');
    printTable(profileTable(approvalProfiles));
    process.stdout.write(`\n(total bench time ${((now() - started) / 1000).toFixed(0)} s)\n`);
  } finally {
    for (const stop of stops.reverse()) {
      try {
        await stop();
      } catch (err) {
        process.stderr.write(`cleanup: ${(err as Error).message}\n`);
      }
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
