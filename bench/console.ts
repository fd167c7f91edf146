import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import pino from 'pino';
import { chromium } from 'playwright-core';
import { openDatabase } from '../db/client';
import { approvals } from '../db/schema';
import { SecretBox } from '../config/secret-box';
import { openSiemAdapters } from '../siem/adapters';
import { ensureBootstrap } from '../domain/tenants/tenant-service';
import { startApi } from '../api/server';
import { CONSOLE_BUILD_DIR, ensureConsoleBuilt } from '../api/console/build-console';
import { connectClient } from '../worker/temporal-client';
import { resolveTemporalCli } from '../worker/temporal-cli';
import { startTemporalDevServer } from '../worker/temporal-dev-server';
import { printTable } from './support';

/**
 * The console's first render of the approvals inbox with 200 pending approvals (each with a
 * one-target impact summary, its replay per day and a 14-line diff), on loopback in headless
 * Chromium: from navigation to the 200th card drawn, and to every chart and diff drawn. Each run
 * loads the page twice, `?eager` (everything drawn at once: the same-run baseline) and as reviewers
 * get it (charts and diffs near the viewport first, the rest when idle). Printed, not asserted
 * (target ≤ 1 s). Also the build's gzipped size (target: JavaScript ≤ 300 KB gzipped).
 */
