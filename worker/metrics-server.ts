import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerMatches } from '../lib/metrics/bearer';
import { PROMETHEUS_CONTENT_TYPE } from '../lib/metrics/prometheus';
import type { ServiceMetrics } from '../lib/metrics/service-metrics';

/**
 * GET /metrics of a worker running on its own (worker/main.ts), which has no API to serve it: the
 * same text and the same token rule (DETFLOW_METRICS_TOKEN) as the API's /metrics. Nothing else.
 */
export async function startMetricsServer(
  metrics: ServiceMetrics,
  options: { host: string; port: number; token: string | undefined },
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: this port serves GET /metrics only\n');
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Method not allowed\n');
    } else if (!bearerMatches(req.headers.authorization, options.token)) {
      res
        .writeHead(401, { 'www-authenticate': 'Bearer realm="detflow"', 'content-type': 'text/plain; charset=utf-8' })
        .end('GET /metrics needs the metrics token (DETFLOW_METRICS_TOKEN)\n');
    } else {
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : metrics.expose());
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
