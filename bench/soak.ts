import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveTemporalCli } from '../worker/temporal-cli';
import { processRule } from '../test/support/harness';
import { devServerPid, freePort, spawnService, type ServiceProcess } from '../test/support/service-process';
import { printTable } from './support';
import { percentile, soakVerdicts } from './soak-stats';
import { seededRandom } from '../lib/seeded-random';

/**
 * Soak (not in CI): the service as `npm start` runs it (embedded default: PGlite and a supervised
 * Temporal dev server, fresh DATA_DIR) under an open-loop mix of traffic for an hour, printing per
 * window the requests, errors, p50/p99 per class, RSS and CPU of the service and of the dev server,
 * and the machine's load; at the end PASS/FAIL against the targets (no error, p99 stable within
 * ±20%, RSS slope ≈ 0 after warm-up).
 *
 *   npm run bench:soak
 *   DETFLOW_SOAK_RATE=200 DETFLOW_SOAK_MINUTES=60 DETFLOW_SOAK_WINDOW_MINUTES=5 DETFLOW_SOAK_MAX_IN_FLIGHT=400 DETFLOW_SOAK_MATCH_RATE=0.01
 *
 * Open loop: request i is due at start + i/rate and its latency counts from then, so a stall shows
 * as latency of everything scheduled during it (no coordinated omission). When the in-flight cap is
 * reached a due request is dropped and counted.
 */

const RATE = Number(process.env.DETFLOW_SOAK_RATE ?? 200);
const MINUTES = Number(process.env.DETFLOW_SOAK_MINUTES ?? 60);
const WINDOW_MINUTES = Number(process.env.DETFLOW_SOAK_WINDOW_MINUTES ?? 5);
const MAX_IN_FLIGHT = Number(process.env.DETFLOW_SOAK_MAX_IN_FLIGHT ?? 400);
const REQUEST_TIMEOUT_MS = 30_000;
/** Flows (not part of the open-loop rate; each step is a request counted in its class). */
const REPLAY_EVERY_S = 15;
const DEPLOY_EVERY_S = 20;
const ROLLBACK_EVERY_S = 120;
const RULES = 6;
const EVENTS_PER_BATCH = 20;
/**
 * Share of ingested events that match a soak rule, each raising an alert. One in a hundred is still
 * about 110 alerts a minute at 100 req/s (6,500 an hour on six rules), more than a team can triage;
 * at one in ten (66,000 an hour) the reads that cover a rule's alerts of the last 30 days (rule
 * health, noise budget) grow with every minute, which is what the README's Soak section shows.
 */
const MATCH_RATE = Number(process.env.DETFLOW_SOAK_MATCH_RATE ?? 0.01);

/** `shed`: a 503 the service answered at once to shed load (ingest backpressure), still an error here. */
type Kind = 'non-2xx' | 'status' | 'network' | 'flow' | 'shed';
type Outcome = { cls: string; ms: number; error?: Kind; detail?: string };

/** The open-loop mix: weights of each class of request. */
const MIX: Array<{ cls: string; weight: number }> = [
  { cls: 'lint', weight: 20 },
  { cls: 'test', weight: 8 },
  { cls: 'ingest', weight: 15 },
  { cls: 'rules', weight: 12 },
  { cls: 'rule', weight: 10 },
  { cls: 'rule-health', weight: 10 },
  { cls: 'deployments', weight: 9 },
  { cls: 'alerts', weight: 10 },
  { cls: 'dashboard', weight: 6 },
];
/** Long polls and flows: figures of their own, left out of the overall p50/p99. */
const NOT_IN_OVERALL = new Set(['replay-wait', 'deploy-wait', 'rollback-wait', 'replay-flow', 'deploy-flow', 'rollback-flow']);

