import { Registry } from './prometheus';

/**
 * detflow's metrics of one process: the HTTP requests it answered, and what the domain counted
 * (the shape of domain/metrics.ts's DomainMetrics, which the processes pass to the domain). Each
 * process makes one and exposes it at /metrics; nothing is shared between processes or test files.
 */
export type ServiceMetrics = ReturnType<typeof createServiceMetrics>;

export function createServiceMetrics() {
  const registry = new Registry();
  const httpRequests = registry.counter('detflow_http_requests_total', 'HTTP requests answered, by method, route template and status.', ['method', 'route', 'status']);
  const httpDuration = registry.histogram('detflow_http_request_duration_seconds', 'Time to answer an HTTP request, by method, route template and status.', [
    'method',
    'route',
    'status',
  ]);
  const detectionRuns = registry.counter('detflow_detection_runs_total', 'Scheduled-detection runs, by outcome (completed, shadow, skipped, failed).', ['outcome']);
  const alertsRaised = registry.counter('detflow_alerts_raised_total', 'Alerts stored open by detection runs.');
  const alertsSuppressed = registry.counter('detflow_alerts_suppressed_total', 'Alerts stored suppressed because the noise budget was spent.');
  const webhookAttempts = registry.counter('detflow_webhook_attempts_total', 'Webhook delivery attempts, by result (delivered, error).', ['result']);
  const webhookFailures = registry.counter('detflow_webhook_deliveries_failed_total', 'Webhook deliveries given up for good.');
  const eventsIngested = registry.counter('detflow_events_ingested_total', 'Events stored by POST /events.');
  const eventsRejected = registry.counter('detflow_events_rejected_total', 'Event lines POST /events refused (not JSON, no timestamp, ...).');

  const memory = registry.gauge(
    'detflow_process_memory_bytes',
    "The process's memory by where it is held, sampled every 15 s: rss, v8_heap_used, array_buffers (PGlite's WebAssembly memory is one), event_store (DuckDB's own count).",
    ['component'],
  );

  return {
    registry,
    /** The text format 0.0.4 of every metric of this process. */
    expose: () => registry.expose(),
    /** One answered request; `route` is the template (`/api/v1/rules/{id}`), never the concrete path. */
    httpRequest(method: string, route: string, status: number, seconds: number): void {
      const labels = { method, route, status: String(status) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    detectionRun(outcome: 'completed' | 'shadow' | 'skipped' | 'failed'): void {
      detectionRuns.inc({ outcome });
    },
    alerts(raised: number, suppressed: number): void {
      alertsRaised.inc({}, raised);
      alertsSuppressed.inc({}, suppressed);
    },
    webhookAttempt(delivered: boolean): void {
      webhookAttempts.inc({ result: delivered ? 'delivered' : 'error' });
    },
    webhookDeliveryFailed(): void {
      webhookFailures.inc({});
    },
    memory(component: 'rss' | 'v8_heap_used' | 'array_buffers' | 'event_store', bytes: number): void {
      memory.set({ component }, bytes);
    },
    eventsIngested(accepted: number, rejected: number): void {
      eventsIngested.inc({}, accepted);
      eventsRejected.inc({}, rejected);
    },
  };
}
