import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';

const LEVELS: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR' };

/**
 * Sends the Temporal SDK's own logs (worker state, bundling, core) through our pino logger, so one
 * process writes one log format. The SDK's bundler is chatty at INFO, so it starts at WARN unless
 * the service runs at debug or trace.
 */
export function installTemporalLogging(logger: Logger): void {
  const level = logger.level === 'debug' || logger.level === 'trace' ? LEVELS[logger.level]! : 'WARN';
  const child = logger.child({ component: 'temporal-sdk' });
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
  });
}
