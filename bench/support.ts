import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export type LoadResult = { requestsPerSecond: number; p50: number; p99: number; errors: number; non2xx: number; total: number };

const AUTOCANNON = path.join(__dirname, '..', 'node_modules', '.bin', 'autocannon');

/**
 * Drives load from a separate process, so the load generator does not share the event loop of the
 * server it measures.
 */
export function loadTest(
  url: string,
  options: { connections: number; seconds: number; headers?: Record<string, string>; method?: string; body?: string },
): Promise<LoadResult> {
  const args = ['-j', '-c', String(options.connections), '-d', String(options.seconds)];
  for (const [k, v] of Object.entries(options.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (options.method) args.push('-m', options.method);
  if (options.body) args.push('-b', options.body);
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile(AUTOCANNON, args, { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err);
      const r = JSON.parse(stdout);
      resolve({
        requestsPerSecond: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        errors: r.errors,
        non2xx: r.non2xx,
        total: r.requests.total,
      });
    });
  });
}

export async function listen(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

export function printTable(rows: Array<Record<string, string | number>>): void {
  const keys = Object.keys(rows[0] ?? {});
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => String(r[k]).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(line(keys) + '\n' + line(widths.map((w) => '-'.repeat(w))) + '\n');
  for (const r of rows) process.stdout.write(line(keys.map((k) => String(r[k]))) + '\n');
}
