import http from 'node:http';
import { startTestService, type TestService, until } from '../support/harness';

const EVENTS = '/api/v1/events?target=local&product=windows&category=process_creation';
const line = (n: number) => `${JSON.stringify({ '@timestamp': new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), CommandLine: `cmd ${n}` })}\n`;

describe('ingestion when the event store is behind', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService({ eventStore: { maxPendingBatches: 1 } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('answers 503 with Retry-After at once while the backlog is full, stores nothing of the refused batch, and takes batches again after', async () => {
    // A batch under way: its body's first line is sent, the rest held back.
    const held = http.request(`${svc.url}${EVENTS}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.token}`, 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' },
    });
    const heldAnswer = new Promise<{ status: number; body: any }>((resolve, reject) => {
      held.on('response', (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      held.on('error', reject);
    });
    held.write(line(1));
    await until('the held batch is under way', async () => (svc.siem.localStore.pendingBatches === 1 ? true : undefined));

    const started = Date.now();
    const refused = await svc.request('POST', EVENTS, { body: line(2) + line(3), headers: { 'content-type': 'application/x-ndjson' } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toMatch(/problem\+json/);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(refused.body.detail).toMatch(/1 batch under way \(the limit is 1\).*send it again/);

    held.end(line(4));
    expect(await heldAnswer).toMatchObject({ status: 200, body: { accepted: 2 } });
    const again = await svc.request('POST', EVENTS, { body: line(2) + line(3), headers: { 'content-type': 'application/x-ndjson' } });
    expect(again.status).toBe(200);
    expect(again.body.accepted).toBe(2);
    // The refused batch stored nothing: the held batch's two events and the resent two.
    expect((await svc.siem.localStore.tenantStats('default')).events).toBe(4);
  });
});
