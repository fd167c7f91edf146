import crypto from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import pino from 'pino';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import { deployments, targets } from '../../db/schema';
import { workflowIds } from '../../workflows/contracts';
import { openDatabase, type Database } from '../../db/client';
import { ensureBootstrap } from '../../domain/tenants/tenant-service';
import type { Actor } from '../../domain/tenants/actor';
import { startApi, type RunningApi } from '../../api/server';
import { connectClient } from '../../worker/temporal-client';
import { createWorker } from '../../worker/create-worker';
import { installTemporalRuntime } from '../../worker/temporal-runtime';
import { SecretBox } from '../../config/secret-box';
import type { AppConfig } from '../../config/env';
import { openSiemAdapters, type SiemAdapters } from '../../siem/adapters';
import { createServiceMetrics } from '../../lib/metrics/service-metrics';

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function testDbKind(): 'pglite' | 'postgres' {
  return process.env.DETFLOW_TEST_DB === 'postgres' ? 'postgres' : 'pglite';
}

/** A fresh, empty database of the kind this test project runs on; dropped by `drop`. */
export async function createTestDatabase(): Promise<{ database: Database; url: string | undefined; drop(): Promise<void> }> {
  if (testDbKind() === 'pglite') {
    const database = await openDatabase({ kind: 'pglite', dataDir: undefined });
    return { database, url: undefined, drop: () => database.close() };
  }
  const name = `detflow_t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 10 });
  return {
    database,
    url: url.toString(),
    drop: async () => {
      await database.close();
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export type TestService = {
  url: string;
  api: RunningApi;
  token: string;
  database: Database;
  client: Client;
  taskQueue: string;
  databaseUrl: string | undefined;
  siem: SiemAdapters;
  /** Stops the worker (as a crash would, mid-work) and starts a new one on the same task queue. */
  restartWorker(): Promise<void>;
  /** Stops the worker: runs make no progress (their records stay as they are) until `startWorker`. */
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  /**
   * Kills the worker as a crash would and starts a new one on the same task queue. The old worker
   * takes no task from then on, and work the test holds in it (e.g. an adapter call waiting on the
   * test) is abandoned: nothing of it reaches the server, which must notice by a timeout and hand it
   * to the new worker. Work nobody holds still finishes, as in `restartWorker`. The test lets held
   * work go before `close`, which drains the abandoned workers.
   */
  crashWorker(): Promise<void>;
  /**
   * Stops the API as a restart of the service does: it stops listening at once, and requests still
   * open (a long-poll) are cut when the 5 s drain runs out. `apiUp` starts it again.
   */
  apiDown(): Promise<void>;
  /** Starts the API again on the port it had, with the same database, worker and Temporal client. */
  apiUp(): Promise<void>;
  /** Sends a request to the API; the body is sent as JSON unless it is a string or bytes. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
};

export type RequestOptions = {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  /** A loopback address to send from (127.0.0.0/8), to appear as another client. */
  localAddress?: string;
};
export type TestResponse = { status: number; headers: Headers; body: any; text: string };

export async function request(baseUrl: string, method: string, path: string, options: RequestOptions & { defaultToken?: string } = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? options.defaultToken : options.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | Uint8Array | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' || options.body instanceof Uint8Array ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  if (options.localAddress) return requestFrom(options.localAddress, `${baseUrl}${path}`, method, headers, body);
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

function requestFrom(localAddress: string, url: string, method: string, headers: Record<string, string>, body: string | Uint8Array | undefined): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode!, headers: h, body: parsed, text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The whole service on real parts: a fresh database, a worker on its own task queue of the shared
 * Temporal dev server, and the API on a loopback port.
 */
export async function startTestService(
  options: {
    now?: () => Date;
    apiLogger?: pino.Logger;
    metricsToken?: string;
    config?: Partial<Pick<AppConfig, 'maxEventBytes' | 'bodyTimeoutSeconds'>>;
    webhookRetry?: AppConfig['webhookRetry'];
    /** The local event store's limits (the service's defaults otherwise). */
    eventStore?: { maxPendingBatches?: number };
    /** Scheduled detection's design: the service's default (`per-target`) unless a test names the other. */
    detectionSchedules?: AppConfig['detectionSchedules'];
  } = {},
): Promise<TestService> {
  const address = process.env.TEMPORAL_ADDRESS;
  const bundlePath = process.env.DETFLOW_TEST_WORKFLOW_BUNDLE;
  if (!address || !bundlePath) throw new Error('The Temporal test server is not running: run through jest (global setup)');
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  installTestRuntimeLogging(logger);
  const { database, url: databaseUrl, drop } = await createTestDatabase();
  await database.migrate();
  const token = (await ensureBootstrap(database.db, { tier: 'enterprise', token: undefined }))!;
  const taskQueue = `test-${crypto.randomUUID()}`;
  const secrets = SecretBox.fromPassphrase(`test-${taskQueue}`);
  const siem = await openSiemAdapters({ dataDir: undefined, openSecret: (sealed) => secrets.open(sealed), ...(options.eventStore ? { eventStore: options.eventStore } : {}) });
  const client = await connectClient(address, 'default');
  // One registry for the service, as in `npm start`: the worker and the API count into it.
  const metrics = createServiceMetrics();
  let worker: Worker | undefined;
  let connection: NativeConnection | undefined;
  let workerRun: Promise<void> | undefined;
  /** A worker on this service's task queue, running. */
  const startWorker = async () => {
    ({ worker, connection } = await createWorker({
      address,
      namespace: 'default',
      taskQueue,
      db: database.db,
      logger,
      secrets,
      siem,
      client,
      metrics,
      ...(options.webhookRetry ? { webhookRetry: options.webhookRetry } : {}),
      detectionSchedules: options.detectionSchedules ?? (process.env.DETFLOW_TEST_DETECTION_SCHEDULES as AppConfig['detectionSchedules'] | undefined) ?? 'per-target',
      workflowBundle: { codePath: bundlePath },
    }));
    workerRun = worker.run();
  };
  await startWorker();
  const stopWorker = async () => {
    worker?.shutdown();
    await workerRun;
    await connection?.close();
    worker = undefined;
    workerRun = undefined;
    connection = undefined;
  };
  const abandoned: Array<{ run: Promise<void>; connection: NativeConnection }> = [];
  const apiDeps = {
    config: { bodyLimit: '5mb', publicUrl: undefined, ingestLimitBytes: 8 * 1024 * 1024, metricsToken: options.metricsToken, ...options.config },
    database,
    logger: options.apiLogger ?? logger,
    secrets,
    siem,
    temporal: { client, namespace: 'default', taskQueue, uiUrl: 'http://127.0.0.1:8233' },
    metrics,
    ...(options.now ? { now: options.now } : {}),
  };
  let api = await startApi(apiDeps, '127.0.0.1', 0);
  const port = Number(new URL(api.url).port);
  return {
    url: api.url,
    get api() {
      return api;
    },
    token,
    database,
    client,
    taskQueue,
    databaseUrl,
    siem,
    request: (method, path, opts = {}) => request(api.url, method, path, { ...opts, defaultToken: token }),
    restartWorker: async () => {
      await stopWorker();
      await startWorker();
    },
    stopWorker,
    startWorker,
    crashWorker: async () => {
      // Shutting down stops polling at once; what the worker still runs is not awaited here, so a
      // held activity neither completes nor heartbeats (withHeartbeat in activities/deployments.ts
      // stops on the cancellation a shutdown sends), as if its process had died.
      abandoned.push({ run: workerRun!, connection: connection! });
      worker!.shutdown();
      await startWorker();
    },
    apiDown: () => api.close(),
    apiUp: async () => {
      api = await startApi(apiDeps, '127.0.0.1', port);
    },
    close: async () => {
      await api.close();
      // Schedules outlive workers: remove this service's, so they do not fire into an empty queue.
      const rows = await database.db.select({ id: deployments.id, tenantId: deployments.tenantId, targetId: deployments.targetId }).from(deployments);
      const scheduleIds = new Set(rows.flatMap((d) => [workflowIds.detectionSchedule(d.tenantId, d.id), workflowIds.detectionBatchSchedule(d.tenantId, d.targetId)]));
      for (const id of scheduleIds) {
        await client.schedule
          .getHandle(id)
          .delete()
          .catch((err: unknown) => {
            if (!(err instanceof ScheduleNotFoundError)) throw err;
          });
      }
      worker?.shutdown();
      await workerRun;
      await connection?.close();
      for (const dead of abandoned) {
        // Bounded: a test that failed before letting its held work go must not hang the suite.
        let timer: NodeJS.Timeout | undefined;
        const drained = await Promise.race([
          dead.run.then(
            () => true,
            () => true,
          ),
          new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 10_000))),
        ]);
        clearTimeout(timer);
        if (drained) await dead.connection.close();
      }
      await client.connection.close();
      await drop();
      await siem.close();
    },
  };
}

/** Creates a tenant through the operator API and returns its admin token. */
export async function createTenant(svc: TestService, id: string, tier = 'enterprise', environments = ['dev', 'staging', 'prod']): Promise<string> {
  const res = await svc.request('POST', '/api/v1/settings/tenants', { body: { id, name: id, tier, environments } });
  if (res.status !== 201) throw new Error(`creating tenant ${id} failed: ${res.status} ${res.text}`);
  return res.body.admin_token.token as string;
}

export async function createApiKey(svc: TestService, adminToken: string, body: Record<string, unknown>): Promise<{ id: string; token: string }> {
  const res = await svc.request('POST', '/api/v1/settings/api-keys', { token: adminToken, body });
  if (res.status !== 201) throw new Error(`creating api key failed: ${res.status} ${res.text}`);
  return { id: res.body.id, token: res.body.token };
}

/** The key a CI pipeline works with: it stores rules and requests deployments, but approves none. */
export function createCiKey(svc: TestService): Promise<{ id: string; token: string }> {
  return createApiKey(svc, svc.token, { name: 'ci', permissions: ['deploy', 'rules:read', 'rules:write'], principal: 'ci' });
}

/** The key of a reviewer: it approves or rejects what others requested, and deploys nothing itself. */
export function createReviewerKey(svc: TestService): Promise<{ id: string; token: string }> {
  return createApiKey(svc, svc.token, { name: 'reviewer', permissions: ['approve', 'rules:read'], principal: 'reviewer' });
}

/** What a test may change in the rule `processRule` writes; each part left out is as shown. */
export type RuleParts = {
  /** 'Suspicious process' */
  title?: string;
  /** 'test' */
  status?: string;
  /** 'high' */
  level?: string;
  /** none */
  tags?: string[];
  /** 'process_creation' */
  category?: string;
  /** 'windows' */
  product?: string;
  /** What `Image|endswith` matches, as it stands between the quotes: '\\evil.exe' (one backslash). */
  image?: string;
};

/** A Sigma rule with one selection on the process image, as YAML text ending in a newline. */
export function processRule(id: string, parts: RuleParts = {}): string {
  return [
    `title: ${parts.title ?? 'Suspicious process'}`,
    `id: ${id}`,
    `status: ${parts.status ?? 'test'}`,
    `level: ${parts.level ?? 'high'}`,
    ...(parts.tags ? ['tags:', ...parts.tags.map((t) => `  - ${t}`)] : []),
    'logsource:',
    `  category: ${parts.category ?? 'process_creation'}`,
    `  product: ${parts.product ?? 'windows'}`,
    'detection:',
    '  selection:',
    `    Image|endswith: '${parts.image ?? '\\evil.exe'}'`,
    '  condition: selection',
    '',
  ].join('\n');
}

/** `processRule` matching `\evil.exe`, with `extra` after it. */
export function sigmaRule(id: string, title = 'Suspicious process', extra = ''): string {
  return processRule(id, { title }) + extra;
}

/** A process-creation rule matching one image name; `revision` changes its text for a new version. */
export function imageRule(id: string, image: string, revision = 1): string {
  return processRule(id, { title: `Detect ${image} (revision ${revision})`, image: `\\${image}` });
}

/**
 * Stores (it has an id and a title) but lints with errors: an unknown modifier at 9:5 and, at 10:28,
 * a condition naming a selection that is not there.
 */
export function lintBrokenRule(id: string, title = 'Broken'): string {
  return `title: ${title}
id: ${id}
status: test
level: high
logsource:
  product: windows
detection:
  selection:
    Image|endswithh: 'x.exe'
  condition: selection and filter
`;
}

let runtimeInstalled = false;
/** The SDK runtime can be installed once per module registry, that is once per test file. */
function installTestRuntimeLogging(logger: pino.Logger) {
  if (runtimeInstalled) return;
  installTemporalRuntime(logger);
  runtimeInstalled = true;
}

/**
 * Polls `fn` until it returns something other than undefined; fails naming `what` after `seconds`.
 * With `retryErrors`, an attempt that throws counts as "not yet" (a service restarting refuses connections).
 */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, seconds = 30, options: { retryErrors?: boolean } = {}): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = options.retryErrors ? await fn().catch(() => undefined) : await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Pauses a schedule and waits for every run it had started to end. Interval schedules fire on the
 * wall clock's marks (a five-minute one at :00, :05, ...), so a pass may start in the middle of any
 * test; a test that counts runs, alerts or notifications pauses first, then counts only its own.
 */
export async function pauseSchedule(client: Client, scheduleId: string, reason: string): Promise<void> {
  const handle = client.schedule.getHandle(scheduleId);
  await handle.pause(reason);
  // Described after the pause (a signal the schedule handles first): what it started before is listed.
  const { info } = await handle.describe();
  const started = [...info.runningActions, ...info.recentActions.map((a) => a.action)];
  for (const { workflow } of started) {
    // Its outcome is not the test's business, only that it is over: a failed pass is over too.
    await client.workflow
      .getHandle(workflow.workflowId, workflow.firstExecutionRunId)
      .result()
      .catch(() => undefined);
  }
}

/**
 * Pauses the scheduled detection of the default tenant's built-in `local` target (see pauseSchedule):
 * its batched schedule, or each deployment's under DETFLOW_TEST_DETECTION_SCHEDULES=per-deployment.
 */
export async function pauseLocalDetection(svc: TestService, reason: string): Promise<void> {
  const [local] = await svc.database.db
    .select({ id: targets.id })
    .from(targets)
    .where(and(eq(targets.tenantId, 'default'), eq(targets.name, 'local')));
  const live = await svc.database.db.select({ id: deployments.id }).from(deployments).where(eq(deployments.targetId, local!.id));
  const ids = [workflowIds.detectionBatchSchedule('default', local!.id), ...live.map((d) => workflowIds.detectionSchedule('default', d.id))];
  for (const id of ids) {
    try {
      await pauseSchedule(svc.client, id, reason);
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }
}

/** Scheduled detection on the built-in local target every second, so alerts come within seconds. */
export async function detectEverySecond(svc: TestService): Promise<void> {
  const local = (await svc.request('GET', '/api/v1/settings/targets/local')).body;
  const target = {
    name: local.name,
    kind: local.kind,
    environment: local.environment,
    connection: local.connection,
    cost_model: local.cost_model,
    detection_interval: 'PT1S',
  };
  const put = await svc.request('PUT', '/api/v1/settings/targets/local', { body: target });
  if (put.status !== 200) throw new Error(`setting the detection interval failed: ${put.status} ${put.text}`);
}

/** Sets the built-in `local` target's cost model through the settings API, keeping its other settings; answers the PUT. */
export async function setLocalCostModel(svc: TestService, costModel: Record<string, unknown>) {
  const local = (await svc.request('GET', '/api/v1/settings/targets/local')).body;
  return svc.request('PUT', '/api/v1/settings/targets/local', {
    body: { name: local.name, kind: local.kind, environment: local.environment, connection: local.connection, cost_model: costModel },
  });
}

/** An actor that reads (`rules:read`) a tenant's data, in the given environments (null: all): for calling domain reports directly. */
export const readerActor = (tenantId: string, environments: string[] | null = null): Actor => ({
  tokenId: '00000000-0000-4000-8000-000000000000',
  tenantId,
  tier: 'enterprise',
  permissions: new Set(['rules:read']),
  environments,
  principal: 'test',
  expiresAt: null,
});
