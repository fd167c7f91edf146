import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createApiKey, createCiKey, processRule, startTestService, until, type TestService } from '../support/harness';
import { CHROMIUM, horizontalOverflow, screenshot, seriousViolations } from '../support/console-browser';

const RULE_ID = 'c0000000-0000-4000-8000-000000000001';
const OTHER_RULE = 'c0000000-0000-4000-8000-000000000002';
const REJECTED_RULE = 'c0000000-0000-4000-8000-000000000003';
const CHANGES_RULE = 'c0000000-0000-4000-8000-000000000004';
const DASHBOARD_RULE = 'c0000000-0000-4000-8000-000000000005';
const day = 86_400_000;

describe('the console (/) in a real headless browser', () => {
  let svc: TestService;
  let browser: Browser;
  let ci: string;
  let reviewer: string;
  let fromCi: { approval: string; deployment: string };
  let fromAdmin: { approval: string; deployment: string };
  /** The approved tool's events per UTC day, as put in. */
  const approvedPerDay = new Map<string, number>();

  const requestDeploy = async (ruleId: string, token: string) => {
    const res = await svc.request('POST', '/api/v1/rules/deploy', {
      token,
      body: { rule_id: ruleId, target: 'local', approval_required: true, noise_budget: { max_alerts_per_day: 5 } },
    });
    expect(res.status).toBe(202);
    const approval = res.body.links.approval.split('/').at(-1) as string;
    await until('the impact summary', async () => ((await svc.request('GET', `/api/v1/approvals/${approval}`)).body.impact ? true : undefined));
    return { approval, deployment: res.body.id as string };
  };

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: install Debian's (apt-get install -y chromium) or set DETFLOW_TEST_CHROMIUM.`);
    svc = await startTestService();
    ci = (await createCiKey(svc)).token;
    reviewer = (await createApiKey(svc, svc.token, { name: 'reviewer', permissions: ['approve', 'rules:read'], principal: 'reviewer' })).token;
    for (const [id, title] of [
      [RULE_ID, 'Console approved tool'],
      [OTHER_RULE, 'Console other tool'],
    ]) {
      expect(
        (await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(id!, { title, image: '\\approved.exe', tags: ['attack.execution', 'attack.t1059'] }) } }))
          .status,
      ).toBe(201);
    }
    const at = Date.now();
    const lines = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ '@timestamp': new Date(at - ((i % 6) + 1) * day).toISOString(), Image: i < 14 ? 'C:\\t\\approved.exe' : 'C:\\t\\other.exe', Computer: 'h' }),
    );
    for (let i = 0; i < 14; i++) {
      const d = new Date(at - ((i % 6) + 1) * day).toISOString().slice(0, 10);
      approvedPerDay.set(d, (approvedPerDay.get(d) ?? 0) + 1);
    }
    const ingested = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(ingested.status).toBe(200);
    // One change asked by CI, one by the bootstrap token (principal `bootstrap`), newest last.
    fromCi = await requestDeploy(RULE_ID, ci);
    fromAdmin = await requestDeploy(OTHER_RULE, svc.token);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  /** A fresh tab (own session storage), every request it makes recorded, errors collected. */
  async function open(viewport = { width: 1280, height: 800 }) {
    const context: BrowserContext = await browser.newContext({ viewport });
    const page = await context.newPage();
    const requested: string[] = [];
    const errors: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) errors.push(m.text());
    });
    return { page, context, requested, errors };
  }

  async function signIn(page: Page, token: string) {
    const res = await page.goto(`${svc.url}/`);
    expect(res?.status()).toBe(200);
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
  }

  async function checkPage(page: Page, name: string) {
    await screenshot(page, name);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
  }

  it('serves a page under a self-only CSP that loads nothing from elsewhere; a bad token is refused; the token is never in a URL', async () => {
    const res = await fetch(`${svc.url}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    for (const [, url] of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(url).not.toMatch(/^[a-z]+:|^\/\//i);
    expect((await fetch(`${svc.url}/console/nothing.js`)).status).toBe(404);

    const { page, context, requested, errors } = await open();
    await page.goto(`${svc.url}/`);
    await page.getByLabel('API token').waitFor();
    await checkPage(page, 'sign-in');
    await page.getByLabel('API token').fill(`dfw_${'A'.repeat(38)}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/not valid/);
    await signIn(page, svc.token);
    const origin = new URL(svc.url).origin;
    expect(requested.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    expect(requested.filter((u) => u.includes(svc.token))).toEqual([]);
    expect(await page.evaluate("sessionStorage.getItem('detflow.token')")).toBe(svc.token);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows only what the token may see: a reviewer has no Settings, and sees the API refuse it there', async () => {
    const { page, context } = await open();
    await signIn(page, reviewer);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav.getByRole('link').allTextContents()).resolves.toEqual(['Approvals', 'Rules', 'Runs', 'Dashboard']);
    await page.goto(`${svc.url}/#/settings`);
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/may not see/);
    await context.close();
  });

  it('draws the inbox newest first with each impact, shows four-eyes, and an approval decided there activates the deployment', async () => {
    const { page, context, errors } = await open();
    await signIn(page, svc.token);
    const cards = page.locator('article.approval');
    await cards.nth(1).waitFor();
    await expect(cards.locator('h3').allTextContents()).resolves.toEqual([`${OTHER_RULE} v1`, `${RULE_ID} v1`]);
    const own = cards.nth(0);
    const theirs = cards.nth(1);
    // The bootstrap token requested the first: it may not decide it, and is told why.
    await expect(own.getByRole('note').textContent()).resolves.toMatch(/four-eyes/);
    await expect(own.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
    // The impact: chart against the budget, cost per month, noise delta, diff, run link.
    await expect(theirs.locator('svg.chart:not(.daily) title').textContent()).resolves.toMatch(/on local .*v1 \(new\) 2; noise budget 5$/);
    // The replay per UTC day against the budget: the days the events were put on, from the recorded summary.
    const perDay = (await svc.request('GET', `/api/v1/approvals/${fromCi.approval}`)).body.impact.targets[0].per_day as { day: string; alerts: number }[];
    expect(perDay).toHaveLength(8);
    for (const [day, alerts] of approvedPerDay) expect(perDay).toContainEqual({ day, alerts });
    expect(perDay.reduce((n, d) => n + d.alerts, 0)).toBe(14);
    const daily = await theirs.locator('svg.chart.daily title').textContent();
    for (const d of perDay) expect(daily).toContain(`${d.day.slice(5)} ${d.alerts}`);
    expect(daily).toMatch(/noise budget 5\/day, 0 day\(s\) over$/);
    await expect(theirs.locator('dl').textContent()).resolves.toMatch(/Noise delta\+2\/dayCost per month\$1,125/);
    await expect(theirs.locator('table.diff td.add').allTextContents()).resolves.toContain("    Image|endswith: '\\approved.exe'");
    await expect(theirs.locator('a.run-link').getAttribute('href')).resolves.toMatch(new RegExp(`^http://127.0.0.1:8233/namespaces/default/workflows/approval%2F`));
    await checkPage(page, 'approvals');

    await theirs.getByLabel('Comment').fill('clicked through in the console');
    await theirs.getByRole('button', { name: 'Approve' }).click();
    await expect(theirs.getByRole('status').textContent()).resolves.toMatch(/Decision recorded: approved/);
    const approval = (await svc.request('GET', `/api/v1/approvals/${fromCi.approval}`)).body;
    expect(approval).toMatchObject({ status: 'approved', decision: 'approve', comment: 'clicked through in the console', decided_by_principal: 'bootstrap' });
    await until('the deployment is active', async () => ((await svc.request('GET', `/api/v1/deployments/${fromCi.deployment}`)).body.status === 'active' ? true : undefined));
    // The API enforces four-eyes whatever the page shows.
    expect((await svc.request('POST', `/api/v1/approvals/${fromAdmin.approval}/decision`, { body: { decision: 'approve' } })).status).toBe(403);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('rejects one change and requests changes on another, each with its comment, and the API then shows both decisions', async () => {
    for (const [id, title] of [
      [REJECTED_RULE, 'Console rejected tool'],
      [CHANGES_RULE, 'Console changes tool'],
    ]) {
      expect((await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(id!, { title, image: '\\other.exe' }) } })).status).toBe(201);
    }
    const rejected = await requestDeploy(REJECTED_RULE, ci);
    const changes = await requestDeploy(CHANGES_RULE, ci);
    const { page, context, errors } = await open();
    await signIn(page, reviewer);
    const card = (ruleId: string) => page.locator('article.approval', { has: page.getByRole('heading', { name: `${ruleId} v1` }) });
    await card(CHANGES_RULE).waitFor();
    await card(REJECTED_RULE).getByLabel('Comment').fill('matches the admin tool too');
    await card(REJECTED_RULE).getByRole('button', { name: 'Reject' }).click();
    await expect(card(REJECTED_RULE).getByRole('status').textContent()).resolves.toMatch(/Decision recorded: rejected/);
    await card(CHANGES_RULE).getByLabel('Comment').fill('narrow it to one host group');
    await card(CHANGES_RULE).getByRole('button', { name: 'Request changes' }).click();
    await expect(card(CHANGES_RULE).getByRole('status').textContent()).resolves.toMatch(/Decision recorded: changes requested/);
    expect((await svc.request('GET', `/api/v1/approvals/${rejected.approval}`)).body).toMatchObject({
      status: 'rejected',
      decision: 'reject',
      comment: 'matches the admin tool too',
      decided_by_principal: 'reviewer',
    });
    expect((await svc.request('GET', `/api/v1/approvals/${changes.approval}`)).body).toMatchObject({
      status: 'changes_requested',
      decision: 'request_changes',
      comment: 'narrow it to one host group',
      decided_by_principal: 'reviewer',
    });
    // One decision per approval: the API refuses a second, and a reload no longer lists either as pending.
    expect((await svc.request('POST', `/api/v1/approvals/${rejected.approval}/decision`, { token: reviewer, body: { decision: 'approve' } })).status).toBe(409);
    await page.reload();
    await page.locator('article.approval').first().waitFor();
    await expect(page.locator('article.approval h3').allTextContents()).resolves.not.toContain(`${REJECTED_RULE} v1`);
    await expect(page.locator('article.approval h3').allTextContents()).resolves.not.toContain(`${CHANGES_RULE} v1`);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('lists rules with health, shows a rule with versions and deployments, and rolls it back with a reason', async () => {
    const { page, context, errors } = await open();
    await signIn(page, svc.token);
    await page.getByRole('link', { name: 'Rules' }).click();
    const row = page.getByRole('row', { name: /Console approved tool/ });
    await row.locator('svg.spark').waitFor();
    await checkPage(page, 'rules');
    await row.getByRole('link', { name: 'Console approved tool' }).click();
    const deployment = page.locator(`tr[data-deployment="${fromCi.deployment}"]`);
    await expect(deployment.locator('.badge').textContent()).resolves.toBe('active');
    await expect(deployment.locator('a.run-link').getAttribute('href')).resolves.toMatch(/^http:\/\/127\.0\.0\.1:8233\/namespaces\/default\/workflows\/(deploy|approval)%2F/);
    await page.getByRole('heading', { name: 'Versions' }).waitFor();
    await checkPage(page, 'rule');

    await page.getByLabel('Reason').fill('too noisy on the console test');
    await page.getByRole('button', { name: 'Roll back' }).click();
    await expect(page.locator('form.rollback [role=status], form.rollback [role=alert]').first().textContent()).resolves.toMatch(/Rollback started/);
    await until('the deployment is rolled back', async () =>
      (await svc.request('GET', `/api/v1/deployments/${fromCi.deployment}`)).body.status === 'rolled_back' ? true : undefined,
    );
    expect((await svc.request('GET', `/api/v1/deployments/${fromCi.deployment}`)).body.error).toContain('too noisy on the console test');
    await deployment.locator('.badge', { hasText: 'rolled back' }).waitFor({ timeout: 30_000 });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('creates an API key, showing its token once, and revokes it', async () => {
    const { page, context, errors } = await open();
    await signIn(page, svc.token);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Name').fill('console-made');
    await page.getByRole('button', { name: 'Create key' }).click();
    const token = await page.getByLabel(/shown only now/).inputValue();
    expect(token).toMatch(/^dfw_[A-Za-z0-9]{38}$/);
    expect((await svc.request('GET', '/api/v1/session', { token })).body).toMatchObject({ permissions: ['rules:read'], principal: 'bootstrap' });
    const row = page.locator('tr[data-key="console-made"]');
    await row.waitFor();
    await checkPage(page, 'settings');
    await row.getByRole('button', { name: 'Revoke console-made' }).click();
    await row.getByRole('button', { name: 'Confirm revoking console-made' }).click();
    await row.locator('td', { hasText: /^revoked / }).waitFor();
    expect((await svc.request('GET', '/api/v1/session', { token })).status).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows the dashboard: ATT&CK heatmap, weekly noise ratio and MTTR, team workload and ROI charts drawn from the API', async () => {
    // Alerts to chart: a rule deployed without approval, detection every second, three matching events, two triaged.
    const t = (await svc.request('GET', '/api/v1/settings/targets/local')).body;
    const put = await svc.request('PUT', '/api/v1/settings/targets/local', {
      body: { name: t.name, kind: t.kind, environment: t.environment, connection: t.connection, cost_model: t.cost_model, detection_interval: 'PT1S' },
    });
    expect(put.status).toBe(200);
    expect(
      (await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(DASHBOARD_RULE, { title: 'Console dashboard tool', image: '\\dash.exe' }) } })).status,
    ).toBe(201);
    const deployed = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: DASHBOARD_RULE, target: 'local', approval_required: false } });
    expect(deployed.status).toBe(202);
    await until('the dashboard rule is active', async () =>
      (await svc.request('GET', `/api/v1/deployments/${deployed.body.id}`)).body.status === 'active' ? true : undefined,
    );
    const events = Array.from({ length: 3 }, (_, i) =>
      JSON.stringify({ '@timestamp': new Date().toISOString(), Image: 'C:\\t\\dash.exe', CommandLine: `dash ${i}`, Computer: 'h' }),
    );
    expect(
      (await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', { body: events.join('\n'), headers: { 'content-type': 'application/x-ndjson' } }))
        .status,
    ).toBe(200);
    const raised = await until('three alerts', async () => {
      const items = (await svc.request('GET', `/api/v1/alerts?deployment_id=${deployed.body.id}&limit=10`)).body.items as { id: string }[];
      return items.length >= 3 ? items : undefined;
    });
    for (const [alert, body] of [
      [raised[0], { team: 'soc', assignee: 'ana', disposition: 'false_positive', status: 'closed' }],
      [raised[1], { team: 'soc', assignee: 'bo', disposition: 'true_positive', status: 'closed' }],
      [raised[2], { team: 'ir', assignee: 'cy', status: 'acknowledged' }],
    ] as const)
      expect((await svc.request('PATCH', `/api/v1/alerts/${alert!.id}`, { body })).status).toBe(200);
    const week = (await svc.request('GET', '/api/v1/health/dashboard?window=P7D')).body;
    const month = (await svc.request('GET', '/api/v1/health/dashboard?window=P30D')).body;
    const roi = (await svc.request('GET', '/api/v1/health/roi?window=P30D')).body;
    expect(week.noise.dispositioned).toBeGreaterThanOrEqual(2);

    const { page, context, errors } = await open();
    await signIn(page, svc.token);
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.locator('.heatmap .tactic').first().waitFor();
    const trends = page.locator('svg.chart.trend title');
    await trends.nth(1).waitFor({ state: 'attached' });
    await expect(trends.nth(0).textContent()).resolves.toContain(`this week ${Math.round(week.noise.ratio * 100)}%`);
    await expect(trends.nth(1).textContent()).resolves.toContain(`this week ${(week.mttr.overall.mean_seconds / 3600).toFixed(1)} h`);
    const workload = await page.locator('svg.chart.stacked title').first().textContent();
    for (const team of month.workload.teams as { team: string | null; open: number; acknowledged: number; handled: number }[])
      expect(workload).toContain(`${team.team ?? 'no team'} ${team.open} open, ${team.acknowledged} acknowledged, ${team.handled} handled`);
    expect(workload).toMatch(/soc \d+ open, \d+ acknowledged, [1-9]\d* handled/);
    expect(workload).toMatch(/ir \d+ open, [1-9]\d* acknowledged/);
    const s = roi.noise_saved.by_source;
    await expect(page.locator('svg.chart.stacked title').nth(1).textContent()).resolves.toContain(
      `new versions ${s.new_versions} alerts saved; rollbacks ${s.rollbacks} alerts saved; removals ${s.removals} alerts saved; budget suppression ${s.budget_suppression} alerts saved`,
    );
    await checkPage(page, 'dashboard');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('works on a 390-pixel-wide phone: no sideways scrolling, the key controls in view', async () => {
    const { page, context } = await open({ width: 390, height: 844 });
    await signIn(page, svc.token);
    await page.locator('article.approval').first().waitFor();
    for (const name of ['Approvals', 'Rules', 'Dashboard', 'Settings']) await expect(page.getByRole('link', { name, exact: true }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Sign out' }).isVisible()).resolves.toBe(true);
    await checkPage(page, 'phone-approvals');
    for (const [hash, name, role, label] of [
      ['#/rules', 'phone-rules', 'link', 'Console approved tool'],
      [`#/rules/${RULE_ID}`, 'phone-rule', 'heading', 'Deployments'],
      ['#/settings', 'phone-settings', 'button', 'Create key'],
      ['#/dashboard', 'phone-dashboard', 'heading', 'MITRE ATT&CK coverage'],
    ] as const) {
      await page.goto(`${svc.url}/${hash}`);
      const target = page.getByRole(role, { name: label, exact: true }).first();
      await target.waitFor();
      await target.scrollIntoViewIfNeeded();
      await expect(target.isVisible()).resolves.toBe(true);
      await page.waitForLoadState('networkidle');
      await checkPage(page, name);
    }
    await context.close();
  });
});