const ruleId = (i: number) => `50a50000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const imageOf = (i: number) => `soak${i}.exe`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const random = seededRandom(Number(process.env.DETFLOW_SOAK_SEED ?? 18));
const pick = (n: number) => Math.floor(random() * n);

class Recorder {
  outcomes: Outcome[] = [];
  drops = 0;
  inFlight = 0;
  errorSamples: string[] = [];
  record(o: Outcome): void {
    this.outcomes.push(o);
    if (o.error && this.errorSamples.length < 20) this.errorSamples.push(`${o.cls} ${o.error}: ${o.detail ?? ''}`.slice(0, 300));
  }
  take(): { outcomes: Outcome[]; drops: number } {
    const taken = { outcomes: this.outcomes, drops: this.drops };
    this.outcomes = [];
    this.drops = 0;
    return taken;
  }
}

type Api = { base: string; tokens: { admin: string; author: string; reviewer: string } };

type Response = { status: number; body: any; text: string };

async function call(api: Api, method: string, p: string, token: string, body?: unknown, contentType = 'application/json'): Promise<Response> {
  const res = await fetch(`${api.base}/api/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/** One measured request: latency from `scheduledAt`; an error when the status is not `expect`. */
async function measured(rec: Recorder, cls: string, scheduledAt: number, expect: number[], send: () => Promise<Response>): Promise<Response | undefined> {
  rec.inFlight++;
  try {
    const res = await send();
    const ms = performance.now() - scheduledAt;
    if (!expect.includes(res.status)) {
      const shed = res.status === 503 && (res.body as { type?: string } | undefined)?.type?.endsWith('/unavailable');
      rec.record({ cls, ms, error: res.status >= 200 && res.status < 300 ? 'status' : shed ? 'shed' : 'non-2xx', detail: `${res.status} ${res.text}` });
      return undefined;
    }
    rec.record({ cls, ms });
    return res;
  } catch (err) {
    rec.record({ cls, ms: performance.now() - scheduledAt, error: 'network', detail: (err as Error).message });
    return undefined;
  } finally {
    rec.inFlight--;
  }
}

function events(n: number): string {
  const now = new Date().toISOString();
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    // A share of events matches a seeded rule, so detection raises alerts now and then.
    const image = random() < MATCH_RATE ? imageOf(pick(RULES)) : `benign${pick(50)}.exe`;
    lines.push(JSON.stringify({ '@timestamp': now, Image: `C:\\Windows\\${image}`, CommandLine: `${image} --soak`, Computer: `host-${pick(20)}`, User: 'soak' }));
  }
  return lines.join('\n') + '\n';
}

const fixture = (i: number, match: boolean) =>
  JSON.stringify({
    name: match ? 'matches' : 'does not match',
    expect: match ? 'match' : 'no_match',
    event: { Image: `C:\\Windows\\${match ? imageOf(i) : 'notepad.exe'}`, CommandLine: 'x' },
  });

/** Sends one request of the open-loop mix. */
function sendMixed(api: Api, rec: Recorder, cls: string, at: number): Promise<unknown> {
  const { author } = api.tokens;
  const r = pick(RULES);
  switch (cls) {
    case 'lint':
      return measured(rec, cls, at, [200], () =>
        call(api, 'POST', '/rules/lint', author, { rule: processRule(ruleId(r), { title: `Linted ${pick(1000)}`, image: `\\${imageOf(r)}` }), target: 'local' }),
      );
    case 'test':
      return measured(rec, cls, at, [200], () =>
        call(api, 'POST', '/rules/test', author, { rule_id: ruleId(r), target: 'local', fixtures: [fixture(r, true), fixture(r, false)] }),
      );
    case 'ingest':
      return measured(rec, cls, at, [200], () =>
        call(api, 'POST', '/events?target=local&product=windows&category=process_creation', author, events(EVENTS_PER_BATCH), 'application/x-ndjson'),
      );
    case 'rules':
      return measured(rec, cls, at, [200], () => call(api, 'GET', '/rules?limit=20', author));
    case 'rule':
      return measured(rec, cls, at, [200], () => call(api, 'GET', `/rules/${ruleId(r)}`, author));
    case 'rule-health':
      return measured(rec, cls, at, [200], () => call(api, 'GET', `/health/rules/${ruleId(r)}`, author));
    case 'deployments':
      return measured(rec, cls, at, [200], () => call(api, 'GET', '/deployments?limit=20', author));
    case 'alerts':
      return measured(rec, cls, at, [200], () => call(api, 'GET', '/alerts?limit=20', author));
    case 'dashboard':
      return measured(rec, cls, at, [200], () => call(api, 'GET', '/health/dashboard', author));
    default:
      throw new Error(`unknown class ${cls}`);
  }
}

