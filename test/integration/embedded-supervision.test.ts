import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveTemporalCli } from '../../worker/temporal-cli';
import { createTestDatabase, processRule, request, testDbKind, until, type TestResponse } from '../support/harness';
import { devServerPid, freePort, spawnService, type ServiceProcess } from '../support/service-process';

/**
 * `npm start` as an operator runs it, in a child process: the embedded Temporal dev server is
 * killed under a deploy waiting for approval and comes back by itself; meanwhile readiness says so
 * at once, what needs Temporal is refused at once with 503 and what does not keeps working; then
 * SIGTERM ends the service cleanly with a request in flight.
 */
const RULE_ID = 'e5000000-0000-4000-8000-000000000001';
const OTHER_RULE_ID = 'e5000000-0000-4000-8000-000000000002';

async function timed(fn: () => Promise<TestResponse>): Promise<{ res: TestResponse; ms: number }> {
  const started = performance.now();
  const res = await fn();
  return { res, ms: performance.now() - started };
}

describe('the embedded default under npm start', () => {
  let service: ServiceProcess;
  let url: string;
  let admin: string;
  let temporalPort: number;
  let dataDir: string;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-start-'));
    const [port, tPort, uiPort] = [await freePort(), await freePort(), await freePort()];
    temporalPort = tPort;
    let databaseUrl: string | undefined;
    if (testDbKind() === 'postgres') {
      const db = await createTestDatabase();
      databaseUrl = db.url;
      dropDatabase = db.drop;
    }
    service = spawnService('worker/start.ts', {
      DATA_DIR: dataDir,
      PORT: String(port),
      TEMPORAL_PORT: String(tPort),
      TEMPORAL_UI_PORT: String(uiPort),
      TEMPORAL_CLI_PATH: resolveTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH, log: () => undefined }),
      // Long enough to see the service while Temporal is away.
      DETFLOW_TEMPORAL_RESTART_SECONDS: '8',
      DETFLOW_SHUTDOWN_GRACE_SECONDS: '10',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl, DETFLOW_SECRET_KEY: 'a passphrase for this test only' } : {}),
    });
    admin = (await service.waitFor(/Bootstrap admin token[^:]*: (\S+)/, 150))[1]!;
    url = `http://127.0.0.1:${port}`;
  }, 180_000);

  afterAll(async () => {
    if (service.child.exitCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    const orphan = devServerPid(temporalPort);
    if (orphan) process.kill(orphan, 'SIGKILL');
    await dropDatabase?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const api = (method: string, p: string, body?: unknown, token = admin) => request(url, method, p, { token, ...(body !== undefined ? { body } : {}) });

  it('restarts a killed Temporal dev server, refusing at once what needs it meanwhile, and the deploy waiting for approval goes on', async () => {
    expect((await api('POST', '/api/v1/rules', { rule: processRule(RULE_ID) })).status).toBe(201);
    expect((await api('POST', '/api/v1/rules', { rule: processRule(OTHER_RULE_ID, { title: 'Other' }) })).status).toBe(201);
    const reviewer = (await api('POST', '/api/v1/settings/api-keys', { name: 'reviewer', permissions: ['approve', 'rules:read'], principal: 'reviewer' })).body
      .token as string;
    const waiting = await api('POST', '/api/v1/rules/deploy', { rule_id: RULE_ID, target: 'local', approval_required: true });
    expect(waiting.status).toBe(202);
    const deploymentId = waiting.body.id as string;
    const approvalId = (waiting.body.links.approval as string).split('/').at(-1)!;
    expect((await api('GET', '/readyz')).status).toBe(200);

    const pid = devServerPid(temporalPort)!;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');

    // Readiness names Temporal within a probe or two, and answers at once all along.
    const notReady = await until(
      'readiness to report Temporal down',
      async () => {
        const { res, ms } = await timed(() => api('GET', '/readyz', undefined, ''));
        expect(ms).toBeLessThan(1_000);
        return res.status === 503 ? res : undefined;
      },
      6,
    );
    expect(notReady.body.down).toEqual(['temporal']);
    expect(notReady.body.dependencies.temporal).toMatchObject({ status: 'down', since: expect.any(String) });
    expect(notReady.body.dependencies.database.status).toBe('up');

    // What needs Temporal: 503 with Retry-After, at once (not after the client's own retries).
    const refused = await timed(() => api('POST', '/api/v1/rules/deploy', { rule_id: OTHER_RULE_ID, target: 'local', approval_required: false }));
    expect(refused.res.status).toBe(503);
    expect(refused.res.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(refused.res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.res.body.detail).toMatch(/Temporal has been unavailable since/);
    expect(refused.ms).toBeLessThan(2_000);
    // What does not: reads of the registry and of the deployment waiting.
    expect((await api('GET', `/api/v1/rules/${RULE_ID}`)).status).toBe(200);
    expect((await api('GET', `/api/v1/deployments/${deploymentId}`)).body.status).toBe('pending_approval');

    // Back by itself on the same database file: the approval waiting is decided and the rule deploys.
    await until('readiness again', async () => ((await api('GET', '/readyz')).status === 200 ? true : undefined), 60);
    expect(service.output()).toMatch(/the Temporal dev server ended \(SIGKILL\)/);
    expect(service.output()).toMatch(/the Temporal dev server is running again/);
    const decided = await until(
      'the decision to be taken',
      async () => {
        const res = await api('POST', `/api/v1/approvals/${approvalId}/decision`, { decision: 'approve', comment: 'after the restart' }, reviewer);
        return res.status === 200 ? res : undefined;
      },
      30,
    );
    expect(decided.body.status).toBe('approved');
    const live = await until(
      'the deployment to go live',
      async () => {
        const d = (await api('GET', `/api/v1/deployments/${deploymentId}?wait=5`)).body;
        return d.status === 'active' ? d : undefined;
      },
      60,
    );
    expect(live.version).toBe(1);
    // And what was refused goes through now.
    expect((await api('POST', '/api/v1/rules/deploy', { rule_id: OTHER_RULE_ID, target: 'local', approval_required: false })).status).toBe(202);
  }, 150_000);

  it('on SIGTERM answers the request in flight at once, then ends with exit code 0, no error, and no dev server left', async () => {
    const pending = await api('POST', '/api/v1/rules/deploy', { rule_id: OTHER_RULE_ID, target: 'local', approval_required: true, version: 1 });
    const pendingId = pending.body.id as string;
    // A CI job long-polling a deployment that waits for a person.
    const inFlight = api('GET', `/api/v1/deployments/${pendingId}?wait=30`);
    await new Promise((r) => setTimeout(r, 500));
    const shutdownLogFrom = service.output().length;
    const signalled = Date.now();
    service.child.kill('SIGTERM');
    const answered = await inFlight;
    expect(answered.status).toBe(200);
    expect(answered.body.status).toBe('pending_approval');
    expect(Date.now() - signalled).toBeLessThan(5_000);
    const code = await service.exited;
    expect(code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(30_000);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    const shutdownLog = service.output().slice(shutdownLogFrom);
    expect(shutdownLog).toContain('shutting down');
    // Nothing at error level or above (pino: 50 error, 60 fatal), and none of the errors of old.
    expect(shutdownLog).not.toMatch(/"level":(50|60)/);
    expect(shutdownLog).not.toMatch(/PGlite is closed|Not running/);
    // The Temporal dev server went with it.
    expect(devServerPid(temporalPort)).toBeUndefined();
  }, 60_000);
});
