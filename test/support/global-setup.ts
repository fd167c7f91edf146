import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { resolveTemporalCli } from '../../worker/temporal-cli';
import { startTemporalDevServer } from '../../worker/temporal-dev-server';
import { WORKFLOWS_PATH } from '../../worker/create-worker';
import net from 'node:net';

type Shared = { stop?: () => Promise<void>; dir?: string };
const shared = globalThis as typeof globalThis & { __detflowTest?: Shared };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.once('error', reject);
  });
}

/**
 * Once per test run: a real Temporal dev server (unless TEMPORAL_ADDRESS points at one) and the
 * workflow bundle, built once and shared by every test file's workers.
 */
export default async function globalSetup(): Promise<void> {
  if (shared.__detflowTest) return; // both database projects share one server
  shared.__detflowTest = {};
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-test-'));
  shared.__detflowTest.dir = dir;
  if (!process.env.TEMPORAL_ADDRESS) {
    const cliPath = resolveTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH, log: (m) => process.stderr.write(`${m}\n`) });
    const server = await startTemporalDevServer({
      cliPath,
      port: await freePort(),
      uiPort: 0,
      dbFile: undefined,
      namespace: 'default',
      headless: true,
      logFile: path.join(dir, 'temporal.log'),
    });
    shared.__detflowTest.stop = server.stop;
    process.env.TEMPORAL_ADDRESS = server.address;
    process.env.DETFLOW_TEST_TEMPORAL_PID = String(server.process.pid);
  }
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silentLogger });
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, code);
  process.env.DETFLOW_TEST_WORKFLOW_BUNDLE = bundlePath;
}

const silentLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => process.stderr.write(`${message}\n`),
};
