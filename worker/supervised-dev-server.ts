import type { Logger } from 'pino';
import { DevServerExited, startTemporalDevServer, type DevServer, type DevServerOptions } from './temporal-dev-server';

export type SupervisedDevServer = {
  address: string;
  uiUrl: string | undefined;
  /** How many times the server was started again after it ended on its own. */
  restarts(): number;
  /** The server process of the moment (tests kill it to see it come back). */
  current(): DevServer;
  /**
   * Stops the server cleanly, runs `fn` while nothing writes its database file (a backup copies it),
   * then starts it again on the same file; runs go on where they were, as after a restart.
   */
  pausedWhile<T>(fn: () => Promise<T>): Promise<T>;
  stop(): Promise<void>;
};

export type RestartBackoff = {
  /** The first wait after an exit; doubled at each exit that follows soon after, up to `maxMs`. */
  initialMs: number;
  maxMs: number;
  /** A server that ran this long before it ended starts the next wait from `initialMs` again. */
  healthyAfterMs: number;
};

const DEFAULT_BACKOFF: RestartBackoff = { initialMs: 1_000, maxMs: 30_000, healthyAfterMs: 60_000 };

/** Starts of a server that exits before it listens, before the service gives up starting. */
const FIRST_START_ATTEMPTS = 3;

/**
 * The first start, tried again when the server exits before it accepts connections: the CLI picks
 * free ports for its internal services itself, and another process can take one between its pick
 * and its bind (seen once in CI). A port of ours already in use, or a server that never listens,
 * is not tried again.
 */
async function firstStart(options: DevServerOptions, logger: Logger, backoff: RestartBackoff): Promise<DevServer> {
  let delay = backoff.initialMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startTemporalDevServer(options);
    } catch (err) {
      if (!(err instanceof DevServerExited) || attempt >= FIRST_START_ATTEMPTS) throw err;
      logger.error({ err, attempt, retryInMs: delay }, 'the Temporal dev server exited as it started; starting it again');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, backoff.maxMs);
    }
  }
}

/**
 * The embedded Temporal dev server, started again whenever it ends on its own (killed, crashed),
 * on the same port and the same database file, so the runs it held go on where they were. The
 * client and the worker reconnect by themselves; while the server is away the process's dependency
 * monitor reports Temporal down and the API refuses what needs it with 503.
 */
export async function superviseTemporalDevServer(options: DevServerOptions, logger: Logger, backoff: RestartBackoff = DEFAULT_BACKOFF): Promise<SupervisedDevServer> {
  let server = await firstStart(options, logger, backoff);
  let startedAt = Date.now();
  let restarts = 0;
  let stopping = false;
  // Set while pausedWhile holds the server stopped: the watch waits for it instead of restarting.
  let paused: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const watch = async () => {
    let delay = backoff.initialMs;
    while (!stopping) {
      const { code, signal } = await server.exited;
      if (stopping) return;
      if (paused) {
        await paused;
        continue;
      }
      if (Date.now() - startedAt >= backoff.healthyAfterMs) delay = backoff.initialMs;
      logger.error(
        { code, signal, logFile: options.logFile, restartInMs: delay },
        `the Temporal dev server ended (${signal ?? `exit code ${code}`}); starting it again on the same database file`,
      );
      for (;;) {
        await pause(delay);
        delay = Math.min(delay * 2, backoff.maxMs);
        if (stopping) return;
        try {
          server = await startTemporalDevServer(options);
          // A stop asked while it was starting stops this one too (stop() awaits this loop).
          if (stopping) return await server.stop();
          startedAt = Date.now();
          restarts++;
          logger.info({ restarts, address: server.address }, 'the Temporal dev server is running again');
          break;
        } catch (err) {
          logger.error({ err, retryInMs: delay }, 'the Temporal dev server could not be started again');
        }
      }
    }
  };
  const watching = watch();

  return {
    address: server.address,
    uiUrl: server.uiUrl,
    restarts: () => restarts,
    current: () => server,
    pausedWhile: async <T>(fn: () => Promise<T>): Promise<T> => {
      if (paused) throw new Error('the Temporal dev server is paused already');
      let resume!: () => void;
      paused = new Promise<void>((r) => (resume = r));
      try {
        await server.stop();
        logger.info('the Temporal dev server is stopped for a backup');
        return await fn();
      } finally {
        try {
          if (!stopping) {
            server = await startTemporalDevServer(options);
            startedAt = Date.now();
            logger.info({ address: server.address }, 'the Temporal dev server is running again after the backup');
          }
        } finally {
          paused = undefined;
          resume();
        }
      }
    },
    stop: async () => {
      stopping = true;
      wake?.();
      await server.stop();
      await watching;
    },
  };
}
