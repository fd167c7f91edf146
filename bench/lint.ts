import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import pg from 'pg';
import { openDatabase, type Database } from '../db/client';
import { SecretBox } from '../config/secret-box';
import { openSiemAdapters } from '../siem/adapters';
import { ensureBootstrap } from '../domain/tenants/tenant-service';
import { lintForTarget } from '../sigma/lint/for-target';
import { startApi } from '../api/server';
import { connectClient } from '../worker/temporal-client';
import { resolveTemporalCli } from '../worker/temporal-cli';
import { startTemporalDevServer } from '../worker/temporal-dev-server';
import { loadTest, printTable, type LoadResult } from './support';

/**
 * `POST /api/v1/rules/lint` — what `detflow lint` and every CI pipeline call — through the full
 * stack, against the engine's own speed measured in the same run: `lintForTarget` called in this
 * process on one core, which is the ceiling one API process can reach. Targets: ≥ 500 req/s,
 * p99 ≤ 100 ms, at 20 connections.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A typical CI rule: two selections, a filter, a value list, modifiers, full metadata. */
const RULE = `title: Scheduled Task Running a Payload From a Temp Folder
id: 4f1c2a7e-93d5-4b8e-a0c6-2d7e5b9f8a31
status: experimental
description: schtasks.exe creating a task whose action starts a program from a user temp folder
author: detflow bench
date: 2026-11-02
tags:
  - attack.persistence
  - attack.t1053.005
logsource:
  category: process_creation
  product: windows
detection:
  selection_img:
    Image|endswith: '\\schtasks.exe'
  selection_create:
    CommandLine|contains: '/create'
  selection_temp:
    CommandLine|contains:
      - '\\AppData\\Local\\Temp\\'
      - '\\Windows\\Temp\\'
  filter_updater:
    CommandLine|contains: '/tn "GoogleUpdateTask'
  condition: all of selection_* and not filter_updater
falsepositives:
  - Installers that schedule a clean-up of their own temp folder
level: medium
`;
const BODY = JSON.stringify({ rule: RULE, target: 'local' });

type Row = { setup: string; 'req/s': number; 'p50 ms': number; 'p99 ms': number; 'errors+non2xx': number | string; 'share of baseline': string };

/** The engine alone: lintForTarget in a loop on this process's one thread, with per-call latency. */
function benchInProcess(seconds: number): { perSecond: number; p50: number; p99: number } {
  const samples: number[] = [];
  const warmUntil = performance.now() + 1000;
  while (performance.now() < warmUntil) lintForTarget(RULE, { name: 'local', kind: 'local' });
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  while (performance.now() < end) {
    const t = performance.now();
    lintForTarget(RULE, { name: 'local', kind: 'local' });
    samples.push(performance.now() - t);
  }
  const elapsed = (performance.now() - started) / 1000;
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { perSecond: samples.length / elapsed, p50: at(0.5), p99: at(0.99) };
}

async function openBenchDatabase(kind: 'pglite' | 'postgres'): Promise<{ database: Database; drop(): Promise<void> }> {
  if (kind === 'pglite') {
    const database = await openDatabase({ kind: 'pglite', dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-')) });
    return { database, drop: async () => undefined };
  }
  const name = `detflow_bench_lint_${process.pid}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: POSTGRES_URL });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  await admin(`drop database if exists ${name} with (force)`);
  await admin(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 20 });
  return { database, drop: () => admin(`drop database if exists ${name} with (force)`) };
}

async function benchStack(kind: 'pglite' | 'postgres', temporalAddress: string): Promise<LoadResult> {
  const { database, drop } = await openBenchDatabase(kind);
  await database.migrate();
  // Unlimited tier: the daily request limit must not end the run early.
  const token = (await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined }))!;
  const client = await connectClient(temporalAddress, 'default');
  const siem = await openSiemAdapters({ dataDir: undefined });
  // Request logs are part of the stack being measured; they go to /dev/null instead of a terminal.
  const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
  const api = await startApi(
    {
      config: { bodyLimit: '5mb', publicUrl: undefined, ingestLimitBytes: 256 * 1024 * 1024 },
      database,
      logger,
      secrets: SecretBox.fromPassphrase('bench'),
      siem,
      temporal: { client, namespace: 'default', taskQueue: 'bench', uiUrl: undefined },
    },
    '127.0.0.1',
    0,
  );
  try {
    const url = `${api.url}/api/v1/rules/lint`;
    const options = { connections: CONNECTIONS, method: 'POST', body: BODY, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } };
    await loadTest(url, { ...options, seconds: 2 }); // warm-up
    return await loadTest(url, { ...options, seconds: SECONDS });
  } finally {
    await api.close();
    await client.connection.close();
    await database.close();
    await siem.close();
    await drop();
  }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-temporal-'));
  // The lint route never starts a workflow, but the API is built with its Temporal client, as in production.
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
  const address = process.env.TEMPORAL_ADDRESS ?? temporal!.address;
  try {
    process.stdout.write(
      `bench:lint — POST /api/v1/rules/lint (${RULE.length} B rule, target local), ${CONNECTIONS} connections, ${SECONDS} s each, ${os.cpus().length} cores\n\n`,
    );
    const engine = benchInProcess(Math.min(SECONDS, 5));
    const rows: Row[] = [
      {
        setup: 'lintForTarget in-process, 1 core (baseline)',
        'req/s': Math.round(engine.perSecond),
        'p50 ms': Number(engine.p50.toFixed(2)),
        'p99 ms': Number(engine.p99.toFixed(2)),
        'errors+non2xx': '-',
        'share of baseline': '100%',
      },
    ];
    const stack = (setup: string, r: LoadResult): Row => ({
      setup,
      'req/s': Math.round(r.requestsPerSecond),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'errors+non2xx': r.errors + r.non2xx,
      'share of baseline': `${((r.requestsPerSecond / engine.perSecond) * 100).toFixed(1)}%`,
    });
    rows.push(stack('full stack, PGlite', await benchStack('pglite', address)));
    try {
      rows.push(stack('full stack, PostgreSQL', await benchStack('postgres', address)));
    } catch (err) {
      process.stdout.write(`PostgreSQL not measured: ${(err as Error).message}\n`);
    }
    printTable(rows);
    process.stdout.write('\ntargets: ≥ 500 req/s and p99 ≤ 100 ms through the full stack\n');
  } finally {
    await temporal?.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
