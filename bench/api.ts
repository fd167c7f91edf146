import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import pino from 'pino';
import pg from 'pg';
import { openDatabase, type Database } from '../db/client';
import { SecretBox } from '../config/secret-box';
import { openSiemAdapters } from '../siem/adapters';
import { ensureBootstrap } from '../domain/tenants/tenant-service';
import { storeRuleVersion } from '../domain/rules/rule-store';
import { startApi } from '../api/server';
import { connectClient } from '../worker/temporal-client';
import { resolveTemporalCli } from '../worker/temporal-cli';
import { startTemporalDevServer } from '../worker/temporal-dev-server';
import { listen, loadTest, printTable, type LoadResult } from './support';

/**
 * Authenticated requests per second through the full middleware stack (request id, request log,
 * token lookup, shared rate-limit counter, validation, handler, audit row), against a bare Express
 * handler measured in the same run. Targets: ≥ 2,000 req/s on PostgreSQL, ≥ 1,000 on PGlite,
 * p99 ≤ 50 ms, at 50 connections.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RULE_ID = '11111111-2222-4333-8444-555555555555';
const RULE = `title: Bench rule\nid: ${RULE_ID}\nstatus: test\nlevel: high\nlogsource:\n  category: process_creation\n  product: windows\ndetection:\n  selection:\n    Image|endswith: '\\\\evil.exe'\n  condition: selection\n`;

async function benchStack(kind: 'pglite' | 'postgres', temporalAddress: string): Promise<LoadResult> {
  let database: Database;
  let dropDb = async () => undefined as void;
  if (kind === 'pglite') {
    database = await openDatabase({ kind: 'pglite', dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-')) });
  } else {
    const name = `detflow_bench_${process.pid}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 20 });
    dropDb = async () => {
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  }
  await database.migrate();
  const token = (await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined }))!;
  await storeRuleVersion(database.db, 'default', RULE, null);
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
    const url = `${api.url}/api/v1/rules/${RULE_ID}`;
    await loadTest(url, { connections: CONNECTIONS, seconds: 2, headers: { authorization: `Bearer ${token}` } }); // warm-up
    return await loadTest(url, { connections: CONNECTIONS, seconds: SECONDS, headers: { authorization: `Bearer ${token}` } });
  } finally {
    await api.close();
    await client.connection.close();
    await database.close();
    await siem.close();
    await dropDb();
  }
}

async function benchBareExpress(): Promise<LoadResult> {
  const app = express();
  app.get('/x', (_req, res) => {
    res.json({ rule_id: RULE_ID, title: 'Bench rule', content: RULE });
  });
  const server = await listen(app);
  try {
    await loadTest(`${server.url}/x`, { connections: CONNECTIONS, seconds: 2 });
    return await loadTest(`${server.url}/x`, { connections: CONNECTIONS, seconds: SECONDS });
  } finally {
    await server.close();
  }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-temporal-'));
  const temporal = process.env.TEMPORAL_ADDRESS
    ? undefined
    : await startTemporalDevServer({
        cliPath: resolveTemporalCli({ cliPath: process.env.TEMPORAL_CLI_PATH }),
        port: 17999,
        uiPort: 0,
        dbFile: undefined,
        namespace: 'default',
        headless: true,
        logFile: path.join(dir, 'temporal.log'),
      });
  const address = process.env.TEMPORAL_ADDRESS ?? temporal!.address;
  try {
    process.stdout.write(`bench:api — GET /api/v1/rules/{id}, ${CONNECTIONS} connections, ${SECONDS} s each, ${os.cpus().length} cores\n\n`);
    const bare = await benchBareExpress();
    const results: Array<[string, LoadResult]> = [['bare express (baseline)', bare]];
    results.push(['full stack, PGlite', await benchStack('pglite', address)]);
    try {
      results.push(['full stack, PostgreSQL', await benchStack('postgres', address)]);
    } catch (err) {
      process.stdout.write(`PostgreSQL not measured: ${(err as Error).message}\n`);
    }
    printTable(
      results.map(([name, r]) => ({
        setup: name,
        'req/s': Math.round(r.requestsPerSecond),
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'errors+non2xx': r.errors + r.non2xx,
        'share of baseline': `${((r.requestsPerSecond / bare.requestsPerSecond) * 100).toFixed(1)}%`,
      })),
    );
  } finally {
    await temporal?.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
