import { DefaultLogger, Runtime, type LogLevel, type TelemetryOptions } from '@temporalio/worker';
import type { Logger } from 'pino';

const LEVELS: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR' };

export type TemporalTelemetry = {
  /**
   * `host:port` where the SDK serves its own metrics (task slots, polls, workflow and activity
   * outcomes, request latencies) for Prometheus at `/metrics`; none when unset.
   */
  sdkMetricsAddress?: string | undefined;
};

/**
 * Installs the process's Temporal SDK runtime, once, before any NativeConnection or Worker exists
 * (the SDK takes its telemetry from the runtime they are created in, and a runtime cannot be
 * changed once installed):
 * - the SDK's own logs (worker state, bundling, core) go through our pino logger, so one process
 *   writes one log format; the bundler is chatty at INFO, so it starts at WARN unless the service
 *   runs at debug or trace;
 * - with `sdkMetricsAddress`, the SDK's Prometheus exporter, with the SDK's own names and units
 *   (the SDK metrics reference: `temporal_` prefix, counters without `_total`, durations in ms);
 * - with `ownSignals`, SIGINT and SIGTERM are the process's to handle, not the SDK's.
 */
export function installTemporalRuntime(logger: Logger, telemetry: TemporalTelemetry = {}, options: { ownSignals?: boolean } = {}): void {
  const level = logger.level === 'debug' || logger.level === 'trace' ? LEVELS[logger.level]! : 'WARN';
  const child = logger.child({ component: 'temporal-sdk' });
  const telemetryOptions: TelemetryOptions | undefined = telemetry.sdkMetricsAddress ? { metrics: { prometheus: { bindAddress: telemetry.sdkMetricsAddress } } } : undefined;
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => {
      const meta = entry.meta ?? {};
      switch (entry.level) {
        case 'TRACE':
          return child.trace(meta, entry.message);
        case 'DEBUG':
          return child.debug(meta, entry.message);
        case 'INFO':
          return child.info(meta, entry.message);
        case 'WARN':
          return child.warn(meta, entry.message);
        default:
          return child.error(meta, entry.message);
      }
    }),
    ...(telemetryOptions ? { telemetryOptions } : {}),
    // A process that orders its own shutdown (the API drains before the worker stops) keeps the
    // SDK from stopping the worker on the same signal behind its back.
    ...(options.ownSignals ? { shutdownSignals: [] } : {}),
  });
}
