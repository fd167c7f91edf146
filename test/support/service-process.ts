import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { request, type TestResponse } from './harness';

const ROOT = path.join(__dirname, '../..');

/** One of the service's entry points (worker/start.ts, api/main.ts, worker/main.ts) in a child process, as an operator runs it. */
export type ServiceProcess = {
  readonly child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  readonly exited: Promise<number | null>;
  /** Waits for `pattern` in what it wrote; fails if it exits first. */
  waitFor(pattern: RegExp, seconds: number): Promise<RegExpExecArray>;
};

export function spawnService(entry: string, env: Record<string, string | undefined>, nodeArgs: readonly string[] = []): ServiceProcess {
  // tsx's loader in this very process (not its CLI, which runs the entry in a second process): a
  // signal to the child is a signal to the service, as `kill -9` of a deployed process would be.
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    async waitFor(pattern, seconds) {
      const deadline = Date.now() + seconds * 1000;
      for (;;) {
        const found = pattern.exec(output);
        if (found) return found;
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
          throw new Error(
            `${entry} ${child.exitCode !== null ? `exited with code ${child.exitCode}` : 'did not write ' + String(pattern)}; it wrote:\n${output.slice(-3000)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/** A port free on loopback now (for a service, a Temporal dev server or a PostgreSQL of a test's own). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The pid of the Temporal dev server listening on `port`, read from /proc (the service's child). */
export function devServerPid(port: number): number | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.includes('start-dev') && args[args.indexOf('--port') + 1] === String(port)) return Number(entry);
    } catch {
      // The process ended while the list was read.
    }
  }
  return undefined;
}

/**
 * A client as CI runs one: the same request (and Idempotency-Key) again after each 503, connection
 * error or 5xx, honouring Retry-After (capped, so a test does not wait out a whole hint), until an
 * answer that is not temporary. Records every request id the service answered with.
 */
export class RetryingClient {
  readonly requestIds: string[] = [];
  readonly refusals: TestResponse[] = [];

  constructor(
    private readonly baseUrl: () => string,
    private readonly token: string,
  ) {}

  async once(method: string, p: string, body?: unknown, headers: Record<string, string> = {}, token = this.token): Promise<TestResponse> {
    const res = await request(this.baseUrl(), method, p, { token, headers, ...(body !== undefined ? { body } : {}) });
    const id = res.headers.get('x-request-id');
    if (id && p.startsWith('/api/v1')) this.requestIds.push(id);
    return res;
  }

  async untilDone(
    method: string,
    p: string,
    body?: unknown,
    options: { key?: string; token?: string; seconds?: number; maxWaitMs?: number; headers?: Record<string, string> } = {},
  ): Promise<TestResponse> {
    const deadline = Date.now() + (options.seconds ?? 120) * 1000;
    const headers = { ...options.headers, ...(options.key ? { 'Idempotency-Key': options.key } : {}) };
    for (;;) {
      let res: TestResponse | undefined;
      try {
        res = await this.once(method, p, body, headers, options.token ?? this.token);
      } catch {
        res = undefined; // the process is down or restarting: try again
      }
      if (res && res.status < 500) return res;
      if (res) this.refusals.push(res);
      if (Date.now() > deadline) throw new Error(`${method} ${p}: still ${res ? `${res.status} ${res.text}` : 'no answer'} after ${options.seconds ?? 120} s`);
      const hinted = Number(res?.headers.get('retry-after') ?? 1) * 1000;
      await new Promise((r) => setTimeout(r, Math.min(hinted, options.maxWaitMs ?? 1_000)));
    }
  }
}
