/**
 * Scheduled detection with many deployed rules on the `local` SIEM (issue #15, decision record 0084):
 * `npm run bench:detection`.
 *
 * The service runs as `npm start` does (worker/start.ts: API, worker and embedded Temporal dev
 * server) in a child process, on a PostgreSQL database of its own (DATABASE_URL's server, default
 * postgres://postgres@127.0.0.1:5432/test). DETFLOW_BENCH_RULES rules (default 1,000: the shared SigmaHQ
 * corpus's Windows process_creation rules whose selections can be turned into a matching event,
 * cycled, each copy with a fresh id) are deployed on `local` through the API; the target's detection
 * interval is DETFLOW_BENCH_INTERVAL (default PT1M). Then events go to POST /events steadily at
 * DETFLOW_BENCH_RATE per second (default 2,000, one request a second) for DETFLOW_BENCH_MINUTES
 * (default 10), DETFLOW_BENCH_PLANTED of them (default 1 %) built from a rule's selections so that
 * they match it, the rest from benign templates.
 *
 * Printed (nothing asserted):
 * - alerts stored against alerts expected: the in-process evaluator (sigma/evaluate compileRule)
 *   over the same events — events are templates plus a sequence number and a time no rule reads,
 *   so each template is evaluated once against every rule — each expected (deployment, event)
 *   exactly once; missing, unexpected and duplicated ones counted.
 * - detection lag p50/p99: the POST that stored the event answered → the alert stored (the end of
 *   its detection run's transaction: the run record's start + duration).
 * - the service process's CPU share of the two cores and peak RSS over the ingest window
 *   (/proc/<pid>/stat and status, every second); the Temporal dev server's CPU beside it.
 * - Temporal actions per hour (as Temporal Cloud bills them): per detection workflow, 1 for the
 *   schedule's action, 1 for the workflow start, 1 per activity scheduled (plus its retries), 1 per
 *   timer, child workflow start and signal, read from the histories of the runs started in the
 *   ingest window; heartbeats are not in a history and are estimated (the SDK sends at most one per
 *   0.8 × heartbeat timeout = 96 s of activity). History events per hour: those histories' lengths.
 *   Baseline, same run: the per-deployment design (one schedule and DetectionRun per rule), from
 *   DetectionRun runs of real deployments executed at the end, scaled to the rules and interval.
 *   DETFLOW_BENCH_MODE=per-deployment runs the whole bench with per-deployment schedules instead.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { compileRule, type EventMatcher } from '../sigma/evaluate';
import { parseRule } from '../sigma/parse';
import { parse as parseYaml } from 'yaml';
import { corpusFiles } from '../test/sigma/support/corpus';
import { devServerPid, freePort, spawnService } from '../test/support/service-process';
import { isoDurationMs } from '../config/iso-duration';
import { printTable } from './support';

const RULES = Number(process.env.DETFLOW_BENCH_RULES ?? 1000);
const RATE = Number(process.env.DETFLOW_BENCH_RATE ?? 2000);
const MINUTES = Number(process.env.DETFLOW_BENCH_MINUTES ?? 10);
const INTERVAL = process.env.DETFLOW_BENCH_INTERVAL ?? 'PT1M';
const PLANTED = Number(process.env.DETFLOW_BENCH_PLANTED ?? 0.01);
const MODE = process.env.DETFLOW_BENCH_MODE === 'per-deployment' ? 'per-deployment' : 'per-target';
const DEPLOY_CONCURRENCY = Number(process.env.DETFLOW_BENCH_DEPLOY_CONCURRENCY ?? 12);
const BACKGROUND_TEMPLATES = 300;
const HEARTBEAT_EVERY_S = 96;
const CORES = os.cpus().length;

const progress = (m: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-');

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

// ── Rules and their planted events ─────────────────────────────────────────────────────────────

type Candidate = { text: string; match: EventMatcher; planted: Record<string, unknown> };

/** A value that satisfies `field|modifiers: value` for the simple modifiers; null for the others. */
function satisfying(modifiers: string[], values: unknown[]): unknown {
  const strings = values.map((v) => (typeof v === 'string' ? v.replace(/\*/g, 'x').replace(/\?/g, 'x') : v));
  const first = strings[0];
  const known = new Set(['contains', 'startswith', 'endswith', 'all']);
  if (modifiers.some((m) => !known.has(m))) return null;
  if (typeof first !== 'string') return first ?? null;
  if (modifiers.includes('all')) return `x ${strings.join(' ')} x`;
  if (modifiers.includes('contains')) return `x ${first} x`;
  if (modifiers.includes('startswith')) return `${first}x`;
  if (modifiers.includes('endswith')) return first.startsWith('\\') ? `C:\\Bench${first}` : `C:\\Bench\\${first}`;
  return first;
}

