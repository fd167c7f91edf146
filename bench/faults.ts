import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { resolveTemporalCli } from '../worker/temporal-cli';
import { startTemporalDevServer, type DevServer } from '../worker/temporal-dev-server';
import { imageRule } from '../test/support/harness';
import { startOwnPostgres, type OwnPostgres } from '../test/support/own-postgres';
import { freePort, RetryingClient, spawnService, type ServiceProcess } from '../test/support/service-process';
import { seededRandom } from '../lib/seeded-random';
import { workflowIds } from '../workflows/contracts';

/**
 * Fault injection: the scaled topology (api/main.ts and worker/main.ts as separate processes, on a
 * PostgreSQL server and a Temporal dev server of its own), and per trial one `kill -9` of the
 * worker or of the API at a random moment of one scenario (deploy with approval, rollback, replay,
 * shadow, scheduled detection) while a client retries as CI would, with the same Idempotency-Key.
 * Then the scenario's effects are counted in the database, in Temporal and at a webhook receiver:
 * each expected once; more is a duplicate, none a loss.
 *
 *   npm run bench:faults -- --trials 50 [--seed 7]
 */

export type Victim = 'worker' | 'api';
export type ScenarioName = 'deploy-with-approval' | 'rollback' | 'replay' | 'shadow' | 'scheduled-detection';
export const SCENARIOS: readonly ScenarioName[] = ['deploy-with-approval', 'rollback', 'replay', 'shadow', 'scheduled-detection'];

/** How long each scenario usually takes without a fault: kills are drawn within it. */
const KILL_WINDOW_MS: Record<ScenarioName, number> = {
  'deploy-with-approval': 6_000,
  rollback: 7_000,
  replay: 3_000,
  shadow: 5_000,
  'scheduled-detection': 5_000,
};

