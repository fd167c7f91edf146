import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { detectEverySecond, imageRule, startTestService, type TestService, until } from '../support/harness';
import { parsePrometheusText, sampleValue, type Family } from '../support/prometheus-text';

let seq = 0;
const event = (image: string) =>
  JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} ${++seq}`, Computer: 'host-1' });

const FAMILIES: Record<string, string> = {
  detflow_http_requests_total: 'counter',
  detflow_http_request_duration_seconds: 'histogram',
  detflow_detection_runs_total: 'counter',
  detflow_alerts_raised_total: 'counter',
  detflow_alerts_suppressed_total: 'counter',
  detflow_webhook_attempts_total: 'counter',
  detflow_webhook_deliveries_failed_total: 'counter',
  detflow_events_ingested_total: 'counter',
  detflow_events_rejected_total: 'counter',
};

describe('GET /metrics', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.close());

  async function scrape(): Promise<Map<string, Family>> {
    const res = await svc.request('GET', '/metrics', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parsePrometheusText(res.text);
  }

  const ingest = (lines: string[]) =>
    svc.request('POST', '/api/v1/events?product=windows&category=process_creation', { body: lines.join('\n'), headers: { 'content-type': 'application/x-ndjson' } });

  it('is valid text format with HELP and TYPE for every family, open without a token', async () => {
    const families = await scrape();
    for (const [name, type] of Object.entries(FAMILIES)) {
      expect(families.get(name)?.type).toBe(type);
      expect(families.get(name)?.help).toEqual(expect.any(String));
    }
    // Counters without labels are shown from the start.
    expect(families.get('detflow_events_ingested_total')!.samples).toEqual([{ name: 'detflow_events_ingested_total', labels: {}, value: 0 }]);
  });

  it('counts requests by method, route template and status, with their latency', async () => {
    const labels = { method: 'GET', route: '/api/v1/rules', status: '200' };
    const missing = { method: 'GET', route: '/api/v1/rules/{id}', status: '404' };
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await svc.request('GET', '/api/v1/rules')).status).toBe(200);
    expect((await svc.request('GET', '/api/v1/rules/e0000000-0000-4000-8000-00000000ffff')).status).toBe(404);
    expect((await svc.request('GET', '/api/v1/rules', { token: 'df_not_a_token' })).status).toBe(401);
    const after = await scrape();
    expect(sampleValue(after, 'detflow_http_requests_total', labels) - sampleValue(before, 'detflow_http_requests_total', labels)).toBe(3);
    expect(sampleValue(after, 'detflow_http_requests_total', missing) - sampleValue(before, 'detflow_http_requests_total', missing)).toBe(1);
    expect(sampleValue(after, 'detflow_http_request_duration_seconds_count', labels) - sampleValue(before, 'detflow_http_request_duration_seconds_count', labels)).toBe(3);
    expect(sampleValue(after, 'detflow_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(sampleValue(after, 'detflow_http_requests_total', labels));
    expect(sampleValue(after, 'detflow_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    // Refused before a route was matched: counted, but never under a concrete path.
    expect(sampleValue(after, 'detflow_http_requests_total', { route: 'other', status: '401' })).toBeGreaterThanOrEqual(1);
    const routes = after.get('detflow_http_requests_total')!.samples.map((s) => s.labels.route);
    expect(routes.some((r) => r!.includes('e0000000'))).toBe(false);
    // The scrape counts itself, outside /api/v1.
    expect(sampleValue(after, 'detflow_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBeGreaterThanOrEqual(2);
  });

  it('counts events stored and lines rejected by POST /events', async () => {
    const before = await scrape();
    const res = await ingest([event('a.exe'), 'not json', event('b.exe'), event('c.exe')]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: 3, rejected: 1 });
    const after = await scrape();
    expect(sampleValue(after, 'detflow_events_ingested_total') - sampleValue(before, 'detflow_events_ingested_total')).toBe(3);
    expect(sampleValue(after, 'detflow_events_rejected_total') - sampleValue(before, 'detflow_events_rejected_total')).toBe(1);
  });

  it('counts detection runs, and the alerts they raised and suppressed', async () => {
    await detectEverySecond(svc);
    const id = 'e0000000-0000-4000-8000-000000000001';
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(id, 'metrics.exe') } })).status).toBeLessThan(300);
    const deploy = await svc.request('POST', '/api/v1/rules/deploy', {
      body: { rule_id: id, target: 'local', approval_required: false, noise_budget: { max_alerts_per_day: 1 } },
    });
    expect(deploy.status).toBe(202);
    expect(await svc.client.workflow.getHandle(deploy.body.workflow_id).result()).toMatchObject({ status: 'active' });
    const before = await scrape();
    expect(sampleValue(before, 'detflow_alerts_raised_total')).toBe(0);
    expect((await ingest([event('metrics.exe'), event('metrics.exe'), event('metrics.exe')])).body.accepted).toBe(3);
    const after = await until(
      'the alerts counted',
      async () => {
        const m = await scrape();
        return sampleValue(m, 'detflow_alerts_raised_total') + sampleValue(m, 'detflow_alerts_suppressed_total') >= 3 ? m : undefined;
      },
      60,
    );
    expect(sampleValue(after, 'detflow_alerts_raised_total')).toBe(1);
    expect(sampleValue(after, 'detflow_alerts_suppressed_total')).toBe(2);
    expect(sampleValue(after, 'detflow_detection_runs_total', { outcome: 'completed' })).toBeGreaterThan(
      sampleValue(before, 'detflow_detection_runs_total', { outcome: 'completed' }),
    );
    // What the API answers agrees with what was counted.
    const alerts = (await svc.request('GET', `/api/v1/alerts?deployment_id=${deploy.body.id}&limit=50`)).body.items as Array<{ status: string }>;
    expect(alerts.filter((a) => a.status === 'open')).toHaveLength(1);
    expect(alerts.filter((a) => a.status === 'suppressed')).toHaveLength(2);
  });

  it('counts webhook attempts by result, and deliveries given up', async () => {
    const received: string[] = [];
    const receiver = http.createServer((req, res) => {
      received.push(req.url ?? '');
      res.statusCode = 200;
      res.end();
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const port = (receiver.address() as AddressInfo).port;
    try {
      const secret = 'a-webhook-secret-of-some-length';
      // Only test notifications (always sent): no notification of the detection test above joins in.
      const events = ['deployment.succeeded'];
      // A port nothing listens on: every attempt is refused, until the webhook is removed.
      const closed = await new Promise<number>((resolve) => {
        const s = http.createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as AddressInfo).port;
          s.close(() => resolve(p));
        });
      });
      expect((await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${closed}/hook`, secret, events } })).status).toBe(200);
      const before = await scrape();
      expect((await svc.request('POST', '/api/v1/settings/webhook/test')).status).toBe(202);
      await until('a refused attempt counted', async () => {
        const m = await scrape();
        return sampleValue(m, 'detflow_webhook_attempts_total', { result: 'error' }) > sampleValue(before, 'detflow_webhook_attempts_total', { result: 'error' })
          ? true
          : undefined;
      });
      expect((await svc.request('DELETE', '/api/v1/settings/webhook')).status).toBeLessThan(300);
      const givenUp = await until('the delivery given up', async () => {
        const m = await scrape();
        return sampleValue(m, 'detflow_webhook_deliveries_failed_total') > 0 ? m : undefined;
      });
      expect(sampleValue(givenUp, 'detflow_webhook_deliveries_failed_total')).toBe(1);

      expect((await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${port}/hook`, secret, events } })).status).toBe(200);
      expect((await svc.request('POST', '/api/v1/settings/webhook/test')).status).toBe(202);
      const delivered = await until('a delivered attempt counted', async () => {
        const m = await scrape();
        return sampleValue(m, 'detflow_webhook_attempts_total', { result: 'delivered' }) > 0 ? m : undefined;
      });
      expect(sampleValue(delivered, 'detflow_webhook_attempts_total', { result: 'delivered' })).toBe(1);
      expect(received).toEqual(['/hook']);
      expect(sampleValue(delivered, 'detflow_webhook_deliveries_failed_total')).toBe(1);
    } finally {
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});

describe('GET /metrics with DETFLOW_METRICS_TOKEN set', () => {
  let svc: TestService;
  const metricsToken = 'scrape-secret-0123456789';
  beforeAll(async () => {
    svc = await startTestService({ metricsToken });
  });
  afterAll(() => svc.close());

  it('answers 401 without the token or with another one, and the metrics with it', async () => {
    const none = await svc.request('GET', '/metrics', { token: null });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(none.text).not.toContain('detflow_http_requests_total');
    expect((await svc.request('GET', '/metrics', { token: 'scrape-secret-wrong' })).status).toBe(401);
    // An API token is not the metrics token.
    expect((await svc.request('GET', '/metrics')).status).toBe(401);
    const ok = await svc.request('GET', '/metrics', { token: metricsToken });
    expect(ok.status).toBe(200);
    const families = parsePrometheusText(ok.text);
    expect(sampleValue(families, 'detflow_http_requests_total', { method: 'GET', route: '/metrics', status: '401' })).toBe(3);
  });
});