/** The event the rule's `selection*` identifiers describe, if the evaluator says it matches the rule. */
function candidate(file: string): Candidate | null {
  const text = fs.readFileSync(file, 'utf8');
  let doc: any;
  try {
    doc = parseYaml(text);
  } catch {
    return null;
  }
  if (doc?.logsource?.product !== 'windows' || doc?.logsource?.category !== 'process_creation' || !doc.detection) return null;
  const event: Record<string, unknown> = {};
  for (const [name, body] of Object.entries(doc.detection as Record<string, unknown>)) {
    if (!name.startsWith('selection')) continue;
    const map = Array.isArray(body) ? body[0] : body;
    if (!map || typeof map !== 'object') return null;
    for (const [key, raw] of Object.entries(map as Record<string, unknown>)) {
      const [field, ...modifiers] = key.split('|');
      const value = satisfying(modifiers, Array.isArray(raw) ? raw : [raw]);
      if (value === null || value === undefined) return null;
      event[field!] = value;
    }
  }
  if (Object.keys(event).length === 0) return null;
  try {
    const { match } = compileRule(parseRule(text));
    return match(event) ? { text, match, planted: event } : null;
  } catch {
    return null;
  }
}

function withFreshId(text: string, id: string, copy: number): string {
  return text.replace(/^id: .*$/m, `id: ${id}`).replace(/^title: (.*)$/m, (_l, t: string) => `title: ${t} (bench copy ${copy})`);
}

function backgroundTemplate(k: number): Record<string, unknown> {
  return {
    Image: `C:\\Program Files\\Vendor${k}\\app${k}.exe`,
    CommandLine: `"C:\\Program Files\\Vendor${k}\\app${k}.exe" --task ${k} --quiet`,
    ParentImage: 'C:\\Windows\\explorer.exe',
    ParentCommandLine: 'C:\\Windows\\explorer.exe',
    User: `CORP\\user${k % 17}`,
    Computer: `host-${k % 23}`,
    IntegrityLevel: 'Medium',
    OriginalFileName: `app${k}.exe`,
    CurrentDirectory: `C:\\Users\\user${k % 17}\\`,
  };
}

// ── Process sampling ───────────────────────────────────────────────────────────────────────────

const TICKS = 100; // USER_HZ on Linux
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch {
    return NaN;
  }
}
function rssMb(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

// ── Temporal actions ───────────────────────────────────────────────────────────────────────────

type RunCost = { actions: number; historyEvents: number; activitySeconds: number };

async function runCost(client: Client, workflowId: string, runId: string | undefined, scheduled: boolean): Promise<RunCost> {
  const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
  let actions = scheduled ? 1 : 0;
  let activitySeconds = 0;
  const scheduledAt = new Map<string, number>();
  const ms = (t: any) => Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
  for (const e of events) {
    if (e.workflowExecutionStartedEventAttributes) actions++;
    if (e.activityTaskScheduledEventAttributes) {
      actions++;
      scheduledAt.set(String(e.eventId), ms(e.eventTime));
    }
    if (e.activityTaskStartedEventAttributes) actions += Math.max(0, (e.activityTaskStartedEventAttributes.attempt ?? 1) - 1);
    if (e.activityTaskCompletedEventAttributes) {
      const s = scheduledAt.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId));
      if (s !== undefined) activitySeconds += (ms(e.eventTime) - s) / 1000;
    }
    if (e.timerStartedEventAttributes || e.startChildWorkflowExecutionInitiatedEventAttributes || e.workflowExecutionSignaledEventAttributes) actions++;
  }
  return { actions, historyEvents: events.length, activitySeconds };
}

