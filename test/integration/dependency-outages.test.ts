import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { resolveTemporalCli } from '../../worker/temporal-cli';
import { imageRule, testDbKind, until } from '../support/harness';
import { workflowIds } from '../../workflows/contracts';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres';
import { devServerPid, freePort, RetryingClient, spawnService, type ServiceProcess } from '../support/service-process';

/**
 * `npm start` on a PostgreSQL server of the test's own: PostgreSQL is stopped (as a restart or a
 * failover would) while a deploy waits for approval, a CI client deploys and detection runs, then
 * the Temporal dev server is killed mid-run. While each is away the API answers 503 problem+json
 * with Retry-After; afterwards every run completes and every effect exists exactly once:
 * deployments, detection schedules, alerts, webhook deliveries and audit rows.
 */
const OUTAGE_SECONDS = Number(process.env.DETFLOW_TEST_PG_OUTAGE_SECONDS ?? 10);
const RULE = {
  waits: 'f3000000-0000-4000-8000-00000000000a',
  detects: 'f3000000-0000-4000-8000-00000000000b',
  duringPg: 'f3000000-0000-4000-8000-00000000000c',
  duringTemporal: 'f3000000-0000-4000-8000-00000000000d',
};
let seq = 0;
const event = (image: string) =>
  JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} run ${++seq}`, Computer: 'host-1' });

(testDbKind() === 'postgres' ? describe : describe.skip)('dependency outages under npm start on PostgreSQL', () => {
  let own: OwnPostgres;
  let svc: ServiceProcess;
  let dataDir: string;
  let url: string;
  let temporalPort: number;
  let ci: RetryingClient;
  let receiver: http.Server;
  const received: Array<{ id: string; event: string }> = [];

  beforeAll(async () => {
    own = await startOwnPostgres();
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const parsed = JSON.parse(body) as { delivery_id: string; event: string };
        received.push({ id: parsed.delivery_id, event: parsed.event });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-outage-'));
    const [port, tPort, uiPort] = [await freePort(), await freePort(), await freePort()];
    temporalPort = tPort;
    url = `http://127.0.0.1:${port}`;
    svc = spawnService('worker/start.ts', {
      DATA_DIR: dataDir,
      DATABASE_URL: own.url,
      DETFLOW_SECRET_KEY: 'a passphrase for this test only',
      PORT: String(port),
      TEMPORAL_PORT: String(tPort),
      TEMPORAL_UI_PORT: String(uiPort),
      TEMPORAL_CLI_PATH: resolveTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH, log: () => undefined }),
      DETFLOW_TEMPORAL_RESTART_SECONDS: '3',
    });
    const admin = (await svc.waitFor(/Bootstrap admin token[^:]*: (\S+)/, 150))[1]!;
    ci = new RetryingClient(() => url, admin);
  }, 180_000);

  afterAll(async () => {
    if (svc.child.exitCode === null) {
      svc.child.kill('SIGKILL');
      await svc.exited;
    }
    const orphan = devServerPid(temporalPort);
    if (orphan) process.kill(orphan, 'SIGKILL');
    own?.destroy();
    receiver?.closeAllConnections();
    receiver?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const ingest = (lines: string[]) =>
    ci
      .untilDone('POST', '/api/v1/events?product=windows&category=process_creation', lines.join('\n'), {
        key: `ingest-${seq}`,
        headers: { 'content-type': 'application/x-ndjson' },
      })
      .then((res) => {
        expect(res.status).toBe(200);
      });

  async function expectUnavailable(res: { status: number; headers: Headers; body: any }, problem: string) {
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.body.type).toMatch(new RegExp(`/${problem}$`));
  }

  it('answers 503 while PostgreSQL and then Temporal are away, and afterwards every run completes with every effect exactly once', async () => {
    // Setting up: a webhook receiver, detection every second, a deployment detecting and one waiting for approval.
    expect(
      (
        await ci.once('PUT', '/api/v1/settings/webhook', {
          url: `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hook`,
          secret: 'a-webhook-secret-of-some-length',
          // Only what the test checks: health or drift notices of scheduled passes would race its counts.
          events: ['deployment.succeeded'],
        })
      ).status,
    ).toBe(200);
    const local = (await ci.once('GET', '/api/v1/settings/targets/local')).body;
    expect(
      (
        await ci.once('PUT', '/api/v1/settings/targets/local', {
          name: local.name,
          kind: local.kind,
          environment: local.environment,
          connection: local.connection,
          cost_model: local.cost_model,
          detection_interval: 'PT1S',
        })
      ).status,
    ).toBe(200);
    for (const [name, id] of Object.entries(RULE)) expect((await ci.once('POST', '/api/v1/rules', { rule: imageRule(id, `${name}.exe`) })).status).toBe(201);
    const reviewer = (await ci.once('POST', '/api/v1/settings/api-keys', { name: 'reviewer', permissions: ['approve', 'rules:read'], principal: 'reviewer' })).body
      .token as string;
    const detecting = await ci.untilDone('POST', '/api/v1/rules/deploy', { rule_id: RULE.detects, target: 'local', approval_required: false }, { key: 'deploy-detects' });
    expect(detecting.status).toBe(202);
    const waiting = await ci.untilDone('POST', '/api/v1/rules/deploy', { rule_id: RULE.waits, target: 'local', approval_required: true }, { key: 'deploy-waits' });
    expect(waiting.status).toBe(202);
    const approvalId = (waiting.body.links.approval as string).split('/').at(-1)!;
    await until(
      'the detecting deployment to go live',
      async () => ((await ci.once('GET', `/api/v1/deployments/${detecting.body.id}?wait=5`)).body.status === 'active' ? true : undefined),
      60,
    );
    await ingest([event('detects.exe'), event('detects.exe')]);

    // PostgreSQL away, with events waiting for the next detection run and a CI client deploying.
    await ingest([event('detects.exe'), event('detects.exe'), event('other.exe'), event('detects.exe')]);
    own.stop();
    const stoppedAt = Date.now();
    const ciDeploy = ci.untilDone(
      'POST',
      '/api/v1/rules/deploy',
      { rule_id: RULE.duringPg, target: 'local', approval_required: false },
      { key: 'deploy-during-pg', seconds: 90 },
    );
    const notReady = await until(
      'readiness to report the database down',
      async () => {
        const res = await ci.once('GET', '/readyz', undefined, {}, '');
        return res.status === 503 && res.body.down.includes('database') ? res : undefined;
      },
      10,
    );
    expect(notReady.body.dependencies.database).toMatchObject({ status: 'down', since: expect.any(String) });
    await expectUnavailable(await ci.once('GET', `/api/v1/deployments/${waiting.body.id}`), 'database-unavailable');
    await expectUnavailable(
      await ci.once('POST', `/api/v1/approvals/${approvalId}/decision`, { decision: 'approve' }, { 'Idempotency-Key': 'approve-waits' }, reviewer),
      'database-unavailable',
    );
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_SECONDS * 1000 - (Date.now() - stoppedAt))));
    own.start();

    const deployedDuringPg = await ciDeploy;
    expect(deployedDuringPg.status).toBe(202);
    expect(ci.refusals.some((r) => r.status === 503 && r.body?.type?.endsWith('/database-unavailable'))).toBe(true);
    // Nothing surfaced as a 500 while the database was away; activities waited for it, audit rows were held.
    expect(ci.refusals.filter((r) => r.status === 500)).toEqual([]);
    expect(svc.output()).not.toMatch(/unhandled error/);
    // An activity waits inside its attempt, or (one that heartbeats, as scheduled detection's pass) ends it for Temporal to retry.
    expect(svc.output()).toMatch(/the database is unavailable; the activity (waits for it|is retried by Temporal)/);
    expect(svc.output()).toMatch(/audit rows are held until it answers/);
    const decided = await ci.untilDone(
      'POST',
      `/api/v1/approvals/${approvalId}/decision`,
      { decision: 'approve', comment: 'after the outage' },
      { key: 'approve-waits', token: reviewer },
    );
    expect(decided.status).toBe(200);

    // Temporal killed mid-run: a CI deploy meanwhile is refused at once, then goes through.
    await until('readiness again', async () => ((await ci.once('GET', '/readyz', undefined, {}, '')).status === 200 ? true : undefined), 30);
    process.kill(devServerPid(temporalPort)!, 'SIGKILL');
    await until(
      'readiness to report Temporal down',
      async () => ((await ci.once('GET', '/readyz', undefined, {}, '')).body?.down?.includes('temporal') ? true : undefined),
      10,
    );
    const refusedOnce = await ci.once(
      'POST',
      '/api/v1/rules/deploy',
      { rule_id: RULE.duringTemporal, target: 'local', approval_required: false },
      { 'Idempotency-Key': 'deploy-during-temporal' },
    );
    await expectUnavailable(refusedOnce, 'unavailable');
    await ingest([event('detects.exe')]);
    const deployedDuringTemporal = await ci.untilDone(
      'POST',
      '/api/v1/rules/deploy',
      { rule_id: RULE.duringTemporal, target: 'local', approval_required: false },
      { key: 'deploy-during-temporal', seconds: 90 },
    );
    expect(deployedDuringTemporal.status).toBe(202);

    // Every run completes.
    const ids = [detecting.body.id, waiting.body.id, deployedDuringPg.body.id, deployedDuringTemporal.body.id] as string[];
    for (const id of ids) {
      await until(`deployment ${id} to go live`, async () => ((await ci.once('GET', `/api/v1/deployments/${id}?wait=5`)).body?.status === 'active' ? true : undefined), 90);
    }
    // Two before the outage, three waiting for detection while PostgreSQL was away, one while Temporal was.
    const alerted = 6;
    await until(
      'the alerts of the events ingested',
      async () => {
        const items = (await ci.once('GET', `/api/v1/alerts?deployment_id=${detecting.body.id}&limit=500`)).body.items as unknown[];
        return items.length >= alerted ? true : undefined;
      },
      60,
    );
    // Runs after these find nothing new; webhooks of what happened are delivered.
    await new Promise((r) => setTimeout(r, 3_000));

    // Every effect exactly once, read from the database itself.
    const db = new pg.Client(own.url);
    let groups: string[] = [];
    await db.connect();
    try {
      const q = async (sql: string, params: unknown[] = []) => (await db.query(sql, params)).rows;
      const deployments = await q('select rule_id, count(*)::int as n, min(status) as status from deployments group by rule_id order by rule_id');
      expect(deployments).toEqual(
        Object.values(RULE)
          .sort()
          .map((rule_id) => ({ rule_id, n: 1, status: 'active' })),
      );
      const alerts = await q('select event_id, count(*)::int as n from alerts where deployment_id = $1 group by event_id', [detecting.body.id]);
      expect(alerts).toHaveLength(alerted);
      expect(alerts.every((a) => a.n === 1)).toBe(true);
      expect((await q('select count(*)::int as n from alerts where rule_id <> $1', [RULE.detects]))[0].n).toBe(0);

      // The notification of the last deployment may still be on its way: wait for it, not only for what is recorded.
      await until(
        'a deployment.succeeded webhook per deployment, every one delivered',
        async () => {
          const [row] = await q(
            "select count(*) filter (where event = 'deployment.succeeded')::int as succeeded, count(*) filter (where status <> 'delivered')::int as pending from webhook_deliveries",
          );
          return row.succeeded >= ids.length && row.pending === 0 ? true : undefined;
        },
        90,
      );
      const deliveries = await q('select id, event from webhook_deliveries');
      const succeeded = deliveries.filter((d) => d.event === 'deployment.succeeded');
      expect(succeeded).toHaveLength(ids.length);
      expect(received.map((r) => r.id).sort()).toEqual(deliveries.map((d) => d.id).sort());
      expect(new Set(received.map((r) => r.id)).size).toBe(received.length);

      const audited = await q('select request_id, count(*)::int as n from audit_log group by request_id');
      const byRequest = new Map(audited.map((a) => [a.request_id as string, a.n as number]));
      expect(ci.requestIds.filter((id) => byRequest.get(id) !== 1)).toEqual([]);
      expect(audited.filter((a) => a.n !== 1)).toEqual([]);
      groups = (await q('select distinct tenant_id, target_id from deployments')).map((g) => workflowIds.detectionBatchSchedule(g.tenant_id, g.target_id));
    } finally {
      await db.end();
    }

    // One detection schedule per tenant and target (the default design), none twice, none per deployment.
    const connection = await Connection.connect({ address: `127.0.0.1:${temporalPort}` });
    try {
      const schedules: string[] = [];
      for await (const s of new Client({ connection }).schedule.list()) schedules.push(s.scheduleId);
      expect(schedules.filter((s) => s.startsWith('detect/')).sort()).toEqual(groups.sort());
      for (const id of ids) expect(schedules.filter((s) => s.endsWith(`/${id}`))).toEqual([]);
    } finally {
      await connection.close();
    }
  }, 300_000);
});
