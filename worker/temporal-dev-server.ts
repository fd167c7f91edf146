import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ALL_SEARCH_ATTRIBUTES } from '../workflows/contracts';

export type DevServer = {
  address: string;
  uiUrl: string | undefined;
  process: ChildProcess;
  /** Resolves when the server process ends, however it ends (a stop included). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
};

export type DevServerOptions = {
  cliPath: string;
  port: number;
  uiPort: number;
  /** SQLite file of the dev server; in memory when undefined (tests). */
  dbFile: string | undefined;
  namespace: string;
  headless?: boolean;
  logFile?: string;
};

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The server process ended before it accepted connections. Its log's last lines are in the message,
 * so the cause shows where the error is reported even when the log's folder is gone by then.
 */
export class DevServerExited extends Error {
  constructor(
    readonly code: number,
    readonly logFile: string | undefined,
  ) {
    super(`temporal server start-dev exited with code ${code}${logFile ? `; see ${logFile}${logTail(logFile)}` : ''}`);
    this.name = 'DevServerExited';
  }
}

function logTail(logFile: string, lines = 15): string {
  let text: string;
  try {
    text = fs.readFileSync(logFile, 'utf8');
  } catch (err) {
    return `; its log could not be read: ${(err as Error).message}`;
  }
  const tail = text.trimEnd().split('\n').slice(-lines).join('\n');
  return tail ? `; its last lines:\n${tail}` : '; its log is empty';
}

/** Starts `temporal server start-dev` with our search attributes and waits until it accepts connections. */
export async function startTemporalDevServer(options: DevServerOptions): Promise<DevServer> {
  if (await portOpen(options.port)) {
    throw new Error(`Port ${options.port} is already in use; set TEMPORAL_PORT to a free port or TEMPORAL_ADDRESS to use the server there`);
  }
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--namespace', options.namespace, '--log-level', 'warn'];
  if (options.headless) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort));
  if (options.dbFile) {
    fs.mkdirSync(path.dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  for (const key of ALL_SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=Keyword`);

  const out = options.logFile ? fs.openSync(options.logFile, 'a') : 'ignore';
  const child = spawn(options.cliPath, args, { stdio: ['ignore', out, out], detached: false });
  let exited: number | null = null;
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = code ?? -1;
      resolve({ code, signal });
    }),
  );
  if (typeof out === 'number') void ended.then(() => fs.closeSync(out));

  const deadline = Date.now() + 60_000;
  while (!(await portOpen(options.port))) {
    if (exited !== null) throw new DevServerExited(exited, options.logFile);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('temporal server start-dev did not accept connections within 60 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    address: `127.0.0.1:${options.port}`,
    uiUrl: options.headless ? undefined : `http://127.0.0.1:${options.uiPort}`,
    process: child,
    exited: ended,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}
