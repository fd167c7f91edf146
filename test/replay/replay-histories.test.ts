/**
 * Replays every committed history (`histories/*.json`, recorded by `record-histories.ts`) against the
 * current workflow code, so a change that breaks determinism for runs already in flight fails here
 * instead of in production. A deliberate, incompatible change goes behind `patched()`; when old runs
 * no longer matter, re-record the histories (see `record-histories.ts`).
 *
 * Replay runs the workflow code in a replay worker fed from the history: no Temporal server, database
 * or activity is involved, so this file needs no global setup and belongs to the `unit` project.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import * as workflows from '../../workflows';
import { historyFromJSON, type History } from './history-json';

// Every replay starts and stops a worker, each logged at INFO: keep the output to what went wrong.
// A failed replay is reported by the error `runReplayHistory` rejects with, not by these logs.
Runtime.install({ logger: new DefaultLogger('WARN') });

const HISTORIES_DIR = path.join(__dirname, 'histories');
const files = fs
  .readdirSync(HISTORIES_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

type Recorded = { history: History; workflowType: string; workflowId: string };

function load(file: string): Recorded {
  const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8')));
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const workflowType = started?.workflowType?.name;
  const workflowId = started?.workflowId;
  // Both are needed: the type to check coverage, the id because workflows derive child ids from it
  // (replaying under another id would schedule differently named children and fail).
  if (!workflowType || !workflowId) throw new Error(`${file}: the first event is not a workflow start naming its type and id`);
  return { history, workflowType, workflowId };
}

/** `DeployWithApproval` → `deploy-with-approval`: the prefix of its history files. */
const kebab = (name: string) => name.replace(/(?<=[a-z0-9])([A-Z])/g, '-$1').toLowerCase();

const silentLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => process.stderr.write(`${message}\n`),
};
// Bundling takes seconds: once per bundle for the whole file, not per history.
const bundle = (workflowsPath: string) => bundleWorkflowCode({ workflowsPath, logger: silentLogger }).then(({ code }) => ({ code }));

describe('replay of recorded workflow histories', () => {
  let current: { code: string };
  beforeAll(async () => {
    current = await bundle(require.resolve('../../workflows'));
  }, 120_000);

  it('has at least one recorded history of every workflow the worker registers', () => {
    const recorded = new Set(files.map((f) => load(f).workflowType));
    // A new workflow (exported from workflows/index.ts) needs its paths added to the recorder.
    const registered = Object.entries(workflows)
      .filter(([, v]) => typeof v === 'function')
      .map(([name]) => name);
    expect(registered.length).toBeGreaterThan(0);
    expect(registered.filter((name) => !recorded.has(name))).toEqual([]);
  });

  it.each(files)('%s replays against the current workflow code', async (file) => {
    const { history, workflowType, workflowId } = load(file);
    // The file name says which workflow it holds, so a mislabelled recording is caught here.
    expect(file.startsWith(`${kebab(workflowType)}-`)).toBe(true);
    await Worker.runReplayHistory({ workflowBundle: current }, history, workflowId);
  });

  it('fails a workflow changed in a way that breaks determinism', async () => {
    // The history of a real delivery (record, deliver); the fixture's Notify inserts a call between them.
    const { history, workflowType, workflowId } = load('notify-delivered-after-retry.json');
    expect(workflowType).toBe('Notify');
    const changed = await bundle(require.resolve('./fixtures/changed-workflows'));
    const replay = Worker.runReplayHistory({ workflowBundle: changed }, history, workflowId);
    await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
    // And for the inserted call, not some other difference between the fixture and the real Notify.
    await expect(replay).rejects.toThrow(/nondeterminism.*'deliverWebhook'.*'markDeliveryFailed'/i);
  }, 120_000);
});
