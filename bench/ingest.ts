/**
 * Ingestion benchmark: `npx tsx bench/ingest.ts [events]` (default 1,000,000).
 *
 * Sysmon process-creation events (~1.1 KB of NDJSON each, the size of a real Sysmon event 1) go to
 * `POST /api/v1/events` of the full service stack started in this process (PGlite database, API,
 * Temporal dev server, file-backed local event store under the OS temp directory), from a load
 * generator in a separate process, in requests of BENCH_REQUEST_LINES lines (default 100,000;
 * each request is one atomic batch), BENCH_CONCURRENCY at a time (default 2). Target: ≥ 100,000
 * events/s over HTTP, peak RSS of the service < 1 GiB.
 *
 * The same events are first ingested by the store alone (no HTTP, one batch at a time; only the
 * ingest calls timed), in a separate process so that each figure has its own peak RSS. A second
 * baseline is the ceiling of the storage engine itself on this machine: DuckDB loading the same
 * NDJSON from a file into a table of the events table's shape (promoted columns included) with its
 * own parallel CSV reader, all threads, no line checks, no line numbers, no HTTP and no JavaScript
 * per line — what no ingestion path through DuckDB can beat. Figures are
 * printed, not asserted; CPU seconds per 100,000 events are printed too, since other processes on
 * a shared machine change wall-clock rates far more than CPU time.
 *
 * Batch size matters to DuckDB: a transaction that appends fewer rows than a row group (122,880)
 * goes through the write-ahead log and is compressed into the file at the next checkpoint, while a
 * larger one is compressed and written once; BENCH_REQUEST_LINES=125000 shows the difference. The
 * store commits requests that arrive together in one transaction (group commit), so the HTTP
 * figure also reports how many requests shared each commit; the store-only baseline sends one
 * batch at a time and so commits each alone.
 *
 * `/readyz` is polled from the service's process during the HTTP uploads, and then during one
 * upload of BENCH_NO_NEWLINE_MB MiB (default 256) without a newline — one runaway line, rejected by
 * its line number once it passes the per-event cap (1 MiB), the rest read and dropped: its p99
 * tells whether an upload keeps the event loop free (issue 14: such an upload once blocked the
 * process for minutes).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import pino from 'pino';
import { openDatabase } from '../db/client';
import { SecretBox } from '../config/secret-box';
import { openSiemAdapters } from '../siem/adapters';
import { LocalEventStore } from '../siem/local/event-store';
import { DuckDBInstance } from '@duckdb/node-api';
import { eventTimeFromText, timestampJsonValue } from '../siem/local/event-time';
import { extraKeyText, promotedExtraction, promotedItems } from '../siem/local/fields';
import { eventsTableDdl } from '../siem/local/schema';
import { ensureBootstrap } from '../domain/tenants/tenant-service';
import { startApi } from '../api/server';
import { connectClient } from '../worker/temporal-client';
import { resolveTemporalCli } from '../worker/temporal-cli';
import { startTemporalDevServer } from '../worker/temporal-dev-server';
import { printTable } from './support';

const N = Number(process.argv[3] ?? process.argv[2] ?? 1_000_000);
const REQUEST_LINES = Number(process.env.BENCH_REQUEST_LINES ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 2);
const QUERY = '?timestamp_field=UtcTime&product=windows&category=process_creation';
const NO_NEWLINE_MB = Number(process.env.BENCH_NO_NEWLINE_MB ?? 256);
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
/** Peak resident set size of this process so far, in bytes. */
const peakRss = (): number => process.resourceUsage().maxRSS * 1024;

/** One measured run, as a child process reports it on stdout. */
interface Measured {
  events: number;
  bytes: number;
  seconds: number;
  peakRssBytes: number;
  rejected: number;
  /** CPU time of the measuring process (all its threads) over the run: what contention cannot inflate much. */
  cpuSeconds: number;
  /** Ingest batches per committed transaction (group commit); 1 when each was committed alone. */
  batchesPerCommit?: number;
}

