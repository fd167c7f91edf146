import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiDeps } from './context';
import { buildApp } from './app';
import { DEFAULT_BODY_TIMEOUT_SECONDS } from './http/body-deadline';

export type RunningApi = { url: string; server: http.Server; close(): Promise<void>; flush(): Promise<void> };

/** Listens on host:port (0 picks a free port) and closes gracefully: stop accepting, drain, write what is held in memory. */
export async function startApi(deps: ApiDeps, host: string, port: number): Promise<RunningApi> {
  const { app, flush } = buildApp(deps);
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
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      });
      await flush();
    },
  };
}
