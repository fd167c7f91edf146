import { loadConfig } from '../../config/env';
import { Registry } from '../../lib/metrics/prometheus';
import { createServiceMetrics } from '../../lib/metrics/service-metrics';
import { startMetricsServer } from '../../worker/metrics-server';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text';

describe('the metrics registry', () => {
  it('escapes label values and help text, and keeps histogram buckets cumulative', () => {
    const registry = new Registry();
    const c = registry.counter('x_total', 'Help with \\ and\na newline.', ['path']);
    c.inc({ path: 'a"b\\c\nd' }, 2);
    const h = registry.histogram('x_seconds', 'Latency.', ['route'], [0.1, 1]);
    h.observe({ route: '/r' }, 0.05);
    h.observe({ route: '/r' }, 0.5);
    h.observe({ route: '/r' }, 5);
    const text = registry.expose();
    expect(text).toContain('# HELP x_total Help with \\\\ and\\na newline.');
    expect(text).toContain('x_total{path="a\\"b\\\\c\\nd"} 2');
    const families = parsePrometheusText(text);
    expect(sampleValue(families, 'x_total', { path: 'a"b\\c\nd' })).toBe(2);
    expect([0.1, 1, '+Inf'].map((le) => sampleValue(families, 'x_seconds_bucket', { route: '/r', le: String(le) }))).toEqual([1, 2, 3]);
    expect(sampleValue(families, 'x_seconds_sum', { route: '/r' })).toBeCloseTo(5.55);
    expect(() => c.inc({ path: 'p' }, -1)).toThrow(/only goes up/);
    expect(() => registry.counter('x_total', 'again')).toThrow(/twice/);
  });

  it('reads the metrics settings from the environment', () => {
    expect(loadConfig({})).toMatchObject({ metricsToken: undefined, workerMetricsPort: undefined });
    expect(loadConfig({ DETFLOW_METRICS_TOKEN: 's3cret', DETFLOW_WORKER_METRICS_PORT: '9464' })).toMatchObject({ metricsToken: 's3cret', workerMetricsPort: 9464 });
    expect(() => loadConfig({ DETFLOW_WORKER_METRICS_PORT: 'nine' })).toThrow(/DETFLOW_WORKER_METRICS_PORT/);
    // The Temporal SDK's own exporter: off unless an address is given, and only a host:port.
    expect(loadConfig({}).temporalMetricsAddress).toBeUndefined();
    expect(loadConfig({ DETFLOW_TEMPORAL_METRICS_ADDRESS: ' ' }).temporalMetricsAddress).toBeUndefined();
    for (const address of ['0.0.0.0:9465', 'localhost:9465', '[::]:9465'])
      expect(loadConfig({ DETFLOW_TEMPORAL_METRICS_ADDRESS: address }).temporalMetricsAddress).toBe(address);
    for (const bad of ['9465', 'http://0.0.0.0:9465', '0.0.0.0:99999', '0.0.0.0:'])
      expect(() => loadConfig({ DETFLOW_TEMPORAL_METRICS_ADDRESS: bad })).toThrow(/DETFLOW_TEMPORAL_METRICS_ADDRESS/);
  });
});

describe("the standalone worker's /metrics", () => {
  it('serves the registry, behind the metrics token when one is set', async () => {
    const metrics = createServiceMetrics();
    metrics.detectionRun('completed');
    const server = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0, token: 'scrape-token' });
    try {
      expect((await fetch(server.url)).status).toBe(401);
      expect((await fetch(server.url, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
      expect((await fetch(server.url.replace('/metrics', '/other'), { headers: { authorization: 'Bearer scrape-token' } })).status).toBe(404);
      const ok = await fetch(server.url, { headers: { authorization: 'Bearer scrape-token' } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(sampleValue(parsePrometheusText(await ok.text()), 'detflow_detection_runs_total', { outcome: 'completed' })).toBe(1);
    } finally {
      await server.close();
    }
  });
});