const cpuSeconds = (since: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1e6;
};

function batchText(offset: number, size: number): string {
  const lines: string[] = [];
  for (let i = offset; i < offset + size; i++) {
    lines.push(
      JSON.stringify({
        UtcTime: new Date(Date.UTC(2024, 0, 1) + i * 250).toISOString(),
        EventID: 1,
        ProcessGuid: `{5770385f-${(i % 65536).toString(16).padStart(4, '0')}-65f1-0b00-000000001f00}`,
        ProcessId: i % 65536,
        Image: `C:\\Windows\\System32\\proc${i % 50}.exe`,
        FileVersion: '10.0.19041.1',
        Description: 'Windows binary',
        Product: 'Microsoft Windows Operating System',
        Company: 'Microsoft Corporation',
        OriginalFileName: `proc${i % 50}.exe`,
        CommandLine: `proc${i % 50}.exe /c something ${i} --output "C:\\Users\\user${i % 500}\\AppData\\Local\\Temp\\run${i}.tmp"`,
        CurrentDirectory: `C:\\Users\\user${i % 500}\\`,
        User: `CORP\\user${i % 500}`,
        LogonGuid: '{5770385f-0000-0000-0000-000000000000}',
        LogonId: '0x3e7',
        TerminalSessionId: 1,
        IntegrityLevel: 'Medium',
        Hashes: `MD5=${(i * 40503).toString(16).padStart(32, '0')},SHA256=${(i * 2654435761).toString(16).padStart(64, '0')},IMPHASH=${(i * 97).toString(16).padStart(32, '0')}`,
        ParentProcessGuid: '{5770385f-0001-65f1-0b00-000000001f00}',
        ParentProcessId: 4242,
        ParentImage: 'C:\\Windows\\explorer.exe',
        ParentCommandLine: 'C:\\Windows\\explorer.exe',
        ParentUser: `CORP\\user${i % 500}`,
        Computer: `ws-${i % 2000}.corp.example`,
        Channel: 'Microsoft-Windows-Sysmon/Operational',
        RuleName: '-',
      }),
    );
  }
  return lines.join('\n');
}

/** The request bodies, generated before the clock starts: producing events is not the service's work. */
function bodies(): Buffer[] {
  const out: Buffer[] = [];
  for (let offset = 0; offset < N; offset += REQUEST_LINES) out.push(Buffer.from(batchText(offset, Math.min(REQUEST_LINES, N - offset))));
  return out;
}

/** Child process: the store alone, batch after batch, as the HTTP route would call it. */
async function storeOnly(): Promise<Measured> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-ingest-'));
  const store = await LocalEventStore.open({ path: path.join(dir, 'ingest.duckdb') });
  try {
    let seconds = 0;
    let events = 0;
    let rejected = 0;
    let bytes = 0;
    let cpu = 0;
    for (let offset = 0; offset < N; offset += REQUEST_LINES) {
      const text = batchText(offset, Math.min(REQUEST_LINES, N - offset));
      bytes += Buffer.byteLength(text);
      // Only the ingest call is timed: generating the text is the client's work.
      const started = performance.now();
      const cpuStarted = process.cpuUsage();
      const r = await store.ingest(
        'bench',
        'bench',
        { kind: 'ndjson', input: text },
        { timestampField: 'UtcTime', logsource: { product: 'windows', category: 'process_creation' } },
      );
      seconds += (performance.now() - started) / 1000;
      cpu += cpuSeconds(cpuStarted);
      events += r.accepted;
      rejected += r.rejected;
    }
    return { events, bytes, seconds, peakRssBytes: peakRss(), rejected, cpuSeconds: cpu };
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Child process: the storage engine's ceiling. The events are written to an NDJSON file first
 * (untimed), then one INSERT … SELECT over DuckDB's parallel CSV reader (one VARCHAR column: a
 * JSON line holds no raw control character, so \x01 never splits one) fills a fresh file-backed
 * table of the events table's shape with the same expressions the store uses, and a CHECKPOINT
 * puts it on disk.
 */