/** Reads `p` (a long poll) until `done` or a failure status; returns the final body. */
async function waitUntil(api: Api, rec: Recorder, cls: string, p: string, done: (b: any) => boolean, failed: (b: any) => boolean, seconds = 300): Promise<any> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const res = await measured(rec, cls, performance.now(), [200], () => call(api, 'GET', p, api.tokens.author));
    if (res && done(res.body)) return res.body;
    if (res && failed(res.body)) throw new Error(`${p}: ${JSON.stringify(res.body).slice(0, 300)}`);
    if (!res) await sleep(1000);
    if (Date.now() > deadline) throw new Error(`${p}: not done after ${seconds} s`);
  }
}

/** Per rule: versions stored, deployed successfully in a row, whether a flow holds it. */
type RuleState = { version: number; deploys: number; busy: boolean; rolledBackLast: boolean };

async function flow(rec: Recorder, cls: string, run: () => Promise<void>): Promise<void> {
  const started = performance.now();
  try {
    await run();
    rec.record({ cls, ms: performance.now() - started });
  } catch (err) {
    rec.record({ cls, ms: performance.now() - started, error: 'flow', detail: (err as Error).message });
  }
}

async function replayFlow(api: Api, rec: Recorder): Promise<void> {
  const now = Date.now();
  const started = await measured(rec, 'replay', performance.now(), [202], () =>
    call(api, 'POST', '/rules/replay', api.tokens.author, {
      rule_id: ruleId(pick(RULES)),
      target: 'local',
      from: new Date(now - 3_600_000).toISOString(),
      to: new Date(now).toISOString(),
    }),
  );
  if (!started) throw new Error('replay not started');
  await waitUntil(
    api,
    rec,
    'replay-wait',
    `/replays/${started.body.id}?wait=5`,
    (b) => b.status === 'completed',
    (b) => ['failed', 'cancelled', 'timed_out'].includes(b.status),
  );
}

const isActive = (b: any) => b.status === 'active';
const isFailed = (b: any) => ['failed', 'rejected', 'cancelled', 'rolled_back', 'superseded'].includes(b.status);

async function deployFlow(api: Api, rec: Recorder, i: number, state: RuleState): Promise<void> {
  const { author, reviewer } = api.tokens;
  const next = state.version + 1;
  const stored = await measured(rec, 'rule-store', performance.now(), [200, 201], () =>
    call(api, 'POST', '/rules', author, { rule: processRule(ruleId(i), { title: `Soak rule ${i} (revision ${next})`, image: `\\${imageOf(i)}` }) }),
  );
  if (!stored) throw new Error('rule not stored');
  state.version = next;
  const submitted = await measured(rec, 'deploy', performance.now(), [202], () =>
    call(api, 'POST', '/rules/deploy', author, { rule_id: ruleId(i), target: 'local', approval_required: true, noise_budget: { max_alerts_per_day: 10_000 } }),
  );
  if (!submitted) throw new Error('deploy not submitted');
  const approval = String(submitted.body.links.approval).split('/').at(-1)!;
  const approved = await measured(rec, 'approve', performance.now(), [200], () =>
    call(api, 'POST', `/approvals/${approval}/decision`, reviewer, { decision: 'approve', comment: 'soak' }),
  );
  if (!approved) throw new Error('approval refused');
  await waitUntil(api, rec, 'deploy-wait', `/deployments/${submitted.body.id}?wait=5`, isActive, isFailed);
  state.deploys++;
  state.rolledBackLast = false;
}

