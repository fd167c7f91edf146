import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { resolveTemporalCli } from '../../worker/temporal-cli';
import { superviseTemporalDevServer } from '../../worker/supervised-dev-server';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

/**
 * The embedded dev server's first start: a server that exits as it starts (as when another process
 * takes a port the CLI picked for itself) is started again, and what its log said is in the error.
 */
describe('the first start of the embedded Temporal dev server', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-first-start-'));
  const logger = pino({ level: 'silent' });
  const backoff = { initialMs: 20, maxMs: 100, healthyAfterMs: 60_000 };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A CLI that fails its first `failures` starts (counted in a file), then is the real one. */
  const flakyCli = (name: string, failures: number) => {
    const script = path.join(dir, name);
    const count = path.join(dir, `${name}.count`);
    fs.writeFileSync(
      script,
      `#!/bin/sh\nn=$(cat '${count}' 2>/dev/null || echo 0)\necho $((n + 1)) > '${count}'\n` +
        `if [ "$n" -lt ${failures} ]; then echo "listen tcp 127.0.0.1:7235: bind: address already in use (start $((n + 1)))"; exit 1; fi\n` +
        `exec '${resolveTemporalCli()}' "$@"\n`,
      { mode: 0o755 },
    );
    return { script, starts: () => Number(fs.readFileSync(count, 'utf8')) };
  };

  it('starts a server that exited as it started again, and runs', async () => {
    const cli = flakyCli('exits-once', 1);
    const server = await superviseTemporalDevServer(
      { cliPath: cli.script, port: await freePort(), uiPort: 0, dbFile: undefined, namespace: 'default', headless: true, logFile: path.join(dir, 'once.log') },
      logger,
      backoff,
    );
    try {
      expect(cli.starts()).toBe(2);
      expect(server.restarts()).toBe(0);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('gives up after three starts, with the end of the server log in the error', async () => {
    const cli = flakyCli('always-exits', 100);
    const started = superviseTemporalDevServer(
      { cliPath: cli.script, port: await freePort(), uiPort: 0, dbFile: undefined, namespace: 'default', headless: true, logFile: path.join(dir, 'always.log') },
      logger,
      backoff,
    );
    await expect(started).rejects.toThrow(/exited with code 1; see .*always\.log; its last lines:\n(.*\n)*.*address already in use \(start 3\)/);
    expect(cli.starts()).toBe(3);
  });

  it('does not try again when its own port is taken', async () => {
    const cli = flakyCli('port-taken', 0);
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      await expect(
        superviseTemporalDevServer({ cliPath: cli.script, port, uiPort: 0, dbFile: undefined, namespace: 'default', headless: true }, logger, backoff),
      ).rejects.toThrow(`Port ${port} is already in use`);
      expect(fs.existsSync(path.join(dir, 'port-taken.count'))).toBe(false);
    } finally {
      taken.close();
    }
  });
});
