import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiDeps } from './context';
import { buildApp } from './app';
import { DEFAULT_BODY_TIMEOUT_SECONDS } from './http/body-deadline';
import { DependencyMonitor } from '../lib/dependency-monitor';
import { probeTemporal } from '../worker/temporal-client';

export type RunningApi = {
  url: string;
  server: http.Server;
  /** Graceful: see below. `graceMs` bounds how long requests in flight may take to finish. */
  close(graceMs?: number): Promise<void>;
  flush(): Promise<void>;
};

const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** Listens on host:port (0 picks a free port) and closes gracefully: stop accepting, drain, write what is held in memory. */
export async function startApi(deps: ApiDeps, host: string, port: number): Promise<RunningApi> {
  // A process that watches its dependencies itself (npm start) passes its monitor; otherwise the
  // API watches the two it cannot answer without.
  const ownReadiness = deps.readiness
    ? undefined
    : new DependencyMonitor({ probes: { database: () => deps.database.ping(), temporal: () => probeTemporal(deps.temporal.client, 2_000) } });
  const readiness = deps.readiness ?? ownReadiness!;
  await ownReadiness?.start();
  const { app, flush, drain } = buildApp({ ...deps, readiness });
  const server = http.createServer(app);
  // Keep-alive longer than common load balancer idle timeouts, so they close first.
  server.keepAliveTimeout = 65_000;
  // Node's own request timeout answers a bare 408 with no body: it is set past the application's
  // body deadline (api/http/body-deadline.ts), which answers a 408 problem first. That deadline
  // starts once the headers are in (at most headersTimeout), and Node checks its timeouts every
  // connectionsCheckingInterval.
  server.requestTimeout = server.headersTimeout + (deps.config.bodyTimeoutSeconds ?? DEFAULT_BODY_TIMEOUT_SECONDS) * 1000 + 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    server,
    flush,
    close: async (graceMs = DEFAULT_SHUTDOWN_GRACE_MS) => {
      // Stop taking work, let what runs finish (within the grace), then cut what is left: a long
      // poll sees its client gone and ends. Only then are the audit rows written and the caller
      // free to close the database under no handler.
      drain.startDraining();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await drain.settled(graceMs);
      server.closeAllConnections();
      const left = await drain.settled(2_000);
      if (left > 0) deps.logger.warn({ requests: left }, 'requests still running after the shutdown grace');
      await closed;
      await flush();
      ownReadiness?.stop();
    },
  };
}
