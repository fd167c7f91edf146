import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { connectClient } from '../../worker/temporal-client';
import { Notify } from '../../workflows/notify';
import { createTestDatabase, testDbKind } from '../support/harness';
import { parsePrometheusText, sampleValue, type Family } from '../support/prometheus-text';

jest.setTimeout(180_000);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * `npm run start:worker` as operators run it, in its own process, with
 * DETFLOW_TEMPORAL_METRICS_ADDRESS: the Temporal SDK's own Prometheus exporter, beside ours.
 */
describe('the worker process exports the Temporal SDK metrics (DETFLOW_TEMPORAL_METRICS_ADDRESS)', () => {
  const taskQueue = `sdk-metrics-${crypto.randomBytes(4).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-sdk-metrics-'));
  let child: ChildProcess;
  let stderr = '';
  let sdkUrl: string;
  let client: Client;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    // PostgreSQL project: a fresh database the worker process migrates; PGlite: its own files in DATA_DIR.
    let databaseUrl: string | undefined;
    if (testDbKind() === 'postgres') {
      const db = await createTestDatabase();
      databaseUrl = db.url;
      dropDatabase = db.drop;
    }
    const port = await freePort();
    sdkUrl = `http://127.0.0.1:${port}/metrics`;
    child = spawn(process.execPath, [require.resolve('tsx/cli'), path.join(__dirname, '../../worker/main.ts')], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
        TEMPORAL_TASK_QUEUE: taskQueue,
        DATA_DIR: dataDir,
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        LOG_LEVEL: 'warn',
        DETFLOW_SECRET_KEY: 'sdk-metrics-test',
        DETFLOW_TEMPORAL_METRICS_ADDRESS: `127.0.0.1:${port}`,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (d) => (stderr += String(d)));
    client = await connectClient(process.env.TEMPORAL_ADDRESS!, 'default');
  });

  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await client?.connection.close();
    await dropDatabase?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function scrape(): Promise<Map<string, Family>> {
    const res = await fetch(sdkUrl);
    expect(res.status).toBe(200);
    return parsePrometheusText(await res.text());
  }

  /** The first scrape that answers and shows the worker polling its task queue. */
  async function scrapeWhenPolling(): Promise<Map<string, Family>> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the worker process exited (${child.exitCode}): ${stderr}`);
      try {
        const families = await scrape();
        // Both workers report their slots once polling: the activity worker may come a moment after the workflow worker.
        const types = new Set(
          families
            .get('temporal_worker_task_slots_available')
            ?.samples.filter((s) => s.labels.task_queue === taskQueue)
            .map((s) => s.labels.worker_type),
        );
        if (types.has('ActivityWorker') && types.has('WorkflowWorker')) return families;
      } catch (err) {
        if ((err as Error).message !== 'fetch failed') throw err; // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`no SDK metrics for task queue ${taskQueue}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  it('parses as Prometheus text, shows the worker slots of its task queue, and counts the workflows it completes', async () => {
    const before = await scrapeWhenPolling();
    for (const [name, type] of [
      ['temporal_worker_task_slots_available', 'gauge'],
      ['temporal_num_pollers', 'gauge'],
    ] as const) {
      expect(before.get(name)?.type).toBe(type);
    }
    const slots = before.get('temporal_worker_task_slots_available')!.samples.filter((s) => s.labels.task_queue === taskQueue);
    expect(slots.map((s) => s.labels.worker_type).sort()).toEqual(expect.arrayContaining(['ActivityWorker', 'WorkflowWorker']));
    for (const s of slots) expect(s.value).toBeGreaterThan(0);
    const labels = { task_queue: taskQueue, workflow_type: 'Notify' };
    const runs = 3;
    expect(sampleValue(before, 'temporal_workflow_completed', labels)).toBe(0);

    // Notify for a tenant with no webhook: one activity (it records nothing) and the run completes.
    for (let i = 0; i < runs; i++) {
      const result = await client.workflow.execute(Notify, {
        workflowId: `sdk-metrics/${taskQueue}/${i}`,
        taskQueue,
        args: [{ tenantId: 'no-such-tenant', event: 'webhook.test', sourceKey: `sdk-metrics-${i}`, data: {} }],
      });
      expect(result).toMatchObject({ deliveryId: null, delivered: false });
    }

    // The exporter reads the SDK's counters when scraped; the last completion is counted once the
    // workflow task that completed it has been answered, which may be just after the client sees it.
    const deadline = Date.now() + 10_000;
    let after = await scrape();
    while (sampleValue(after, 'temporal_workflow_completed', labels) < runs && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      after = await scrape();
    }
    expect(after.get('temporal_workflow_completed')?.type).toBe('counter');
    expect(sampleValue(after, 'temporal_workflow_completed', labels)).toBe(runs);
    // Each run ran one activity on this worker.
    const activity = { task_queue: taskQueue, activity_type: 'recordNotification' };
    expect(sampleValue(after, 'temporal_activity_execution_latency_count', activity)).toBe(runs);
    // The worker's calls to the server (polls, task completions) are counted too.
    const requests = (f: Map<string, Family>) => f.get('temporal_request')?.samples.reduce((n, s) => n + s.value, 0) ?? 0;
    expect(requests(after)).toBeGreaterThan(requests(before));
  });
});