// ── Main ───────────────────────────────────────────────────────────────────────────────────────

async function main(): Promise<void> {
  const load0 = os.loadavg();
  progress(`load average ${load0.map((l) => l.toFixed(2)).join(' ')}; ${RULES} rules, ${RATE} ev/s for ${MINUTES} min, interval ${INTERVAL}, mode ${MODE}`);

  // Rules.
  const candidates = corpusFiles()
    .map(candidate)
    .filter((c): c is Candidate => c !== null);
  if (candidates.length === 0) throw new Error('no usable rule in the shared corpus');
  progress(`${candidates.length} corpus rules with a plantable selection`);

  // Database of its own.
  const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const dbName = `detflow_bench_detection_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const ownUrl = new URL(serverUrl);
  ownUrl.pathname = `/${dbName}`;

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-detection-'));
  const [port, tPort, uiPort] = [await freePort(), await freePort(), await freePort()];
  const svc = spawnService('worker/start.ts', {
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: ownUrl.toString(),
    TEMPORAL_PORT: String(tPort),
    TEMPORAL_UI_PORT: String(uiPort),
    DETFLOW_SECRET_KEY: 'a passphrase for the detection bench only',
    DETFLOW_DETECTION_SCHEDULES: MODE,
    LOG_LEVEL: 'warn',
  });
  let db: pg.Client | undefined;
  let connection: Connection | undefined;
  try {
    const token = (await svc.waitFor(/Bootstrap admin token[^:]*: (\S+)/, 300))[1]!;
    const base = `http://127.0.0.1:${port}/api/v1`;
    const call = async (method: string, p: string, body?: unknown, contentType = 'application/json') => {
      const res = await fetch(base + p, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined };
    };
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200) break;
      } catch {
        // not listening yet
      }
      await sleep(500);
    }
    db = new pg.Client({ connectionString: ownUrl.toString() });
    await db.connect();
    connection = await Connection.connect({ address: `127.0.0.1:${tPort}` });
    const client = new Client({ connection });
    const servicePid = svc.child.pid;
    const temporalPid = devServerPid(tPort);

    const local = (await call('GET', '/settings/targets/local')).body;
    const put = await call('PUT', '/settings/targets/local', {
      name: local.name,
      kind: local.kind,
      environment: local.environment,
      connection: local.connection,
      cost_model: local.cost_model,
      detection_interval: INTERVAL,
    });
    if (put.status !== 200) throw new Error(`interval: ${put.status} ${JSON.stringify(put.body)}`);

    // Deploy RULES copies through the API.
    const deployed: Array<{ deploymentId: string; candidate: number }> = [];
    let next = 0;
    let refused = 0;
    let claimed = 0;
    const tDeploy = Date.now();
    await Promise.all(
      Array.from({ length: DEPLOY_CONCURRENCY }, async () => {
        while (claimed < RULES && next < RULES * 3) {
          claimed++;
          const i = next++;
          const c = i % candidates.length;
          const id = crypto.randomUUID();
          const created = await call('POST', '/rules', { rule: withFreshId(candidates[c]!.text, id, i) });
          if (created.status >= 300) {
            refused++;
            claimed--;
            continue;
          }
          const res = await call('POST', '/rules/deploy', { rule_id: id, target: 'local', approval_required: false });
          if (res.status !== 202) {
            refused++;
            claimed--;
            continue;
          }
          const result = await client.workflow.getHandle(res.body.workflow_id).result();
          if ((result as { status?: string }).status !== 'active') {
            refused++;
            claimed--;
            continue;
          }
          deployed.push({ deploymentId: res.body.id, candidate: c });
          if (deployed.length % 100 === 0) progress(`${deployed.length} rules deployed`);
        }
      }),
    );
    progress(`${deployed.length} rules deployed in ${Math.round((Date.now() - tDeploy) / 1000)} s (${refused} refused by the API and skipped)`);

    // Templates and what the evaluator expects of each.
    const templates: Array<{ event: Record<string, unknown>; matches: number[] }> = [];
    const byCandidate = new Map<number, number[]>();
    for (const [k, d] of deployed.entries()) byCandidate.set(d.candidate, [...(byCandidate.get(d.candidate) ?? []), k]);
    const expectedOf = (event: Record<string, unknown>) => [...byCandidate.entries()].flatMap(([c, ks]) => (candidates[c]!.match(event) ? ks : []));
    for (let k = 0; k < BACKGROUND_TEMPLATES; k++) templates.push({ event: backgroundTemplate(k), matches: [] });
    for (const t of templates) t.matches = expectedOf(t.event);
    const plantedStart = templates.length;
    for (const c of byCandidate.keys()) {
      const event = candidates[c]!.planted;
      templates.push({ event, matches: expectedOf(event) });
    }
    const plantedCount = templates.length - plantedStart;

    // Ingest steadily.
    const expected = new Map<number, { at: number; deployments: number[] }>(); // BenchSeq → ingest time, expected deployments
    let seq = 0;
    let ingestErrors = 0;
    let ingested = 0;
    const cpu0 = { service: cpuSeconds(servicePid), temporal: cpuSeconds(temporalPid), at: Date.now() };
    let peakRss = 0;
    const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, rssMb(servicePid) || 0)), 1000);
    const windowStart = new Date();
    const seconds = Math.round(MINUTES * 60);
    const inFlight = new Set<Promise<void>>();
    progress(`ingesting ${RATE} ev/s for ${seconds} s (${plantedCount} planted templates)`);
    for (let s = 0; s < seconds; s++) {
      const due = windowStart.getTime() + s * 1000;
      if (Date.now() < due) await sleep(due - Date.now());
      const lines: string[] = [];
      const batch: Array<{ seq: number; deployments: number[] }> = [];
      const now = new Date().toISOString();
      for (let i = 0; i < RATE; i++) {
        const planted = Math.random() < PLANTED && plantedCount > 0;
        const t = templates[planted ? plantedStart + Math.floor(Math.random() * plantedCount) : Math.floor(Math.random() * BACKGROUND_TEMPLATES)]!;
        const n = ++seq;
        lines.push(JSON.stringify({ ...t.event, '@timestamp': now, BenchSeq: n }));
        if (t.matches.length > 0) batch.push({ seq: n, deployments: t.matches });
      }
      while (inFlight.size >= 3) await Promise.race(inFlight);
      const p = call('POST', '/events?product=windows&category=process_creation', lines.join('\n'), 'application/x-ndjson')
        .then((res) => {
          if (res.status !== 200) {
            ingestErrors++;
            return;
          }
          ingested += res.body.accepted as number;
          const at = Date.now();
          for (const b of batch) expected.set(b.seq, { at, deployments: b.deployments });
        })
        .catch(() => void ingestErrors++)
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (s % 60 === 59) progress(`${s + 1} s: ${ingested} events stored, service RSS ${fmt(rssMb(servicePid))} MiB, load ${os.loadavg()[0]!.toFixed(1)}`);
    }
    await Promise.all(inFlight);
    const windowEnd = new Date();
    const cpu1 = { service: cpuSeconds(servicePid), temporal: cpuSeconds(temporalPid), at: Date.now() };
    const loadDuring = os.loadavg();
    const wall = (cpu1.at - cpu0.at) / 1000;

    // Drain: the last events' alerts.
    const expectedTotal = [...expected.values()].reduce((n, e) => n + e.deployments.length, 0);
    const intervalMs = isoDurationMs(INTERVAL);
    const drainUntil = Date.now() + intervalMs + 180_000;
    let stored = 0;
    let lastChange = Date.now();
    while (Date.now() < drainUntil) {
      const n = Number((await db.query('select count(*)::int as n from alerts')).rows[0].n);
      if (n !== stored) lastChange = Date.now();
      stored = n;
      if (n >= expectedTotal && Date.now() - lastChange > 5_000) break;
      if (Date.now() - lastChange > intervalMs + 60_000) break;
      await sleep(2_000);
    }
    clearInterval(rssTimer);
    progress(`drained: ${stored} alerts stored, ${expectedTotal} expected`);

    // Alerts against expectations, and lag.
    const deploymentIndex = new Map(deployed.map((d, k) => [d.deploymentId, k]));
    const rows = (
      await db.query(
        `select a.deployment_id, (a.event->>'BenchSeq')::bigint as seq, extract(epoch from r.started_at) * 1000 + r.duration_ms as stored_ms
           from alerts a left join detection_runs r on r.deployment_id = a.deployment_id and r.started_at = a.created_at and r.error is null`,
      )
    ).rows as Array<{ deployment_id: string; seq: string; stored_ms: string | null }>;
    const seen = new Map<string, number>();
    const lags: number[] = [];
    let unexpected = 0;
    for (const r of rows) {
      const key = `${r.deployment_id}/${r.seq}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      const e = expected.get(Number(r.seq));
      const k = deploymentIndex.get(r.deployment_id);
      if (!e || k === undefined || !e.deployments.includes(k)) {
        unexpected++;
        continue;
      }
      if (r.stored_ms !== null) lags.push(Number(r.stored_ms) - e.at);
    }
    let missing = 0;
    for (const [s, e] of expected) for (const k of e.deployments) if (!seen.has(`${deployed[k]!.deploymentId}/${s}`)) missing++;
    const duplicates = [...seen.values()].filter((n) => n > 1).length;
    const runs = (
      await db.query(`select count(*)::int as n, count(*) filter (where error is not null)::int as failed from detection_runs where started_at >= $1`, [windowStart])
    ).rows[0];

    // Temporal actions in the ingest window.
    const hours = (windowEnd.getTime() - windowStart.getTime()) / 3_600_000;
    const detectionType = MODE === 'per-target' ? 'DetectionBatch' : 'DetectionRun';
    const listed: Array<{ workflowId: string; runId: string }> = [];
    for await (const w of client.workflow.list({
      query: `WorkflowType = '${detectionType}' AND StartTime >= '${windowStart.toISOString()}' AND StartTime < '${windowEnd.toISOString()}'`,
    })) {
      listed.push({ workflowId: w.workflowId, runId: w.runId });
    }
    const sample = listed.slice(0, 300);
    const costs = await Promise.all(sample.map((w) => runCost(client, w.workflowId, w.runId, true)));
    const scale = sample.length > 0 ? listed.length / sample.length : 0;
    const heartbeats = costs.reduce((n, c) => n + Math.floor(c.activitySeconds / HEARTBEAT_EVERY_S), 0) * scale;
    const actionsPerHour = (costs.reduce((n, c) => n + c.actions, 0) * scale + heartbeats) / hours;
    const historyPerHour = (costs.reduce((n, c) => n + c.historyEvents, 0) * scale) / hours;
    const passSeconds = costs.map((c) => c.activitySeconds);

    // Baseline: per-deployment DetectionRun runs of real deployments, scaled.
    const runsPerHour = 3_600_000 / intervalMs;
    let baseline = { actions: NaN, history: NaN, perRun: NaN, perRunHistory: NaN };
    if (MODE === 'per-target') {
      const probe = deployed.slice(0, 5);
      const perRun: RunCost[] = [];
      for (const d of probe) {
        const workflowId = `bench-baseline/${d.deploymentId}`;
        await client.workflow.execute('DetectionRun', { args: [{ deploymentId: d.deploymentId }], taskQueue: 'detflow', workflowId });
        perRun.push(await runCost(client, workflowId, undefined, true));
      }
      const a = perRun.reduce((n, c) => n + c.actions, 0) / perRun.length;
      const h = perRun.reduce((n, c) => n + c.historyEvents, 0) / perRun.length;
      baseline = { actions: a * deployed.length * runsPerHour, history: h * deployed.length * runsPerHour, perRun: a, perRunHistory: h };
    } else {
      baseline = { actions: actionsPerHour, history: historyPerHour, perRun: NaN, perRunHistory: NaN };
    }

    const interval_s = intervalMs / 1000;
    process.stdout.write(
      `\nScheduled detection, ${MODE} schedules: ${deployed.length} rules (${byCandidate.size} distinct corpus rules), ${fmt(ingested)} events in ${fmt(wall)} s ` +
        `(${fmt(ingested / wall)}/s), interval ${INTERVAL}, ${CORES} cores, load average before ${load0.map((l) => l.toFixed(1)).join(' ')}, at the end of ingest ${loadDuring.map((l) => l.toFixed(1)).join(' ')}\n\n`,
    );
    printTable([
      { measure: 'alerts expected (in-process evaluator)', value: fmt(expectedTotal), target: '' },
      { measure: 'alerts stored', value: fmt(rows.length), target: '' },
      { measure: 'expected alerts stored exactly once', value: fmt(expectedTotal - missing), target: `all ${fmt(expectedTotal)}` },
      { measure: 'missing / unexpected / duplicated', value: `${missing} / ${unexpected} / ${duplicates}`, target: '0 / 0 / 0' },
      { measure: 'ingest requests refused or failed', value: fmt(ingestErrors), target: '0' },
      { measure: 'detection lag p50 (ingested → alert stored)', value: `${fmt(percentile(lags, 50) / 1000, 1)} s`, target: '' },
      { measure: 'detection lag p99', value: `${fmt(percentile(lags, 99) / 1000, 1)} s`, target: `≤ ${interval_s + 60} s (interval + 60 s)` },
      {
        measure: 'detection pass (activity) p50 / max',
        value: `${fmt(percentile(passSeconds, 50), 1)} / ${fmt(Math.max(0, ...passSeconds), 1)} s`,
        target: `< ${interval_s} s`,
      },
      { measure: 'detection runs recorded (failed)', value: `${fmt(runs.n)} (${fmt(runs.failed)})`, target: '' },
      { measure: `service CPU share of ${CORES} cores`, value: `${fmt((100 * (cpu1.service - cpu0.service)) / wall / CORES, 1)} %`, target: '≤ 50 %' },
      { measure: `Temporal dev server CPU share of ${CORES} cores`, value: `${fmt((100 * (cpu1.temporal - cpu0.temporal)) / wall / CORES, 1)} %`, target: '' },
      { measure: 'service peak RSS (ingest window)', value: `${fmt(peakRss)} MiB`, target: '' },
      { measure: `${detectionType} runs in the window`, value: fmt(listed.length), target: '' },
      { measure: 'Temporal actions per hour', value: fmt(actionsPerHour), target: `per-deployment baseline ${fmt(baseline.actions)}` },
      { measure: 'workflow-history events per hour', value: fmt(historyPerHour), target: `per-deployment baseline ${fmt(baseline.history)}` },
    ]);
    if (MODE === 'per-target') {
      process.stdout.write(
        `\nBaseline: ${fmt(baseline.perRun, 1)} actions and ${fmt(baseline.perRunHistory, 1)} history events per DetectionRun (measured on 5 runs of this run's deployments, schedule action included) × ${deployed.length} rules × ${fmt(runsPerHour)} runs/h.\n`,
      );
    }
  } finally {
    await connection?.close();
    await db?.end();
    svc.child.kill('SIGTERM');
    await Promise.race([svc.exited, sleep(30_000)]);
    if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