async function duckdbBulk(): Promise<Measured> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-ingest-bulk-'));
  try {
    const source = path.join(dir, 'events.ndjson');
    const fd = fs.openSync(source, 'w');
    let bytes = 0;
    try {
      for (let offset = 0; offset < N; offset += REQUEST_LINES) {
        const text = `${batchText(offset, Math.min(REQUEST_LINES, N - offset))}\n`;
        bytes += Buffer.byteLength(text);
        fs.writeSync(fd, text);
      }
    } finally {
      fs.closeSync(fd);
    }
    const instance = await DuckDBInstance.create(path.join(dir, 'bulk.duckdb'));
    const con = await instance.connect();
    try {
      await con.run(`SET TimeZone = 'UTC'`);
      await con.run(eventsTableDdl('events'));
      const eventTime = eventTimeFromText(extraKeyText('__p', 0), timestampJsonValue('raw', 'UtcTime'));
      const reader = `read_csv('${source}', columns = {'raw': 'VARCHAR'}, delim = chr(1), quote = '', escape = '', header = false, auto_detect = false)`;
      const started = performance.now();
      const cpuStarted = process.cpuUsage();
      const inserted = await con.runAndReadAll(
        `INSERT INTO events SELECT 0, 'bench', CAST(uuid() AS VARCHAR), ${eventTime}, now()::TIMESTAMP, 'windows', 'process_creation', NULL, strlen(raw), raw, ${promotedItems('__p')}, 'bench'
         FROM (SELECT raw, ${promotedExtraction('raw', ['UtcTime'])} AS __p FROM ${reader})`,
      );
      await con.run('CHECKPOINT');
      const seconds = (performance.now() - started) / 1000;
      const events = Number(inserted.getRowObjects()[0]!.Count);
      return { events, bytes, seconds, peakRssBytes: peakRss(), rejected: N - events, cpuSeconds: cpuSeconds(cpuStarted) };
    } finally {
      con.closeSync();
      instance.closeSync();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function post(url: URL, token: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson', 'content-length': body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Child process: the load generator, CONCURRENCY requests in flight until every body is sent. */
async function client(): Promise<Measured> {
  const url = new URL(`${process.env.BENCH_URL}/api/v1/events${QUERY}`);
  const token = process.env.BENCH_TOKEN!;
  const queue = bodies();
  const bytes = queue.reduce((s, b) => s + b.length, 0);
  let events = 0;
  let rejected = 0;
  const started = performance.now();
  const worker = async () => {
    for (let body = queue.shift(); body; body = queue.shift()) {
      const res = await post(url, token, body);
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 500)}`);
      const result = JSON.parse(res.text) as { accepted: number; rejected: number };
      events += result.accepted;
      rejected += result.rejected;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { events, bytes, seconds: (performance.now() - started) / 1000, peakRssBytes: peakRss(), rejected, cpuSeconds: 0 };
}

/** Child process: one upload of NO_NEWLINE_MB MiB without a newline, written as fast as the service reads it. */
async function noNewline(): Promise<Measured> {
  const url = new URL(`${process.env.BENCH_URL}/api/v1/events${QUERY}`);
  const bytes = NO_NEWLINE_MB * 1024 * 1024;
  const piece = Buffer.alloc(64 * 1024, 'a');
  const started = performance.now();
  const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${process.env.BENCH_TOKEN}`, 'content-type': 'application/x-ndjson', 'content-length': bytes } },
      (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        r.on('error', reject);
      },
    );
    req.on('error', reject);
    let sent = 0;
    const write = () => {
      while (sent < bytes) {
        const chunk = piece.subarray(0, Math.min(piece.length, bytes - sent));
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
  // One line, over the cap: a 400 naming line 1 (every line of the batch was bad).
  if (res.status !== 400 || !res.text.includes('/body/line/1')) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 500)}`);
  return { events: 0, bytes, seconds: (performance.now() - started) / 1000, peakRssBytes: peakRss(), rejected: 1, cpuSeconds: 0 };
}

type ChildMode = 'store-only' | 'duckdb-bulk' | 'client' | 'no-newline';
const CHILD_MODES: Record<ChildMode, () => Promise<Measured>> = { 'store-only': storeOnly, 'duckdb-bulk': duckdbBulk, client, 'no-newline': noNewline };

/** `/readyz` latencies in ms, polled one after another while some work runs, and the event loop's delay meanwhile. */
interface Readyz {
  n: number;
  p50: number;
  p99: number;
  max: number;
  /** Event-loop delay (perf_hooks, 10 ms resolution): the longest stretch nothing else could run. */
  loopP99: number;
  loopMax: number;
}

async function readyzDuring<T>(baseUrl: string, work: Promise<T>): Promise<{ result: T; readyz: Readyz }> {
  const latencies: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let done = false;
  const probe = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await fetch(`${baseUrl}/readyz`);
      await res.text();
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  try {
    const result = await work;
    loop.disable();
    return { result, readyz: summarise(latencies, loop) };
  } finally {
    done = true;
    loop.disable();
    await probe;
  }
}

function summarise(latencies: number[], loop: IntervalHistogram): Readyz {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.ceil(sorted.length * q) - 1)] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN, loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 };
}

/** Runs this file in a child process in `mode` and returns what it measured. */
function child(mode: ChildMode, env: Record<string, string> = {}): Promise<Measured> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...process.execArgv, __filename, mode, String(N)], { env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${mode} failed: ${stderr || err.message}`));
      resolve(JSON.parse(stdout) as Measured);
    });
  });
}

