import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { sigmaRule, startTestService, type TestService, until } from '../support/harness';

type Received = { headers: http.IncomingHttpHeaders; body: string; answered: number };

/** A real webhook receiver on loopback that answers with whatever status the test sets. */
class Receiver {
  received: Received[] = [];
  answer = 200;
  private server: http.Server | undefined;
  constructor(readonly port: number) {}
  async start() {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body, answered: this.answer });
        res.statusCode = this.answer;
        res.end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', () => r()));
  }
  async stop() {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server?.closeAllConnections();
    this.server = undefined;
  }
  acknowledged() {
    return this.received.filter((r) => r.answered < 300);
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

function verify(r: Received) {
  const expected = 'sha256=' + crypto.createHmac('sha256', SECRET).update(`${r.headers['x-detflow-timestamp']}.${r.body}`).digest('hex');
  return expected === r.headers['x-detflow-signature'];
}

describe('webhook notifications', () => {
  let svc: TestService;
  let receiver: Receiver;
  beforeAll(async () => {
    svc = await startTestService();
    receiver = new Receiver(await freePort());
  });
  afterAll(async () => {
    await receiver.stop();
    await svc.close();
  });

  it('keeps the secret write-only and validates the settings', async () => {
    expect((await svc.request('GET', '/api/v1/settings/webhook')).status).toBe(404);
    const noSecret = await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${receiver.port}/hook` } });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.errors[0].pointer).toBe('/body/secret');
    expect((await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: 'ftp://x/y', secret: SECRET } })).status).toBe(400);
    expect((await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: 'http://x/y', secret: SECRET, events: ['no.such.event'] } })).status).toBe(400);
    const put = await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${receiver.port}/hook`, secret: SECRET } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ enabled: true, secret_set: true });
    expect(put.body.events).toContain('deployment.succeeded');
    expect(put.text).not.toContain(SECRET);
    // Updating without a secret keeps the one set before.
    const again = await svc.request('PUT', '/api/v1/settings/webhook', {
      body: { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['deployment.succeeded', 'deployment.failed'] },
    });
    expect(again.body.events).toEqual(['deployment.succeeded', 'deployment.failed']);
  });

  it('delivers once the receiver comes up, retrying with backoff, every attempt recorded', async () => {
    // Nothing listens on the port yet: the first attempts are refused.
    const sent = await svc.request('POST', '/api/v1/settings/webhook/test');
    expect(sent.status).toBe(202);
    await until('a failed attempt', async () => {
      const list = await svc.request('GET', '/api/v1/settings/webhook/deliveries?event=webhook.test');
      return list.body.items[0]?.attempts.length >= 1 ? true : undefined;
    });
    await receiver.start();
    const delivered = await until('delivery', async () => {
      const list = await svc.request('GET', '/api/v1/settings/webhook/deliveries?event=webhook.test');
      return list.body.items[0]?.status === 'delivered' ? list.body.items[0] : undefined;
    });
    expect(delivered.attempts.length).toBeGreaterThanOrEqual(2);
    expect(delivered.attempts[0].status_code).toBeNull();
    expect(delivered.attempts[0].error).toMatch(/fetch failed|ECONNREFUSED/);
    expect(delivered.attempts.at(-1).status_code).toBe(200);
    const got = receiver.acknowledged();
    expect(got).toHaveLength(1);
    expect(got[0]!.headers['x-detflow-delivery']).toBe(delivered.id);
    expect(got[0]!.headers['x-detflow-event']).toBe('webhook.test');
    expect(verify(got[0]!)).toBe(true);
    const body = JSON.parse(got[0]!.body);
    expect(body).toMatchObject({ event: 'webhook.test', delivery_id: delivered.id, tenant_id: 'default', text: expect.any(String) });
    expect(body.blocks[0].text.text).toBe(body.text);
  });

  it('retries a receiver that answers 503, and notifies subscribed deployment events exactly once', async () => {
    receiver.received = [];
    receiver.answer = 503;
    const ruleId = 'c0000000-0000-4000-8000-00000000000c';
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: sigmaRule(ruleId) } })).status).toBe(201);
    const deploy = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: ruleId, target: 'local', approval_required: false } });
    expect(deploy.status).toBe(202);
    await until('a refused attempt', async () => (receiver.received.length >= 1 ? true : undefined));
    receiver.answer = 200;
    const delivery = await until('delivery', async () => {
      const list = await svc.request('GET', '/api/v1/settings/webhook/deliveries?event=deployment.succeeded');
      return list.body.items[0]?.status === 'delivered' ? list.body.items[0] : undefined;
    });
    expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([...Array(delivery.attempts.length - 1).fill(503), 200]);
    const acknowledged = receiver.acknowledged();
    expect(acknowledged).toHaveLength(1);
    expect(verify(acknowledged[0]!)).toBe(true);
    const body = JSON.parse(acknowledged[0]!.body);
    expect(body.data).toMatchObject({ rule_id: ruleId, version: 1, target: 'local', deployment_id: deploy.body.id });
    // Every request for this delivery carried the same delivery id; only one was acknowledged.
    expect(new Set(receiver.received.map((r) => r.headers['x-detflow-delivery']))).toEqual(new Set([delivery.id]));
  });

  it('sends nothing for events the tenant did not subscribe to, or when disabled', async () => {
    await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['rollback.completed'] } });
    receiver.received = [];
    const ruleId = 'c0000000-0000-4000-8000-00000000000d';
    await svc.request('POST', '/api/v1/rules', { body: { rule: sigmaRule(ruleId) } });
    const deploy = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: ruleId, target: 'local', approval_required: false } });
    // The run starts the notification child after recording the deployment active: wait for the run.
    expect(await svc.client.workflow.getHandle(deploy.body.workflow_id).result()).toMatchObject({ status: 'active' });
    const handle = svc.client.workflow.getHandle(`notify/default/deployment.succeeded/${deploy.body.workflow_id}/succeeded-${deploy.body.id}`);
    expect(await handle.result()).toMatchObject({ deliveryId: null, delivered: false });
    expect(receiver.received).toHaveLength(0);

    await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${receiver.port}/hook`, enabled: false } });
    const test = await svc.request('POST', '/api/v1/settings/webhook/test');
    expect(await svc.client.workflow.getHandle(test.body.workflow_id).result()).toMatchObject({ deliveryId: null });
    expect(receiver.received).toHaveLength(0);
  });
});
