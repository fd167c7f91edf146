import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { eq } from 'drizzle-orm';
import { targets } from '../../db/schema';
import { imageRule, startTestService, until, type TestService } from '../support/harness';
import { CONSOLE_BUILD_DIR } from '../../api/console/build-console';
import { CHROMIUM, horizontalOverflow, screenshot, seriousViolations } from '../support/console-browser';

/** The console's Runs page and its Settings sections (webhook, targets, tenants), clicked through in a headless browser. */

const RULE_ID = 'c0000000-0000-4000-8000-0000000000a1';
const HOUR = 3_600_000;
const DAYS = 60;
// One event an hour for 60 days: with one event a chunk the replay has 1440 steps, long enough to be caught running.
const BASE = Math.floor(Date.now() / HOUR) * HOUR - DAYS * 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

describe('the console: runs and settings', () => {
  let svc: TestService;
  let browser: Browser;
  let receiver: http.Server;
  let receiverUrl: string;
  const received: string[] = [];
  let shadowId: string;

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: install Debian's (apt-get install -y chromium) or set DETFLOW_TEST_CHROMIUM.`);
    svc = await startTestService();
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(RULE_ID, 'evil.exe') } })).status).toBe(201);
    const lines = Array.from({ length: DAYS * 24 }, (_, h) => JSON.stringify({ '@timestamp': iso(BASE + h * HOUR + 60_000), Image: 'C:\\Tools\\evil.exe' }));
    const ingested = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(ingested.body.accepted).toBe(lines.length);
    const shadow = await svc.request('POST', '/api/v1/rules/shadow', { body: { rule_id: RULE_ID, target: 'local', duration: 'PT10M', interval: 'PT1M' } });
    expect(shadow.status).toBe(202);
    shadowId = shadow.body.id;
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(body);
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
    if (shadowId) {
      await svc.request('POST', `/api/v1/shadows/${shadowId}/stop`);
      await svc.request('GET', `/api/v1/shadows/${shadowId}?wait=30`);
    }
    await svc?.close();
  });

  async function open(path: string, viewport = { width: 1280, height: 800 }) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) errors.push(m.text());
    });
    await page.goto(`${svc.url}/`);
    await page.getByLabel('API token').fill(svc.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await page.goto(`${svc.url}/${path}`);
    return { page, context, errors };
  }

  async function checkPage(page: Page, name: string) {
    await screenshot(page, name);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
  }

  it('keeps the console within its budget of 300 KB of gzipped JavaScript', () => {
    // The service built it on start (api/console/build-console.ts), of the sources under test.
    const gzipped = zlib.gzipSync(fs.readFileSync(path.join(CONSOLE_BUILD_DIR, 'app.js'))).length;
    expect(gzipped).toBeLessThanOrEqual(300 * 1024);
  });

  it('shows a running replay with its progress, updating live, and cancels it from the page', async () => {
    const started = await svc.request('POST', '/api/v1/rules/replay', {
      body: { rule_id: RULE_ID, target: 'local', from: iso(BASE), to: iso(BASE + DAYS * 24 * HOUR), chunk_events: 1 },
    });
    expect(started.status).toBe(202);
    const id = started.body.id as string;
    const { page, context, errors } = await open('#/runs');
    const card = page.locator(`article[data-run="${id}"]`);
    const bar = card.getByRole('progressbar');
    // The bar moves while the page stays open: the page reads the run again by itself.
    const first = Number(await until('the bar drawn with a value', async () => (await bar.getAttribute('value')) ?? undefined));
    await until('the bar moves', async () => (Number(await bar.getAttribute('value')) > first ? true : undefined));
    await expect(bar.getAttribute('max')).resolves.toBe(String(DAYS * 24));
    await expect(card.locator('.badge').textContent()).resolves.toBe('running');
    await expect(card.locator('a.run-link').getAttribute('href')).resolves.toMatch(/^http:\/\/127\.0\.0\.1:8233\/namespaces\/default\/workflows\/replay%2F/);
    await page.locator(`article[data-run="${shadowId}"]`).getByRole('progressbar').waitFor();
    await checkPage(page, 'runs');

    await card.getByRole('button', { name: `Cancel replay of ${RULE_ID}` }).click();
    await card.getByRole('button', { name: `Confirm: cancel replay of ${RULE_ID}` }).click();
    const ended = (await svc.request('GET', `/api/v1/replays/${id}?wait=30`)).body;
    expect(ended.status).toBe('cancelled');
    expect(ended.result.chunks.done).toBeLessThan(DAYS * 24);
    await card.locator('.badge', { hasText: 'cancelled' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('sets up the webhook, test-sends it and shows the delivery in the log; the secret is never shown back', async () => {
    const { page, context, errors } = await open('#/settings/webhook');
    await page.getByLabel('URL').fill(receiverUrl);
    await page.getByLabel(/^Secret/).fill('a-console-secret-of-some-length');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByRole('button', { name: 'Send a test notification' }).click();
    const row = page.locator('tr[data-event="webhook.test"]');
    await row.locator('.badge', { hasText: 'delivered' }).waitFor({ timeout: 30_000 });
    expect(received.some((b) => b.includes('webhook.test'))).toBe(true);
    await expect(page.getByLabel(/^Secret/).inputValue()).resolves.toBe('');
    expect(await page.content()).not.toContain('a-console-secret-of-some-length');
    expect((await svc.request('GET', '/api/v1/settings/webhook')).body).toMatchObject({ url: receiverUrl, secret_set: true });
    await checkPage(page, 'settings-webhook');
    expect(errors).toEqual([]);
    await context.close();
  });

  it("edits a target's cost model, and a credential only ever written, never shown", async () => {
    const splunk = await svc.request('POST', '/api/v1/settings/targets', {
      body: {
        name: 'splunk-prod',
        kind: 'splunk',
        environment: 'prod',
        connection: { management_url: 'https://splunk.example:8089', token: 'first-secret-token' },
        cost_model: { currency: 'USD', price_per_gb_scanned: 0.5, triage_minutes_per_alert: 10, cost_per_analyst_hour: 90 },
      },
    });
    expect(splunk.status).toBe(201);
    const sealed = async () => {
      const [row] = await svc.database.db.select({ connection: targets.connection }).from(targets).where(eq(targets.name, 'splunk-prod'));
      return row!.connection.token;
    };
    const sealedBefore = await sealed();
    const { page, context, errors } = await open('#/settings/targets');
    const card = page.locator('article[data-target="local"]');
    await card.getByRole('button', { name: 'Edit local' }).click();
    await card.getByLabel('Price per GB scanned').fill('7.5');
    await card.getByLabel('Currency (ISO 4217)').fill('EUR');
    await checkPage(page, 'settings-targets');
    await card.getByRole('button', { name: 'Save local' }).click();
    await card.locator('.cost-model', { hasText: '7.5 EUR/GB' }).waitFor();
    expect((await svc.request('GET', '/api/v1/settings/targets/local')).body.cost_model).toMatchObject({ currency: 'EUR', price_per_gb_scanned: 7.5 });

    const remote = page.locator('article[data-target="splunk-prod"]');
    await expect(remote.locator('dd', { hasText: 'token: set (write-only)' }).count()).resolves.toBe(1);
    await remote.getByRole('button', { name: 'Edit splunk-prod' }).click();
    await expect(remote.getByLabel('token (write-only)').inputValue()).resolves.toBe('');
    await remote.getByLabel('token (write-only)').fill('second-secret-token');
    await remote.getByLabel('Triage minutes per alert').fill('12');
    await remote.getByRole('button', { name: 'Save splunk-prod' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved splunk-prod' }).waitFor();
    const stored = (await svc.request('GET', '/api/v1/settings/targets/splunk-prod')).body;
    expect(stored).toMatchObject({ connection: { management_url: 'https://splunk.example:8089', token: '********' }, cost_model: { triage_minutes_per_alert: 12 } });
    // The new credential was stored (sealed: not the text typed), the old one replaced.
    const sealedAfter = await sealed();
    expect([sealedAfter === sealedBefore, JSON.stringify(sealedAfter).includes('second-secret-token')]).toEqual([false, false]);
    const html = await page.content();
    expect([html.includes('first-secret-token'), html.includes('second-secret-token')]).toEqual([false, false]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('lets the operator create a tenant, showing its admin token once', async () => {
    const { page, context, errors } = await open('#/settings/tenants');
    await page.getByLabel(/^Id/).fill('console-tenant');
    await page.getByLabel('Name', { exact: true }).fill('Console tenant');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    const token = await page.getByLabel(/shown only now/).inputValue();
    expect((await svc.request('GET', '/api/v1/session', { token })).body).toMatchObject({ tenant_id: 'console-tenant' });
    await page.locator('tr[data-tenant="console-tenant"]').waitFor();
    await checkPage(page, 'settings-tenants');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('works on a 390-pixel-wide phone: Runs without sideways scrolling, Stop in view and working', async () => {
    const { page, context } = await open('#/runs', { width: 390, height: 844 });
    const card = page.locator(`article[data-run="${shadowId}"]`);
    const stop = card.getByRole('button', { name: `Stop shadow evaluation of ${RULE_ID}` });
    await stop.waitFor();
    await stop.scrollIntoViewIfNeeded();
    await expect(stop.isVisible()).resolves.toBe(true);
    await checkPage(page, 'phone-runs');
    await stop.click();
    await card.getByRole('button', { name: `Confirm: stop shadow evaluation of ${RULE_ID}` }).click();
    const ended = (await svc.request('GET', `/api/v1/shadows/${shadowId}?wait=30`)).body;
    expect(ended).toMatchObject({ status: 'completed', result: { stopped_early: true } });
    await context.close();
  });
});