/** The service as `npm start` runs it, in this process; the client posts from another process. */
async function overHttp(): Promise<Measured & { rssBeforeBytes: number; idle: Readyz; readyz: Readyz; noNewline: Measured & { readyz: Readyz } }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-ingest-http-'));
  const temporal = process.env.TEMPORAL_ADDRESS
    ? undefined
    : await startTemporalDevServer({
        cliPath: resolveTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH }),
        port: 17998,
        uiPort: 0,
        dbFile: undefined,
        namespace: 'default',
        headless: true,
        logFile: path.join(dir, 'temporal.log'),
      });
  try {
    const database = await openDatabase({ kind: 'pglite', dataDir: path.join(dir, 'pglite') });
    await database.migrate();
    const token = (await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined }))!;
    const temporalClient = await connectClient(process.env.TEMPORAL_ADDRESS ?? temporal!.address, 'default');
    const siem = await openSiemAdapters({ dataDir: dir });
    // Request logs are part of the stack being measured; they go to /dev/null instead of a terminal.
    const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
    const api = await startApi(
      {
        config: { bodyLimit: '5mb', publicUrl: undefined, ingestLimitBytes: 256 * 1024 * 1024 },
        database,
        logger,
        secrets: SecretBox.fromPassphrase('bench'),
        siem,
        temporal: { client: temporalClient, namespace: 'default', taskQueue: 'bench', uiUrl: undefined },
      },
      '127.0.0.1',
      0,
    );
    try {
      // The baseline: /readyz on the idle service, as loaded as the machine is now.
      const idle = (await readyzDuring(api.url, new Promise((r) => setTimeout(r, 3000)))).readyz;
      const rssBeforeBytes = process.memoryUsage().rss;
      const cpuStarted = process.cpuUsage();
      const { result: measured, readyz } = await readyzDuring(api.url, child('client', { BENCH_URL: api.url, BENCH_TOKEN: token }));
      const cpu = cpuSeconds(cpuStarted);
      const stored = (await siem.localStore.tenantStats('default')).events;
      if (stored !== measured.events) throw new Error(`the store holds ${stored} events, the responses accepted ${measured.events}`);
      // A group's batches share their transaction's start time (now() in DuckDB).
      const groups = await siem.localStore.read(
        async (con) => (await con.runAndReadAll(`SELECT count(*) AS b, count(DISTINCT ingested_at) AS c FROM ingest_batches`)).getRowObjects()[0]!,
      );
      const peakRssBytes = peakRss();
      const noNewlineCpu = process.cpuUsage();
      const lone = await readyzDuring(api.url, child('no-newline', { BENCH_URL: api.url, BENCH_TOKEN: token }));
      const noNewline = { ...lone.result, cpuSeconds: cpuSeconds(noNewlineCpu), peakRssBytes: peakRss(), readyz: lone.readyz };
      // The service's own peak, not the client's.
      return { ...measured, peakRssBytes, rssBeforeBytes, cpuSeconds: cpu, batchesPerCommit: Number(groups.b) / Number(groups.c), idle, readyz, noNewline };
    } finally {
      await api.close();
      await temporalClient.connection.close();
      await database.close();
      await siem.close();
    }
  } finally {
    await temporal?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  if (mode !== undefined && mode in CHILD_MODES) {
    process.stdout.write(JSON.stringify(await CHILD_MODES[mode as ChildMode]()));
    return;
  }
  process.stdout.write(`bench:ingest — ${fmt(N)} events, requests of ${fmt(REQUEST_LINES)} lines, ${CONCURRENCY} in flight, ${os.cpus().length} cores\n\n`);
  const bulk = await child('duckdb-bulk');
  const store = await child('store-only');
  const viaHttp = await overHttp();
  const row = (measure: string, m: Measured, note: string) => ({
    measure,
    events: fmt(m.events),
    rejected: fmt(m.rejected),
    'events/s': fmt(m.events / m.seconds),
    'MB/s': (m.bytes / 1e6 / m.seconds).toFixed(1),
    'peak RSS': mib(m.peakRssBytes),
    'CPU s/100k events': ((m.cpuSeconds / m.events) * 100_000).toFixed(2),
    note,
  });
  printTable([
    row('DuckDB bulk load (ceiling)', bulk, 'read_csv of an NDJSON file → events table, all threads; no checks, no line numbers, no HTTP'),
    row('store only (baseline)', store, 'LocalEventStore.ingest, one batch at a time, no HTTP'),
    row(
      'POST /api/v1/events',
      viaHttp,
      `target ≥ 100,000 events/s, RSS < 1 GiB (service RSS before: ${mib(viaHttp.rssBeforeBytes)}); ${viaHttp.batchesPerCommit?.toFixed(1)} requests per commit`,
    ),
  ]);
  const ms = (r: Readyz) =>
    `p50 ${r.p50.toFixed(1)} / p99 ${r.p99.toFixed(1)} / max ${r.max.toFixed(1)} ms (${fmt(r.n)} probes); event-loop delay p99 ${r.loopP99.toFixed(0)} / max ${r.loopMax.toFixed(0)} ms`;
  const lone = viaHttp.noNewline;
  process.stdout.write(
    `\n/readyz on the idle service (baseline): ${ms(viaHttp.idle)}\n` +
      `/readyz during the uploads: ${ms(viaHttp.readyz)}\n` +
      `/readyz during one ${NO_NEWLINE_MB} MiB upload without a newline (${lone.seconds.toFixed(1)} s, ${(lone.bytes / 1e6 / lone.seconds).toFixed(0)} MB/s, ` +
      `${lone.cpuSeconds.toFixed(1)} CPU s, peak RSS ${mib(lone.peakRssBytes)}; rejected as line 1): ${ms(lone.readyz)}\n`,
  );
  process.stdout.write(
    `${(viaHttp.bytes / viaHttp.events).toFixed(0)} bytes/event; load average at the end ${os.loadavg()[0]!.toFixed(1)} (other processes share the cores)\n`,
  );
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