export type EffectCount = { effect: string; expected: number; found: number };
export type TrialResult = {
  trial: number;
  scenario: ScenarioName;
  victim: Victim;
  killAfterMs: number;
  /** Whether the kill came before the scenario's last step ended (a kill after it tests nothing). */
  killedMidRun: boolean;
  seconds: number;
  effects: EffectCount[];
  error?: string;
};
export type FaultSummary = {
  trials: number;
  killedMidRun: number;
  expected: number;
  found: number;
  duplicates: number;
  losses: number;
  failedTrials: number;
  results: TrialResult[];
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Stack {
  api!: ServiceProcess;
  worker!: ServiceProcess;
  ci!: RetryingClient;
  reviewer!: string;
  db!: pg.Client;
  temporalClient!: Client;
  readonly received: Array<{ id: string; event: string; body: string }> = [];
  private receiver!: http.Server;
  private env: Record<string, string> = {};
  private dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-faults-'));
  private connection!: Connection;

  constructor(
    private readonly own: OwnPostgres,
    private readonly temporal: DevServer,
  ) {}

  static async start(): Promise<Stack> {
    const own = await startOwnPostgres();
    const [tPort, uiPort] = [await freePort(), await freePort()];
    const temporal = await startTemporalDevServer({
      cliPath: resolveTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH, log: () => undefined }),
      port: tPort,
      uiPort,
      dbFile: undefined,
      namespace: 'default',
      headless: true,
    });
    const stack = new Stack(own, temporal);
    await stack.boot();
    return stack;
  }

  private async boot(): Promise<void> {
    this.receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const parsed = JSON.parse(body) as { delivery_id: string; event: string };
        this.received.push({ id: parsed.delivery_id, event: parsed.event, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => this.receiver.listen(0, '127.0.0.1', r));
    this.env = {
      DATABASE_URL: this.own.url,
      TEMPORAL_ADDRESS: this.temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      DATA_DIR: this.dataDir,
      DETFLOW_SECRET_KEY: 'a passphrase for the fault suite only',
      PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    };
    this.api = spawnService('api/main.ts', this.env);
    const admin = (await this.api.waitFor(/Bootstrap admin token[^:]*: (\S+)/, 180))[1]!;
    this.ci = new RetryingClient(() => `http://127.0.0.1:${this.env.PORT}`, admin);
    await this.listening();
    this.worker = spawnService('worker/main.ts', this.env);
    this.db = new pg.Client(this.own.url);
    await this.db.connect();
    this.connection = await Connection.connect({ address: this.temporal.address });
    this.temporalClient = new Client({ connection: this.connection });

    const hook = await this.ci.untilDone('PUT', '/api/v1/settings/webhook', {
      url: `http://127.0.0.1:${(this.receiver.address() as net.AddressInfo).port}/hook`,
      secret: 'a-webhook-secret-of-some-length',
    });
    if (hook.status !== 200) throw new Error(`webhook setup: ${hook.status} ${hook.text}`);
    const local = (await this.ci.untilDone('GET', '/api/v1/settings/targets/local')).body;
    const put = await this.ci.untilDone('PUT', '/api/v1/settings/targets/local', {
      name: local.name,
      kind: local.kind,
      environment: local.environment,
      connection: local.connection,
      cost_model: local.cost_model,
      detection_interval: 'PT1S',
    });
    if (put.status !== 200) throw new Error(`target setup: ${put.status} ${put.text}`);
    const reviewer = await this.ci.untilDone('POST', '/api/v1/settings/api-keys', { name: 'reviewer', permissions: ['approve', 'rules:read'], principal: 'reviewer' });
    this.reviewer = reviewer.body.token as string;
  }

  /** `kill -9` of one process, then the same process started again, as a supervisor (systemd, Kubernetes) would. */
  async kill(victim: Victim): Promise<void> {
    const proc = this[victim];
    proc.child.kill('SIGKILL');
    await proc.exited;
    this[victim] = spawnService(victim === 'api' ? 'api/main.ts' : 'worker/main.ts', this.env);
    if (victim === 'api') await this.listening();
  }

  /** The API answers again (its log is at warn level: nothing says so there). */
  private async listening(): Promise<void> {
    await untilValue('the API to listen', async () => ((await this.ci.once('GET', '/healthz', undefined, {}, '')).status === 200 ? true : undefined), 180);
  }

  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.db.query(sql, params)).rows as T[];
  }

  async scheduleExists(id: string): Promise<number> {
    try {
      await this.temporalClient.schedule.getHandle(id).describe();
      return 1;
    } catch {
      return 0;
    }
  }

  async stop(): Promise<void> {
    for (const proc of [this.api, this.worker]) {
      if (proc && proc.child.exitCode === null && proc.child.signalCode === null) {
        proc.child.kill('SIGKILL');
        await proc.exited;
      }
    }
    await this.connection?.close().catch(() => undefined);
    await this.db?.end().catch(() => undefined);
    this.receiver?.closeAllConnections();
    this.receiver?.close();
    await this.temporal.stop();
    this.own.destroy();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

type Scenario = (s: Stack, t: { rule: string; key: (step: string) => string; killedAt: () => number }) => Promise<EffectCount[]>;

async function untilValue<T>(what: string, fn: () => Promise<T | undefined>, seconds: number): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

const expectOk = <R extends { status: number; text: string }>(res: R, what: string): R => {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res;
};

async function waitDeployment(s: Stack, id: string, status = 'active'): Promise<void> {
  await untilValue(
    `deployment ${id} ${status}`,
    async () => ((await s.ci.untilDone('GET', `/api/v1/deployments/${id}?wait=5`)).body?.status === status ? true : undefined),
    240,
  );
}

/** The webhook deliveries of one event about one subject: distinct delivery ids received (redeliveries of one id are one effect). */
function deliveriesAbout(s: Stack, event: string, subject: string): number {
  return new Set(s.received.filter((r) => r.event === event && r.body.includes(subject)).map((r) => r.id)).size;
}

async function deploy(s: Stack, rule: string, key: string, extra: Record<string, unknown> = {}) {
  return expectOk(
    await s.ci.untilDone('POST', '/api/v1/rules/deploy', { rule_id: rule, target: 'local', approval_required: false, ...extra }, { key, seconds: 240 }),
    'deploy',
  );
}

async function deployedOnce(s: Stack, rule: string, deploymentId: string): Promise<EffectCount[]> {
  const rows = await s.query<{ n: number }>("select count(*)::int as n from deployments where rule_id = $1 and status = 'active'", [rule]);
  const [target] = await s.query<{ target_id: string }>('select target_id from deployments where id = $1', [deploymentId]);
  await untilValue('the deployment.succeeded webhook', async () => (deliveriesAbout(s, 'deployment.succeeded', deploymentId) >= 1 ? true : undefined), 120).catch(
    () => undefined,
  );
  return [
    { effect: 'deployment', expected: 1, found: rows[0]!.n },
    // Scheduled detection's default design: one schedule for the tenant and target.
    { effect: 'detection schedule of the tenant and target', expected: 1, found: await s.scheduleExists(workflowIds.detectionBatchSchedule('default', target!.target_id)) },
    { effect: 'webhook deployment.succeeded', expected: 1, found: deliveriesAbout(s, 'deployment.succeeded', deploymentId) },
  ];
}

const scenarios: Record<ScenarioName, Scenario> = {
  'deploy-with-approval': async (s, t) => {
    expectOk(await s.ci.untilDone('POST', '/api/v1/rules', { rule: imageRule(t.rule, 'approved.exe') }, { key: t.key('rule') }), 'create rule');
    const waiting = await deploy(s, t.rule, t.key('deploy'), { approval_required: true });
    const approval = (waiting.body.links.approval as string).split('/').at(-1)!;
    expectOk(
      await s.ci.untilDone('POST', `/api/v1/approvals/${approval}/decision`, { decision: 'approve' }, { key: t.key('approve'), token: s.reviewer, seconds: 240 }),
      'approve',
    );
    await waitDeployment(s, waiting.body.id);
    const approvals = await s.query<{ n: number }>("select count(*)::int as n from approvals where rule_id = $1 and status = 'approved'", [t.rule]);
    return [{ effect: 'approval', expected: 1, found: approvals[0]!.n }, ...(await deployedOnce(s, t.rule, waiting.body.id))];
  },
  rollback: async (s, t) => {
    expectOk(await s.ci.untilDone('POST', '/api/v1/rules', { rule: imageRule(t.rule, 'rolled.exe', 1) }, { key: t.key('rule-1') }), 'create rule');
    const v1 = await deploy(s, t.rule, t.key('deploy-1'));
    await waitDeployment(s, v1.body.id);
    expectOk(await s.ci.untilDone('POST', '/api/v1/rules', { rule: imageRule(t.rule, 'rolled.exe', 2) }, { key: t.key('rule-2') }), 'update rule');
    const v2 = await deploy(s, t.rule, t.key('deploy-2'), { version: 2 });
    await waitDeployment(s, v2.body.id);
    const rb = expectOk(
      await s.ci.untilDone('POST', '/api/v1/rules/rollback', { rule_id: t.rule, target: 'local', reason: 'fault suite' }, { key: t.key('rollback'), seconds: 240 }),
      'rollback',
    );
    await untilValue('the rollback to complete', async () => ((await s.temporalClient.workflow.getHandle(rb.body.workflow_id as string).result()) ? true : undefined), 240);
    const active = await s.query<{ version: number }>("select version from deployments where rule_id = $1 and status = 'active'", [t.rule]);
    const rolled = await s.query<{ n: number }>("select count(*)::int as n from deployments where rule_id = $1 and version = 2 and status = 'rolled_back'", [t.rule]);
    await untilValue('the rollback.completed webhook', async () => (deliveriesAbout(s, 'rollback.completed', t.rule) >= 1 ? true : undefined), 120).catch(() => undefined);
    return [
      {
        effect: 'active deployment of v1 after rollback',
        expected: 1,
        found: active.filter((a) => a.version === 1).length + 2 * active.filter((a) => a.version !== 1).length,
      },
      { effect: 'v2 rolled back', expected: 1, found: rolled[0]!.n },
      { effect: 'webhook rollback.completed', expected: 1, found: deliveriesAbout(s, 'rollback.completed', t.rule) },
    ];
  },
  replay: async (s, t) => {
    expectOk(await s.ci.untilDone('POST', '/api/v1/rules', { rule: imageRule(t.rule, 'replayed.exe') }, { key: t.key('rule') }), 'create rule');
    const now = Date.now();
    const body = { rule_id: t.rule, target: 'local', from: new Date(now - 86_400_000).toISOString(), to: new Date(now).toISOString() };
    const started = expectOk(await s.ci.untilDone('POST', '/api/v1/rules/replay', body, { key: t.key('replay'), seconds: 240 }), 'replay');
    await untilValue(
      'the replay to complete',
      async () => ((await s.ci.untilDone('GET', `/api/v1/replays/${started.body.id}?wait=5`)).body?.status === 'completed' ? true : undefined),
      240,
    );
    const rows = await s.query<{ n: number }>("select count(*)::int as n from replays where rule_id = $1 and status = 'completed'", [t.rule]);
    return [{ effect: 'replay', expected: 1, found: rows[0]!.n }];
  },
  shadow: async (s, t) => {
    expectOk(await s.ci.untilDone('POST', '/api/v1/rules', { rule: imageRule(t.rule, 'shadowed.exe') }, { key: t.key('rule') }), 'create rule');
    const started = expectOk(
      await s.ci.untilDone('POST', '/api/v1/rules/shadow', { rule_id: t.rule, target: 'local', duration: 'PT4S', interval: 'PT1S' }, { key: t.key('shadow'), seconds: 240 }),
      'shadow',
    );
    await untilValue(
      'the shadow run to complete',
      async () => ((await s.ci.untilDone('GET', `/api/v1/shadows/${started.body.id}?wait=5`)).body?.status === 'completed' ? true : undefined),
      240,
    );
    const rows = await s.query<{ n: number }>("select count(*)::int as n from shadow_runs where rule_id = $1 and status = 'completed'", [t.rule]);
    return [{ effect: 'shadow run', expected: 1, found: rows[0]!.n }];
  },
  'scheduled-detection': async (s, t) => {
    expectOk(await s.ci.untilDone('POST', '/api/v1/rules', { rule: imageRule(t.rule, 'detected.exe') }, { key: t.key('rule') }), 'create rule');
    const d = await deploy(s, t.rule, t.key('deploy'));
    await waitDeployment(s, d.body.id);
    // Detection goes on after the kill: runs started after it, none of them recorded twice.
    await untilValue(
      'a detection run after the kill',
      async () => {
        const killedAt = t.killedAt();
        if (!killedAt) return undefined;
        const rows = await s.query<{ n: number }>('select count(*)::int as n from detection_runs where deployment_id = $1 and started_at > $2', [
          d.body.id,
          new Date(killedAt),
        ]);
        return rows[0]!.n >= 2 ? true : undefined;
      },
      240,
    );
    const twice = await s.query<{ n: number }>(
      'select count(*)::int as n from (select activity_key from detection_runs where deployment_id = $1 and activity_key is not null group by activity_key having count(*) > 1) d',
      [d.body.id],
    );
    const overlapping = await s.query<{ n: number }>(
      'select count(*)::int as n from detection_runs a join detection_runs b on a.deployment_id = b.deployment_id and a.id < b.id and a.cursor_from < b.cursor_to and b.cursor_from < a.cursor_to where a.deployment_id = $1',
      [d.body.id],
    );
    return [
      ...(await deployedOnce(s, t.rule, d.body.id)),
      { effect: 'detection runs after the kill (each once, windows disjoint)', expected: 1, found: 1 + twice[0]!.n + overlapping[0]!.n },
    ];
  },
};

export async function runFaultTrials(options: { trials: number; seed?: number; log?: (line: string) => void }): Promise<FaultSummary> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const random = seededRandom(options.seed ?? Date.now());
  const stack = await Stack.start();
  const results: TrialResult[] = [];
  try {
    for (let trial = 1; trial <= options.trials; trial++) {
      const scenario = SCENARIOS[(trial - 1) % SCENARIOS.length]!;
      // Mostly the worker, which holds the runs; the API sometimes, under requests in flight.
      const victim: Victim = random() < 0.7 ? 'worker' : 'api';
      // Within the scenario's usual span on an idle stack (setup included), so most kills land mid-run.
      const killAfterMs = Math.floor(random() * KILL_WINDOW_MS[scenario]);
      const rule = `fa${String(trial).padStart(6, '0')}-0000-4000-8000-${String(options.seed ?? 0)
        .padStart(12, '0')
        .slice(-12)}`;
      const started = Date.now();
      let killedAt = 0;
      const requestsBefore = stack.ci.requestIds.length;
      let finishedAt = 0;
      const run = scenarios[scenario](stack, { rule, key: (step) => `faults-${rule}-${step}`, killedAt: () => killedAt }).finally(() => (finishedAt = Date.now()));
      const killer = sleep(killAfterMs).then(async () => {
        killedAt = Date.now();
        await stack.kill(victim);
      });
      let result: TrialResult;
      try {
        const [effects] = await Promise.all([run, killer]);
        // Every request answered has its audit row, once (rows are written in the background).
        const ids = stack.ci.requestIds.slice(requestsBefore);
        await sleep(500);
        const audited = await stack.query<{ request_id: string; n: number }>(
          'select request_id, count(*)::int as n from audit_log where request_id = any($1) group by request_id',
          [ids],
        );
        const auditFound = ids.length - ids.filter((id) => !audited.some((a) => a.request_id === id)).length + audited.reduce((n, a) => n + a.n - 1, 0);
        result = {
          trial,
          scenario,
          victim,
          killAfterMs,
          killedMidRun: killedAt < finishedAt,
          seconds: (Date.now() - started) / 1000,
          effects: [...effects, { effect: 'audit rows', expected: ids.length, found: auditFound }],
        };
      } catch (err) {
        await killer.catch(() => undefined);
        result = { trial, scenario, victim, killAfterMs, killedMidRun: true, seconds: (Date.now() - started) / 1000, effects: [], error: (err as Error).message };
      }
      results.push(result);
      const bad = result.effects.filter((e) => e.found !== e.expected);
      log(
        `trial ${trial}/${options.trials} ${scenario} kill -9 ${victim} after ${killAfterMs} ms${result.killedMidRun ? '' : ' (after the run ended)'}: ${result.error ? `FAILED ${result.error}` : bad.length ? `MISMATCH ${bad.map((e) => `${e.effect} ${e.found}/${e.expected}`).join(', ')}` : 'ok'} (${result.seconds.toFixed(1)} s)`,
      );
    }
  } finally {
    await stack.stop();
  }
  const all = results.flatMap((r) => r.effects);
  return {
    trials: results.length,
    killedMidRun: results.filter((r) => r.killedMidRun).length,
    expected: all.reduce((n, e) => n + e.expected, 0),
    found: all.reduce((n, e) => n + e.found, 0),
    duplicates: all.reduce((n, e) => n + Math.max(0, e.found - e.expected), 0),
    losses: all.reduce((n, e) => n + Math.max(0, e.expected - e.found), 0),
    failedTrials: results.filter((r) => r.error).length,
    results,
  };
}

export function formatSummary(s: FaultSummary): string {
  return [
    `trials:           ${s.trials} (kill before the run ended: ${s.killedMidRun}; failed to complete: ${s.failedTrials})`,
    `effects expected: ${s.expected}`,
    `effects found:    ${s.found}`,
    `duplicates:       ${s.duplicates}`,
    `losses:           ${s.losses}`,
  ].join('\n');
}

async function main() {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const trials = Number(arg('trials') ?? 50);
  const seed = Number(arg('seed') ?? Date.now() % 1_000_000);
  if (!Number.isInteger(trials) || trials < 1) throw new Error('--trials: a positive whole number');
  process.stdout.write(`fault injection: ${trials} trials, seed ${seed}\n`);
  const summary = await runFaultTrials({ trials, seed });
  process.stdout.write(`\n${formatSummary(summary)}\n`);
  process.exit(summary.duplicates === 0 && summary.losses === 0 && summary.failedTrials === 0 ? 0 : 1);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  });
}