const PENDING = Number(process.env.BENCH_APPROVALS ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CHROMIUM = process.env.DETFLOW_TEST_CHROMIUM ?? '/usr/bin/chromium';

const ruleText = (i: number) =>
  [
    `title: Bench rule ${i}`,
    `id: ${crypto.randomUUID()}`,
    'status: test',
    'level: high',
    'tags:',
    '  - attack.execution',
    '  - attack.t1059',
    'logsource:',
    '  category: process_creation',
    '  product: windows',
    'detection:',
    '  selection:',
    `    Image|endswith: '\\\\tool${i}.exe'`,
    '  condition: selection',
  ].join('\n');

/** Eight UTC days of a seven-day replay window whose counts add up to about seven days at `perDay`. */
const days = (perDay: number) =>
  Array.from({ length: 8 }, (_, d) => ({
    day: new Date(Date.now() - (7 - d) * 86_400_000).toISOString().slice(0, 10),
    alerts: d === 0 || d === 7 ? Math.floor(perDay / 2) : perDay + (d % 3) - 1,
  }));

function impact(i: number) {
  const lines = ruleText(i).split('\n');
  return {
    rule_id: `bench-${i}`,
    version: 2,
    noise_budget: { max_alerts_per_day: 10 },
    projected_alerts_per_day: i % 13,
    over_budget: i % 13 > 10,
    alerts_per_day: { value: i % 13, ci95: { low: Math.max(0, (i % 13) - 2), high: (i % 13) + 3 }, method: 'poisson-exact-garwood' },
    low_confidence: false,
    low_confidence_reasons: [],
    computed_at: new Date().toISOString(),
    targets: [
      {
        target: 'local',
        kind: 'local',
        environment: 'dev',
        lookback_days: 7,
        events_scanned: 100_000,
        bytes_scanned: 50_000_000,
        projected_alerts_per_day: i % 13,
        alerts_per_day: { value: i % 13, ci95: { low: Math.max(0, (i % 13) - 2), high: (i % 13) + 3 } },
        cost_per_day: { currency: 'USD', scanning: 0.01, triage: (i % 13) * 18.75, total: (i % 13) * 18.75 + 0.01, total_ci95: null },
        per_day: days(i % 13),
        current: { deployment_id: crypto.randomUUID(), version: 1, projected_alerts_per_day: 4, alerts_per_day: null, per_day: days(4) },
        noise_delta_per_day: (i % 13) - 4,
        over_budget: i % 13 > 10,
        low_confidence: false,
        diff: [
          `--- bench-${i}@v1`,
          `+++ bench-${i}@v2`,
          `@@ -1,14 +1,14 @@`,
          ...lines.slice(0, 12).map((l) => ` ${l}`),
          `-    Image|endswith: '\\\\old${i}.exe'`,
          `+${lines[12]}`,
          ` ${lines[13]}`,
        ].join('\n'),
      },
    ],
  };
}

async function main() {
  const manifest = await ensureConsoleBuilt({ force: true });
  const gz = (file: string) => zlib.gzipSync(fs.readFileSync(path.join(CONSOLE_BUILD_DIR, file)), { level: 9 }).length;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-bench-console-'));
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
  const database = await openDatabase({ kind: 'pglite', dataDir: path.join(dir, 'db') });
  await database.migrate();
  const token = (await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined }))!;
  const now = Date.now();
  // Recorded as the API records them (the inbox reads rows; no run is needed to list them).
  await database.db.insert(approvals).values(
    Array.from({ length: PENDING }, (_, i) => ({
      id: crypto.randomUUID(),
      tenantId: 'default',
      ruleId: `bench-${i}`,
      version: 2,
      targets: ['local'],
      deploymentIds: [crypto.randomUUID()],
      noiseBudget: { max_alerts_per_day: 10 },
      status: 'pending' as const,
      description: `Bench change ${i}`,
      impact: impact(i),
      requestedByPrincipal: i % 2 ? 'ci' : 'bootstrap',
      workflowId: `approval/default/bench-${i}/${crypto.randomUUID()}`,
      createdAt: new Date(now - i * 1000),
      expiresAt: new Date(now + 7 * 86_400_000),
    })),
  );
  const client = await connectClient(process.env.TEMPORAL_ADDRESS ?? temporal!.address, 'default');
  const siem = await openSiemAdapters({ dataDir: undefined });
  const api = await startApi(
    {
      config: { bodyLimit: '5mb', publicUrl: undefined, ingestLimitBytes: 1024 * 1024 },
      database,
      logger: pino({ level: 'silent' }),
      secrets: SecretBox.fromPassphrase('bench'),
      siem,
      temporal: { client, namespace: 'default', taskQueue: 'bench', uiUrl: 'http://127.0.0.1:8233' },
    },
    '127.0.0.1',
    0,
  );
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const rows: Array<Record<string, string | number>> = [];
    // Each run measures both modes back to back: `?eager` draws every chart and diff at once (the
    // same-run baseline), `lazy` (what reviewers get) draws those near the viewport, the rest when idle.
    for (let run = 1; run <= RUNS; run++)
      for (const mode of ['eager', 'lazy'] as const) {
        // A new context each time: an empty cache, as a reviewer's first visit.
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        await context.addInitScript(`sessionStorage.setItem('detflow.token', ${JSON.stringify(token)})`);
        const page = await context.newPage();
        const apiStarted = performance.now();
        const listed = await fetch(`${api.url}/api/v1/approvals?status=pending&limit=200`, { headers: { authorization: `Bearer ${token}` } });
        const apiBytes = (await listed.arrayBuffer()).byteLength;
        const apiMs = performance.now() - apiStarted;
        const started = performance.now();
        await page.goto(`${api.url}/${mode === 'eager' ? '?eager' : ''}`);
        await page.locator('article.approval').first().waitFor({ timeout: 60_000 });
        const first = performance.now() - started;
        await page
          .locator('article.approval')
          .nth(PENDING - 1)
          .waitFor({ timeout: 60_000 });
        const wall = performance.now() - started;
        for (let i = 0; i < 100 && !(await page.evaluate("performance.getEntriesByName('inbox:complete').length")); i++) await new Promise((r) => setTimeout(r, 20));
        // Charts and diffs are drawn near the viewport first, the rest while the browser is idle.
        for (let i = 0; i < 1200 && Number(await page.evaluate("document.querySelectorAll('table.diff').length")) < PENDING; i++) await new Promise((r) => setTimeout(r, 50));
        const filled = performance.now() - started;
        const marks = (await page.evaluate("Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime]))")) as Record<string, number>;
        rows.push({
          run,
          mode,
          'load avg': os.loadavg()[0]!.toFixed(1),
          'GET /approvals alone (ms)': Math.round(apiMs),
          'its bytes': apiBytes,
          'navigation → first card (ms)': Math.round(first),
          'navigation → 200 cards drawn (ms)': Math.round(wall),
          'in page: list fetched (ms)': Math.round(marks['inbox:fetched'] ?? NaN),
          'in page: first screenful (ms)': Math.round(marks['inbox:first-batch'] ?? NaN),
          'in page: all drawn (ms)': Math.round(marks['inbox:complete'] ?? NaN),
          'navigation → every chart and diff drawn (ms)': Math.round(filled),
        });
        await context.close();
      }
    process.stdout.write(`bench:console — inbox first render, ${PENDING} pending approvals, loopback, headless Chromium, ${os.cpus().length} cores\n\n`);
    printTable(rows);
    for (const mode of ['eager', 'lazy']) {
      const of = rows.filter((r) => r.mode === mode);
      const median = (column: string) => of.map((r) => Number(r[column])).sort((a, b) => a - b)[Math.floor(of.length / 2)];
      process.stdout.write(
        `\nmedian ${mode}: first screenful ${median('in page: first screenful (ms)')} ms (page clock), first card seen ${median('navigation → first card (ms)')} ms, all ${PENDING} drawn ${median('navigation → 200 cards drawn (ms)')} ms (target ≤ 1000 ms), every chart and diff drawn ${median('navigation → every chart and diff drawn (ms)')} ms; load average ${os.loadavg()[0]!.toFixed(1)}\n`,
      );
    }
    process.stdout.write(
      `console build: app.js ${manifest.files['app.js']!.bytes} B (${gz('app.js')} B gzipped; target ≤ 300 KB), app.css ${manifest.files['app.css']!.bytes} B (${gz('app.css')} B gzipped)\n`,
    );
  } finally {
    await browser.close();
    await api.close();
    await client.connection.close();
    await database.close();
    await siem.close();
    await temporal?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
