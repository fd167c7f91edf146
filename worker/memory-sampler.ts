import type { Logger } from 'pino';
import type { ServiceMetrics } from '../lib/metrics/service-metrics';

/**
 * Samples where the process's memory is held into /metrics (`detflow_process_memory_bytes`):
 * an RSS that grows says nothing of what grows. PGlite's WebAssembly memory is an ArrayBuffer, so
 * it shows in `array_buffers`; DuckDB allocates outside V8, so only its own count tells it apart.
 */
export function startMemorySampler(
  deps: { metrics: Pick<ServiceMetrics, 'memory'>; eventStoreBytes: () => Promise<number>; logger: Pick<Logger, 'warn'> },
  everyMs = 15_000,
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const sample = async () => {
    const m = process.memoryUsage();
    deps.metrics.memory('rss', m.rss);
    deps.metrics.memory('v8_heap_used', m.heapUsed);
    deps.metrics.memory('array_buffers', m.arrayBuffers);
    try {
      deps.metrics.memory('event_store', await deps.eventStoreBytes());
    } catch (err) {
      // The readiness probe reports an event store that is away; the gauge keeps its last value.
      deps.logger.warn({ err }, "could not read the event store's memory");
    }
  };
  running = sample();
  const timer = setInterval(() => {
    running = sample();
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