async function rollbackFlow(api: Api, rec: Recorder, i: number, state: RuleState): Promise<void> {
  const started = await measured(rec, 'rollback', performance.now(), [202], () =>
    call(api, 'POST', '/rules/rollback', api.tokens.author, { rule_id: ruleId(i), target: 'local', reason: 'soak' }),
  );
  if (!started) throw new Error('rollback not started');
  state.rolledBackLast = true;
  const restored = started.body.links.restored as string | undefined;
  if (restored) await waitUntil(api, rec, 'rollback-wait', `${restored.replace('/api/v1', '')}?wait=5`, isActive, isFailed);
}

// ---- process figures from /proc

const TICKS = 100; // USER_HZ on Linux
function procFigures(pid: number | undefined): { rssMb: number; cpuSeconds: number } | undefined {
  if (!pid) return undefined;
  try {
    const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat; after the ")" the list starts at field 3.
    const cpu = (Number(fields[11]) + Number(fields[12])) / TICKS;
    return { rssMb: rss ? Number(rss[1]) / 1024 : Number.NaN, cpuSeconds: cpu };
  } catch {
    return undefined;
  }
}

type WindowRow = Record<string, string | number>;

async function main(): Promise<void> {
  const totalMs = MINUTES * 60_000;
  const windowMs = WINDOW_MINUTES * 60_000;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-soak-'));
  const logFile = path.join(os.tmpdir(), `detflow-soak-service-${Date.now()}.log`);
  const [port, tPort, uiPort] = [await freePort(), await freePort(), await freePort()];
  const started = new Date();
  process.stdout.write(
    `soak: ${RATE} req/s open loop for ${MINUTES} min, windows of ${WINDOW_MINUTES} min (the first is warm-up), in-flight cap ${MAX_IN_FLIGHT}\n` +
      `machine: ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; started ${started.toISOString()}; service log ${logFile}\n` +
      `mix (weights of ${MIX.reduce((s, m) => s + m.weight, 0)}): ${MIX.map((m) => `${m.cls} ${m.weight}`).join(', ')}\n` +
      `flows besides: a replay every ${REPLAY_EVERY_S} s (read until done), a deploy with approval every ${DEPLOY_EVERY_S} s (new version, author submits, reviewer approves, read until active), a rollback every ${ROLLBACK_EVERY_S} s; ${RULES} rules, ${EVENTS_PER_BATCH} events per ingest batch, ${MATCH_RATE} of them matching a rule\n`,
  );

  // E.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, to see what the service's thread did (Node refuses them in NODE_OPTIONS).
  const nodeArgs = (process.env.DETFLOW_SOAK_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const service: ServiceProcess = spawnService(
    'worker/start.ts',
    {
      DATA_DIR: dataDir,
      PORT: String(port),
      TEMPORAL_PORT: String(tPort),
      TEMPORAL_UI_PORT: String(uiPort),
      TEMPORAL_CLI_PATH: resolveTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH, log: () => undefined }),
      LOG_LEVEL: 'warn',
      // The service's own settings given to the soak (DETFLOW_INGEST_MAX_PENDING_BATCHES=0, ...) reach it.
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('DETFLOW_') && !k.startsWith('DETFLOW_SOAK_'))),
      // The embedded default keeps the database (PGlite) in the service's own thread; with this set,
      // the soak measures the service on PostgreSQL instead (a fresh, empty database is expected).
      ...(process.env.DETFLOW_SOAK_DATABASE_URL ? { DATABASE_URL: process.env.DETFLOW_SOAK_DATABASE_URL, DETFLOW_SECRET_KEY: 'soak' } : {}),
    },
    nodeArgs,
  );
  const stop = async () => {
    if (service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGTERM');
      const timer = setTimeout(() => service.child.kill('SIGKILL'), 30_000);
      await service.exited;
      clearTimeout(timer);
    }
    const orphan = devServerPid(tPort);
    if (orphan) process.kill(orphan, 'SIGKILL');
    // DETFLOW_SOAK_KEEP=1 keeps the data folder (PGlite, event store, Temporal) to inspect afterwards.
    if (process.env.DETFLOW_SOAK_KEEP) process.stdout.write(`data folder kept: ${dataDir}\n`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void stop().then(() => process.exit(130)));
  try {
    const operator = (await service.waitFor(/Bootstrap admin token[^:]*: (\S+)/, 240))[1]!;
    await service.waitFor(/detflow is running/, 240);
    // From here the service's output goes to a file, not into this process's memory.
    const log = fs.createWriteStream(logFile);
    log.write(service.output());
    service.child.stdout!.removeAllListeners('data').on('data', (c: string) => log.write(c));
    service.child.stderr!.removeAllListeners('data').on('data', (c: string) => log.write(c));
    let serviceLines = 0;
    service.child.stdout!.on('data', (c: string) => (serviceLines += c.split('\n').length - 1));

    const base = `http://127.0.0.1:${port}`;
    const must = async (what: string, res: Promise<Response>, ok: number[]) => {
      const r = await res;
      if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${r.text}`);
      return r;
    };
    const boot: Api = { base, tokens: { admin: operator, author: operator, reviewer: operator } };
    // A tenant of the unlimited tier: the daily request limit is not what this measures.
    const tenant = await must(
      'tenant',
      call(boot, 'POST', '/settings/tenants', operator, { id: 'soak', name: 'soak', tier: 'unlimited', environments: ['dev', 'prod'] }),
      [201],
    );
    const admin = tenant.body.admin_token.token as string;
    const key = async (name: string, permissions: string[]) =>
      (await must(name, call(boot, 'POST', '/settings/api-keys', admin, { name, permissions, principal: name }), [201])).body.token as string;
    const api: Api = {
      base,
      tokens: { admin, author: await key('author', ['rules:read', 'rules:write', 'events:write', 'deploy']), reviewer: await key('reviewer', ['approve', 'rules:read']) },
    };
    const local = (await must('target', call(api, 'GET', '/settings/targets/local', admin), [200])).body;
    await must(
      'detection interval',
      call(api, 'PUT', '/settings/targets/local', admin, {
        name: local.name,
        kind: local.kind,
        environment: local.environment,
        connection: local.connection,
        cost_model: local.cost_model,
        detection_interval: 'PT1M',
      }),
      [200],
    );
    const rules: RuleState[] = [];
    for (let i = 0; i < RULES; i++) {
      await must(
        'seed rule',
        call(api, 'POST', '/rules', api.tokens.author, { rule: processRule(ruleId(i), { title: `Soak rule ${i} (revision 1)`, image: `\\${imageOf(i)}` }) }),
        [201],
      );
      rules.push({ version: 1, deploys: 0, busy: false, rolledBackLast: false });
    }
    await must(
      'seed events',
      call(api, 'POST', '/events?target=local&product=windows&category=process_creation', api.tokens.author, events(200), 'application/x-ndjson'),
      [200],
    );

    const pid = service.child.pid!;
    const temporalPid = devServerPid(tPort);
    process.stdout.write(`service pid ${pid}, Temporal dev server pid ${temporalPid ?? '?'}; setup took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s\n\n`);

    const rec = new Recorder();
    const totalWeight = MIX.reduce((s, m) => s + m.weight, 0);
    const drawClass = () => {
      let x = random() * totalWeight;
      for (const m of MIX) if ((x -= m.weight) < 0) return m.cls;
      return MIX[MIX.length - 1]!.cls;
    };
    const pending = new Set<Promise<unknown>>();
    const track = (p: Promise<unknown>) => {
      pending.add(p);
      void p.finally(() => pending.delete(p));
    };

    const t0 = performance.now();
    let sent = 0;
    let nextReplay = REPLAY_EVERY_S * 1000;
    let nextDeploy = 5_000;
    let nextRollback = ROLLBACK_EVERY_S * 1000;
    let flowsSkipped = 0;
    const windows: WindowRow[] = [];
    const windowP99: number[] = [];
    const rssSamples: Record<string, Array<[number, number]>> = { service: [], temporal: [] };
    let totalErrors = 0;
    let totalDrops = 0;
    const allAfterWarmup = new Map<string, number[]>();
    let cpuBefore = { service: procFigures(pid)?.cpuSeconds ?? 0, temporal: procFigures(temporalPid)?.cpuSeconds ?? 0 };
    let windowStart = t0;
    let nextSample = 10_000;
    // Where the service's memory is held (its /metrics, sampled there every 15 s): rss, V8's heap,
    // array buffers (PGlite's WebAssembly memory), DuckDB's own count.
    let memory: Record<string, number> = {};
    const readMemory = async () => {
      const text = await fetch(`${api.base}/metrics`).then((r) => r.text());
      for (const m of text.matchAll(/^detflow_process_memory_bytes\{component="(\w+)"\} (\d+)/gm)) memory[m[1]!] = Number(m[2]);
    };

    const startFlow = (kind: 'deploy' | 'rollback') => {
      const candidates = rules.map((s, i) => ({ s, i })).filter(({ s }) => !s.busy && (kind === 'deploy' || (s.deploys >= 2 && !s.rolledBackLast)));
      if (candidates.length === 0) return void flowsSkipped++;
      const { s, i } = candidates[pick(candidates.length)]!;
      s.busy = true;
      track(flow(rec, `${kind}-flow`, () => (kind === 'deploy' ? deployFlow(api, rec, i, s) : rollbackFlow(api, rec, i, s))).finally(() => (s.busy = false)));
    };

    const closeWindow = (n: number, now: number) => {
      const { outcomes, drops } = rec.take();
      const seconds = (now - windowStart) / 1000;
      const svc = procFigures(pid);
      const tmp = procFigures(temporalPid);
      const overall = outcomes.filter((o) => !NOT_IN_OVERALL.has(o.cls)).map((o) => o.ms);
      const errors = outcomes.filter((o) => o.error);
      const byKind = (k: Kind) => errors.filter((e) => e.error === k).length;
      const p99 = percentile(overall, 99);
      if (n > 1) {
        windowP99.push(p99);
        for (const o of outcomes) {
          const list = allAfterWarmup.get(o.cls) ?? [];
          list.push(o.ms);
          allAfterWarmup.set(o.cls, list);
        }
      }
      totalErrors += errors.length;
      totalDrops += drops;
      const row: WindowRow = {
        window: `${n}${n === 1 ? ' (warm-up)' : ''}`,
        minutes: `${((windowStart - t0) / 60_000).toFixed(0)}–${((now - t0) / 60_000).toFixed(0)}`,
        requests: outcomes.length,
        'req/s': (outcomes.length / seconds).toFixed(0),
        'errors n2xx/status/net/flow/shed': `${byKind('non-2xx')}/${byKind('status')}/${byKind('network')}/${byKind('flow')}/${byKind('shed')}`,
        drops,
        'p50 ms': percentile(overall, 50).toFixed(1),
        'p99 ms': p99.toFixed(1),
        'service RSS MB': svc ? svc.rssMb.toFixed(0) : '?',
        'service CPU %': svc ? (((svc.cpuSeconds - cpuBefore.service) / seconds) * 100).toFixed(0) : '?',
        'memory MB (V8 heap/array buffers/DuckDB)': ['v8_heap_used', 'array_buffers', 'event_store']
          .map((c) => (memory[c] === undefined ? '?' : (memory[c]! / 2 ** 20).toFixed(0)))
          .join('/'),
        'Temporal RSS MB': tmp ? tmp.rssMb.toFixed(0) : '?',
        'Temporal CPU %': tmp ? (((tmp.cpuSeconds - cpuBefore.temporal) / seconds) * 100).toFixed(0) : '?',
        'load 1/5 min': os
          .loadavg()
          .slice(0, 2)
          .map((l) => l.toFixed(1))
          .join('/'),
      };
      cpuBefore = { service: svc?.cpuSeconds ?? 0, temporal: tmp?.cpuSeconds ?? 0 };
      windows.push(row);
      const classes = [...new Set(outcomes.map((o) => o.cls))].sort();
      const perClass = classes
        .map((c) => {
          const ms = outcomes.filter((o) => o.cls === c).map((o) => o.ms);
          return `${c} ${ms.length} ${percentile(ms, 50).toFixed(0)}/${percentile(ms, 99).toFixed(0)}`;
        })
        .join('; ');
      process.stdout.write(`window ${row.window} [${row.minutes} min]: ${JSON.stringify(row)}\n  per class (n p50/p99 ms): ${perClass}\n`);
      if (rec.errorSamples.length) {
        process.stdout.write(`  errors (first ${rec.errorSamples.length}): ${rec.errorSamples.join(' | ')}\n`);
        rec.errorSamples = [];
      }
      windowStart = now;
    };

    // The open-loop scheduler: every tick sends what is due by now, each with its due time.
    let windowNo = 1;
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        const elapsed = now - t0;
        const due = Math.min(Math.floor((elapsed / 1000) * RATE), Math.floor((totalMs / 1000) * RATE));
        while (sent < due) {
          const at = t0 + (sent / RATE) * 1000;
          sent++;
          if (rec.inFlight >= MAX_IN_FLIGHT) {
            rec.drops++;
            continue;
          }
          track(sendMixed(api, rec, drawClass(), at));
        }
        if (elapsed >= nextReplay) {
          nextReplay += REPLAY_EVERY_S * 1000;
          track(flow(rec, 'replay-flow', () => replayFlow(api, rec)));
        }
        if (elapsed >= nextDeploy) {
          nextDeploy += DEPLOY_EVERY_S * 1000;
          startFlow('deploy');
        }
        if (elapsed >= nextRollback) {
          nextRollback += ROLLBACK_EVERY_S * 1000;
          startFlow('rollback');
        }
        if (elapsed >= nextSample) {
          nextSample += 10_000;
          void readMemory().catch(() => (memory = {}));
          const h = elapsed / 3_600_000;
          if (elapsed > windowMs) {
            const s = procFigures(pid);
            const t = procFigures(temporalPid);
            if (s) rssSamples.service!.push([h, s.rssMb]);
            if (t) rssSamples.temporal!.push([h, t.rssMb]);
          }
        }
        if (elapsed >= windowNo * windowMs && windowNo * windowMs < totalMs) {
          closeWindow(windowNo, now);
          windowNo++;
        }
        if (elapsed >= totalMs) return resolve();
        setTimeout(tick, 5);
      };
      tick();
    });
    // The last window closes when what it sent has been answered.
    await Promise.race([Promise.allSettled([...pending]), sleep(REQUEST_TIMEOUT_MS + 5_000)]);
    closeWindow(windowNo, performance.now());

    process.stdout.write(
      `\nsoak ${started.toISOString()} → ${new Date().toISOString()}; ${sent} open-loop requests scheduled; flows skipped (rule busy): ${flowsSkipped}; service log lines: ${serviceLines}\n\n`,
    );
    printTable(windows);
    process.stdout.write('\nper class after warm-up (n, p50/p99 ms):\n');
    printTable(
      [...allAfterWarmup.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([cls, ms]) => ({
          class: cls,
          n: ms.length,
          'p50 ms': percentile(ms, 50).toFixed(1),
          'p99 ms': percentile(ms, 99).toFixed(1),
          'max ms': Math.max(...ms).toFixed(0),
        })),
    );
    const verdicts = soakVerdicts({ errors: totalErrors, drops: totalDrops, windowP99, rss: rssSamples, timeoutMs: REQUEST_TIMEOUT_MS });
    process.stdout.write('\nverdicts:\n');
    for (const v of verdicts) process.stdout.write(`  ${v.pass ? 'PASS' : 'FAIL'}  ${v.target}: ${v.figures}\n`);
    log.end();
  } finally {
    await stop();
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
      process.exit(2);
    },
  );
}
