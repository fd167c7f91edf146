import http from 'node:http';
import net from 'node:net';
import { createApiKey, createTenant, sigmaRule, startTestService, type TestService, until } from '../support/harness';

type Received = { path: string | undefined; delivery: string; event: string; bodyDelivery: string; answered: number };

/** A real receiver on loopback: down (nothing listens: connection refused), or up answering a status the test sets. */
class Receiver {
  received: Received[] = [];
  answer = 200;
  private server: http.Server | undefined;
  constructor(readonly port: number) {}
  async up() {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        this.received.push({
          path: req.url,
          delivery: String(req.headers['x-detflow-delivery']),
          event: String(req.headers['x-detflow-event']),
          bodyDelivery: JSON.parse(body).delivery_id,
          answered: this.answer,
        });
        res.statusCode = this.answer;
        res.end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', () => r()));
  }
  async down() {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  }
  /** How many times each delivery id was acknowledged (answered 2xx). */
  acknowledgedCount(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const r of this.received) if (r.answered < 300) counts.set(r.delivery, (counts.get(r.delivery) ?? 0) + 1);
    return counts;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

const SECRET = 'a-webhook-secret-of-some-length';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// 0.2 s, 0.4 s, then 0.5 s between attempts: 12 attempts span about 5 s (the default spans about an hour).
const RETRY = { firstSeconds: 0.2, maxSeconds: 0.5, maxAttempts: 12 };

describe('webhook receiver outage', () => {
  let svc: TestService;
  let receiver: Receiver;
  beforeAll(async () => {
    svc = await startTestService({ webhookRetry: RETRY });
    receiver = new Receiver(await freePort());
    // Only the events this test causes itself: scheduled detection's health check of the deployed
    // rule would send rule.health_degraded whenever its pass comes, and make the counts below racy.
    const put = await svc.request('PUT', '/api/v1/settings/webhook', {
      body: { url: `http://127.0.0.1:${receiver.port}/hook`, secret: SECRET, events: ['deployment.succeeded'] },
    });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await receiver.down();
    await svc.close();
  });

  const deliveries = async (query: string) => (await svc.request('GET', `/api/v1/settings/webhook/deliveries?limit=100&${query}`)).body.items as any[];

  it('delivers every event exactly once per delivery id after the receiver returns (refused, then 503)', async () => {
    // Down: nothing listens. Events keep happening: test notifications and a deployment.
    const tests = [];
    for (let i = 0; i < 4; i++) tests.push(await svc.request('POST', '/api/v1/settings/webhook/test'));
    expect(tests.map((t) => t.status)).toEqual([202, 202, 202, 202]);
    const ruleId = 'c0000000-0000-4000-8000-0000000000e1';
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: sigmaRule(ruleId) } })).status).toBe(201);
    expect((await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: ruleId, target: 'local', approval_required: false } })).status).toBe(202);
    await until('refused attempts on every delivery', async () => {
      const items = await deliveries('status=pending');
      return items.length >= 5 && items.every((d) => d.attempts.length >= 2 && d.attempts[0].error !== null) ? true : undefined;
    });
    // Up but failing: 503 to everything for a while.
    receiver.answer = 503;
    await receiver.up();
    await until('503 answers', async () => (receiver.received.length >= 5 ? true : undefined));
    // Back.
    receiver.answer = 200;
    const delivered = await until('every delivery delivered', async () => {
      const items = await deliveries('');
      return items.length >= 5 && items.every((d) => d.status === 'delivered') ? items : undefined;
    });
    expect(delivered.map((d) => d.event).sort()).toEqual(['deployment.succeeded', 'webhook.test', 'webhook.test', 'webhook.test', 'webhook.test']);
    // Settle: no delivery is sent again after it was acknowledged.
    await sleep(1500);
    const acked = receiver.acknowledgedCount();
    expect([...acked.keys()].sort()).toEqual(delivered.map((d) => d.id).sort());
    expect([...acked.values()].every((n) => n === 1)).toBe(true);
    // Retries carry the same delivery id, in the header and the body: a receiver dedupes on it.
    for (const r of receiver.received) expect(r.bodyDelivery).toBe(r.delivery);
    for (const d of delivered) {
      const attempts = d.attempts as Array<{ status_code: number | null; error: string | null }>;
      expect(attempts.some((a) => a.status_code === null && /fetch failed|ECONNREFUSED/.test(a.error ?? ''))).toBe(true);
      expect(attempts.at(-1)!.status_code).toBe(200);
      expect(d.last_error).toBeNull();
    }
    expect(receiver.received.filter((r) => r.answered === 503).length).toBeGreaterThanOrEqual(5);
  }, 90_000);

  it('lists a delivery given up after the retry limit with its last error, and re-sends it once', async () => {
    receiver.received = [];
    receiver.answer = 503;
    const sent = await svc.request('POST', '/api/v1/settings/webhook/test');
    expect(sent.status).toBe(202);
    const failed = await until('the delivery given up', async () => {
      const items = await deliveries('status=failed');
      return items.find((d) => d.event === 'webhook.test');
    });
    expect(failed.attempts).toHaveLength(RETRY.maxAttempts);
    expect(failed.last_error).toMatch(/503/);
    expect(receiver.acknowledgedCount().size).toBe(0);

    // The receiver's URL was corrected meanwhile: the re-send goes there. A PUT replaces the settings
    // (omitted events mean every event), so the test's events are named again: otherwise a scheduled
    // pass on a five-minute mark sends rule.health_degraded into the counts below.
    const moved = { url: `http://127.0.0.1:${receiver.port}/moved`, events: ['deployment.succeeded'] };
    expect((await svc.request('PUT', '/api/v1/settings/webhook', { body: moved })).status).toBe(200);
    // Re-sent while the receiver still fails: a repeated request joins the same run.
    const first = await svc.request('POST', `/api/v1/settings/webhook/deliveries/${failed.id}/redeliver`);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ id: failed.id, status: 'running' });
    const again = await svc.request('POST', `/api/v1/settings/webhook/deliveries/${failed.id}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body.workflow_id).toBe(first.body.workflow_id);
    expect(again.body.run_id).toBe(first.body.run_id);
    expect((await deliveries('status=pending')).map((d) => d.id)).toContain(failed.id);
    receiver.answer = 200;
    const done = await until('the re-sent delivery delivered', async () => (await deliveries('status=delivered')).find((d) => d.id === failed.id));
    expect(done.attempts.length).toBeGreaterThan(RETRY.maxAttempts);
    await sleep(1000);
    expect(Object.fromEntries(receiver.acknowledgedCount())).toEqual({ [failed.id]: 1 });
    expect(receiver.received.filter((r) => r.answered < 300).map((r) => r.path)).toEqual(['/moved']);
    expect(done.url).toBe(`http://127.0.0.1:${receiver.port}/moved`);
    expect(receiver.received.every((r) => r.event === 'webhook.test')).toBe(true);

    // Delivered: never sent twice.
    const twice = await svc.request('POST', `/api/v1/settings/webhook/deliveries/${failed.id}/redeliver`);
    expect(twice.status).toBe(409);
    expect(twice.headers.get('content-type')).toMatch(/application\/problem\+json/);

    const audit = await svc.request('GET', '/api/v1/settings/audit?limit=100');
    const redeliveries = audit.body.items.filter((e: { route: string }) => e.route === '/settings/webhook/deliveries/{id}/redeliver');
    expect(redeliveries.map((e: { status: number }) => e.status).sort()).toEqual([202, 202, 409]);
  }, 90_000);

  it('refuses bad ids, other tenants and tokens without admin with problem+json', async () => {
    const [someone] = await deliveries('');
    const bad = await svc.request('POST', '/api/v1/settings/webhook/deliveries/not-a-uuid/redeliver');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const unknown = await svc.request('POST', '/api/v1/settings/webhook/deliveries/00000000-0000-4000-8000-000000000000/redeliver');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/application\/problem\+json/);

    const other = await createTenant(svc, 'webhook-outsider');
    const put = await svc.request('PUT', '/api/v1/settings/webhook', { token: other, body: { url: `http://127.0.0.1:${receiver.port}/other`, secret: SECRET } });
    expect(put.status).toBe(200);
    const foreign = await svc.request('POST', `/api/v1/settings/webhook/deliveries/${someone.id}/redeliver`, { token: other });
    expect(foreign.status).toBe(404);
    expect(foreign.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((await svc.request('GET', '/api/v1/settings/webhook/deliveries', { token: other })).body.items).toEqual([]);

    const reader = await createApiKey(svc, svc.token, { name: 'reader', permissions: ['rules:read'] });
    const forbidden = await svc.request('POST', `/api/v1/settings/webhook/deliveries/${someone.id}/redeliver`, { token: reader.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get('content-type')).toMatch(/application\/problem\+json/);
  }, 60_000);
});
