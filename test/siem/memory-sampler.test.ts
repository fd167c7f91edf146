import { LocalEventStore } from '../../siem/local/event-store';
import { createServiceMetrics } from '../../lib/metrics/service-metrics';
import { startMemorySampler } from '../../worker/memory-sampler';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text';

describe("the process's memory in /metrics", () => {
  it("exposes where the memory is held, with DuckDB's own count of the event store", async () => {
    const store = await LocalEventStore.open({ path: ':memory:' });
    try {
      const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ ts: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), CommandLine: `cmd ${i}` }));
      expect((await store.ingest('acme', 'local', { kind: 'ndjson', input: lines.join('\n') }, { timestampField: 'ts' })).accepted).toBe(20_000);
      const metrics = createServiceMetrics();
      const warnings: unknown[] = [];
      const sampler = startMemorySampler({ metrics, eventStoreBytes: () => store.memoryBytes(), logger: { warn: (o: unknown) => warnings.push(o) } }, 60_000);
      await sampler.stop();
      const families = parsePrometheusText(metrics.expose());
      const bytes = (component: string) => sampleValue(families, 'detflow_process_memory_bytes', { component });
      expect(bytes('rss')).toBeGreaterThan(bytes('v8_heap_used')!);
      expect(bytes('v8_heap_used')).toBeGreaterThan(0);
      expect(bytes('array_buffers')).toBeGreaterThanOrEqual(0);
      // DuckDB holds memory once it holds events; its count is its own, not the process's.
      expect(bytes('event_store')).toBeGreaterThan(0);
      expect(bytes('event_store')).toBeLessThan(bytes('rss')!);
      expect(warnings).toEqual([]);
      expect(metrics.expose()).toContain('# TYPE detflow_process_memory_bytes gauge');
    } finally {
      await store.close();
    }
  });

  it('keeps the last value and says why when the event store cannot be read', async () => {
    const metrics = createServiceMetrics();
    const warnings: unknown[] = [];
    const sampler = startMemorySampler({ metrics, eventStoreBytes: () => Promise.reject(new Error('closed')), logger: { warn: (o: unknown) => warnings.push(o) } }, 60_000);
    await sampler.stop();
    expect(metrics.expose()).not.toContain('component="event_store"');
    expect(metrics.expose()).toContain('component="rss"');
    expect(warnings).toHaveLength(1);
  });
});
