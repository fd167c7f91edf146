import { createApiKey, createTenant, processRule, startTestService, type TestService, until } from '../support/harness';

/**
 * GET /health/roi over a history built through the public API and real scheduled detection (a
 * Temporal Schedule per deployment every second on local targets): a tuned version, a rollback on
 * budget, a removal, budget suppression on two targets in two currencies, rules with ATT&CK tags
 * lost and gained in the window. Every figure is worked out here from what the test did and what
 * the API recorded (deployment times, alert counts, the replay's result).
 */

const DAY_MS = 86_400_000;
const USD = { currency: 'USD', price_per_gb_scanned: 0.25, triage_minutes_per_alert: 30, cost_per_analyst_hour: 60 };
const EUR = { currency: 'EUR', price_per_gb_scanned: 0.1, triage_minutes_per_alert: 12, cost_per_analyst_hour: 100 };

const R1 = 'c1000000-0000-4000-8000-000000000001'; // tuned: v2 matches fewer events
const R2 = 'c1000000-0000-4000-8000-000000000002'; // v2 rolled back on its budget
const KEPT = 'c1000000-0000-4000-8000-000000000003'; // T1059.001, live throughout
const LOST = 'c1000000-0000-4000-8000-000000000004'; // T1003.001, removed in the window
const GAINED = 'c1000000-0000-4000-8000-000000000005'; // T1566.001, deployed in the window on `eu`
const OTHER = 'c1000000-0000-4000-8000-000000000006'; // another tenant's

let seq = 0;
const event = (image: string) => JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} ${++seq}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (iso: string) => new Date(iso).getTime();

describe('GET /health/roi', () => {
  let svc: TestService;
  let otherToken: string;
  let emptyToken: string;
  let t0: number;
  const dep: Record<string, any> = {};
  let replay: any;
  let otherDeployment: string;

  const put = (name: string, body: Record<string, unknown>, token?: string) => svc.request('PUT', `/api/v1/settings/targets/${name}`, { body, ...(token ? { token } : {}) });
  const ingest = async (target: string, image: string, n: number, token?: string) => {
    const res = await svc.request('POST', `/api/v1/events?target=${target}&product=windows&category=process_creation`, {
      body: Array.from({ length: n }, () => event(image)).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
      ...(token ? { token } : {}),
    });
    expect(res.body.accepted).toBe(n);
  };
  async function deploy(
    ruleId: string,
    image: string,
    revision: number,
    options: { target?: string; tags?: string[]; budget?: Record<string, unknown>; token?: string } = {},
  ) {
    const rule = processRule(ruleId, { title: `ROI ${image} (revision ${revision})`, image: `\\${image}`, ...(options.tags ? { tags: options.tags } : {}) });
    const token = options.token ? { token: options.token } : {};
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule }, ...token })).status).toBeLessThan(300);
    const res = await svc.request('POST', '/api/v1/rules/deploy', {
      body: { rule_id: ruleId, target: options.target ?? 'local', approval_required: false, version: revision, ...(options.budget ? { noise_budget: options.budget } : {}) },
      ...token,
    });
    expect(res.status).toBe(202);
    expect(await svc.client.workflow.getHandle(res.body.workflow_id).result()).toMatchObject({ status: 'active' });
    return res.body.id as string;
  }
  const alertsOf = async (id: string, token?: string) =>
    (await svc.request('GET', `/api/v1/alerts?deployment_id=${id}&limit=500`, token ? { token } : {})).body.items as Array<{ status: string }>;
  const alertCount = (id: string, n: number) => until(`${n} alerts of ${id}`, async () => ((await alertsOf(id)).length === n ? true : undefined));
  const deployment = async (id: string) => (await svc.request('GET', `/api/v1/deployments/${id}`)).body;
  const roi = (query: string, token?: string) => svc.request('GET', `/api/v1/health/roi${query}`, token ? { token } : {});
  /** A window (whole seconds) reaching back just before t0: after the rules deployed before it, before everything else. */
  const windowSinceT0 = () => `PT${Math.ceil((Date.now() - t0) / 1000) + 1}S`;

  beforeAll(async () => {
    svc = await startTestService();
    const local = (await svc.request('GET', '/api/v1/settings/targets/local')).body;
    expect((await put('local', { name: 'local', kind: 'local', environment: local.environment, connection: {}, detection_interval: 'PT1S', cost_model: USD })).status).toBe(
      200,
    );
    const eu = await svc.request('POST', '/api/v1/settings/targets', {
      body: { name: 'eu', kind: 'local', environment: 'prod', connection: {}, detection_interval: 'PT1S', cost_model: EUR },
    });
    expect(eu.status).toBe(201);

    // Before the window: two tagged rules live on `local`.
    dep.kept = await deploy(KEPT, 'kept.exe', 1, { tags: ['attack.execution', 'attack.t1059.001'] });
    dep.lost = await deploy(LOST, 'lost.exe', 1, { tags: ['attack.credential-access', 'attack.t1003.001'], budget: { max_alerts_per_day: 0, on_exceed: 'rollback' } });
    await sleep(3500);
    t0 = Date.now();

    // A tuned version: v1 matches every tuned.exe, v2 only those under x\.
    dep.r1v1 = await deploy(R1, 'tuned.exe', 1);
    await ingest('local', 'tuned.exe', 3);
    await ingest('local', 'x\\tuned.exe', 1);
    await alertCount(dep.r1v1, 4);
    const started = await svc.request('POST', '/api/v1/rules/replay', { body: { rule_id: R1, version: 1, target: 'local', lookback: 'PT5M' } });
    expect(started.status).toBe(202);
    replay = (await svc.request('GET', `/api/v1/replays/${started.body.id}?wait=30`)).body;
    expect(replay.status).toBe('completed');
    expect(replay.result.alerts.total).toBe(4);
    dep.r1v2 = await deploy(R1, 'x\\tuned.exe', 2);
    await ingest('local', 'tuned.exe', 2);
    await ingest('local', 'x\\tuned.exe', 1);
    await alertCount(dep.r1v2, 1);

    // A rollback on budget: v2 (same match, budget 1/day) goes over it and v1 is restored, suppressing beyond 1/day.
    dep.r2v1 = await deploy(R2, 'rb.exe', 1);
    await ingest('local', 'rb.exe', 2);
    await alertCount(dep.r2v1, 2);
    await sleep(1200);
    dep.r2v2 = await deploy(R2, 'rb.exe', 2, { budget: { max_alerts_per_day: 1, on_exceed: 'rollback' } });
    await sleep(1200); // live for more than a second, so PT1S observes it
    await ingest('local', 'rb.exe', 3);
    const restored = await until('v1 restored', async () => {
      const items = (await svc.request('GET', `/api/v1/deployments?rule_id=${R2}&status=active`)).body.items;
      return items.length === 1 && items[0].version === 1 && items[0].id !== dep.r2v1 ? items[0] : undefined;
    });
    dep.r2v1b = restored.id;
    await ingest('local', 'rb.exe', 2);
    await alertCount(dep.r2v1b, 2);

    // A removal: the lost rule goes over its zero budget with no earlier version to restore.
    await ingest('local', 'lost.exe', 1);
    await until('lost rule removed', async () => ((await deployment(dep.lost)).status === 'rolled_back' ? true : undefined));

    // On `eu` (prod, EUR): a gained technique, and budget suppression.
    dep.gained = await deploy(GAINED, 'gained.exe', 1, { target: 'eu', tags: ['attack.initial-access', 'attack.t1566.001'], budget: { max_alerts_per_day: 1 } });
    await ingest('eu', 'gained.exe', 3);
    await alertCount(dep.gained, 3);

    // Another tenant with suppressed alerts of its own, and a tenant with nothing.
    otherToken = await createTenant(svc, 'roi-other');
    emptyToken = await createTenant(svc, 'roi-empty');
    const otherLocal = (await svc.request('GET', '/api/v1/settings/targets/local', { token: otherToken })).body;
    expect(
      (await put('local', { name: 'local', kind: 'local', environment: otherLocal.environment, connection: {}, detection_interval: 'PT1S', cost_model: USD }, otherToken))
        .status,
    ).toBe(200);
    otherDeployment = await deploy(OTHER, 'other.exe', 1, { token: otherToken, tags: ['attack.t1190'], budget: { max_alerts_per_day: 0 } });
    await ingest('local', 'other.exe', 2, otherToken);
    await until('the other tenant’s suppressed alerts', async () => ((await alertsOf(otherDeployment, otherToken)).length === 2 ? true : undefined));

    for (const key of Object.keys(dep)) dep[key] = await deployment(dep[key]);
  }, 180_000);
  afterAll(() => svc.close());

  /** Alerts an API-listed deployment matched (open and suppressed; none of these was demoted). */
  const matched = async (d: { id: string }) => (await alertsOf(d.id)).length;
  const suppressed = async (d: { id: string }) => (await alertsOf(d.id)).filter((a) => a.status === 'suppressed').length;
  const days = (from: number, to: number) => (to - from) / DAY_MS;
  const liveDays = (d: any) => days(ms(d.activated_at), ms(d.ended_at));
  const change = (body: any, kind: string, ruleId: string) => body.noise_saved.changes.find((c: any) => c.kind === kind && c.rule_id === ruleId);

  it('records the history the figures rest on', async () => {
    expect(dep.r1v1.status).toBe('superseded');
    expect(ms(dep.r1v1.ended_at)).toBe(ms(dep.r1v2.activated_at));
    expect(dep.r2v1.status).toBe('superseded');
    expect(dep.r2v2.status).toBe('rolled_back');
    expect(ms(dep.r2v2.ended_at)).toBe(ms(dep.r2v1b.activated_at));
    expect(dep.lost.status).toBe('rolled_back');
    expect(await suppressed(dep.r2v2)).toBe(2);
    expect(await suppressed(dep.r2v1b)).toBe(1);
    expect(await suppressed(dep.lost)).toBe(1);
    expect(await suppressed(dep.gained)).toBe(2);
    expect(ms(dep.kept.activated_at)).toBeLessThan(t0 - 2000);
    expect(ms(dep.lost.activated_at)).toBeLessThan(t0 - 2000);
  });

  it('counts each change against its replaced version’s observed rate (min_observed PT1S), and the budgets’ suppressions once', async () => {
    const res = await roi(`?window=${windowSinceT0()}&min_observed=PT1S`);
    expect(res.status).toBe(200);
    const body = res.body;
    const from = ms(body.window.from);
    const to = ms(body.window.to);
    expect(to - from).toBe(Number(body.window.duration.slice(2, -1)) * 1000);
    expect(from).toBeLessThan(t0);
    expect(from).toBeGreaterThan(ms(dep.lost.activated_at));
    expect(body.min_observed).toBe('PT1S');

    // Each change: rate = replaced version's matches / its live days; expected = rate × days in effect in the window; saved = expected − matched.
    const expectChange = async (kind: string, ruleId: string, replaced: any, replacement: any | null, effectFrom: number, effectUntil: number) => {
      const c = change(body, kind, ruleId);
      expect(c).toBeDefined();
      expect(c.replaced.deployment_id).toBe(replaced.id);
      expect(c.replacement?.deployment_id ?? null).toBe(replacement?.id ?? null);
      const rate = (await matched(replaced)) / liveDays(replaced);
      const inWindow = days(Math.max(effectFrom, from), Math.min(effectUntil, to));
      const actual = replacement ? await matched(replacement) : 0;
      expect(c.counterfactual).toMatchObject({ basis: 'observed', observed_alerts: await matched(replaced), replay_id: null, reason: null });
      expect(c.counterfactual.alerts_per_day).toBeCloseTo(rate, 2);
      expect(c.days_in_window).toBeCloseTo(inWindow, 5);
      expect(c.actual_alerts).toBe(actual);
      expect(c.expected_alerts).toBeCloseTo(rate * inWindow, 3);
      expect(c.noise_saved).toBeCloseTo(rate * inWindow - actual, 3);
      return rate * inWindow - actual;
    };
    const r1 = await expectChange('new_version', R1, dep.r1v1, dep.r1v2, ms(dep.r1v2.activated_at), to);
    const r2 = await expectChange('new_version', R2, dep.r2v1, dep.r2v2, ms(dep.r2v2.activated_at), ms(dep.r2v2.ended_at));
    const back = await expectChange('rollback', R2, dep.r2v2, dep.r2v1b, ms(dep.r2v1b.activated_at), to);
    const removal = await expectChange('removal', LOST, dep.lost, null, ms(dep.lost.ended_at), to);
    expect(body.noise_saved.changes).toHaveLength(4);
    expect(body.noise_saved.unknown_changes).toBe(0);

    // Budget suppression: what each budget kept from analysts, counted once.
    const budgets = [dep.r2v2, dep.r2v1b, dep.lost, dep.gained];
    const kept = await Promise.all(budgets.map(suppressed));
    expect(new Map(body.noise_saved.budget_suppression.map((b: any) => [b.deployment_id, b.noise_saved]))).toEqual(new Map(budgets.map((d, i) => [d.id, kept[i]])));
    const budgetTotal = kept.reduce((s, n) => s + n, 0);
    expect(body.noise_saved.by_source.new_versions).toBeCloseTo(r1 + r2, 3);
    expect(body.noise_saved.by_source.rollbacks).toBeCloseTo(back, 3);
    expect(body.noise_saved.by_source.removals).toBeCloseTo(removal, 3);
    expect(body.noise_saved.by_source.budget_suppression).toBe(budgetTotal);
    expect(body.noise_saved.total).toBeCloseTo(r1 + r2 + back + removal + budgetTotal, 3);

    // Cost avoided per currency, from each target's cost model; never added across currencies.
    const localSaved = r1 + r2 + back + removal + kept[0]! + kept[1]! + kept[2]!;
    const euSaved = kept[3]!;
    const eur = body.cost_avoided.by_currency.find((c: any) => c.currency === 'EUR');
    const usd = body.cost_avoided.by_currency.find((c: any) => c.currency === 'USD');
    expect(body.cost_avoided.by_currency).toHaveLength(2);
    expect(usd.noise_saved).toBeCloseTo(localSaved, 3);
    expect(usd.triage_cost_avoided).toBeCloseTo(((localSaved * USD.triage_minutes_per_alert) / 60) * USD.cost_per_analyst_hour, 2);
    expect(eur.noise_saved).toBe(euSaved);
    expect(eur.triage_cost_avoided).toBeCloseTo(((euSaved * EUR.triage_minutes_per_alert) / 60) * EUR.cost_per_analyst_hour, 4);
    expect(eur.targets.map((t: any) => t.target)).toEqual(['eu']);
    for (const c of [usd, eur]) {
      expect(c.scan_cost_saved).toBeNull();
      expect(c.scan_cost_reason).toMatch(/not their bytes/);
      expect(c.total).toBeCloseTo(c.triage_cost_avoided, 4);
    }
  });

  it('uses the newest replay for a version live less than min_observed (P1D by default), and says why a change has no rate', async () => {
    const res = await roi(`?window=${windowSinceT0()}`);
    expect(res.status).toBe(200);
    const body = res.body;
    expect(body.min_observed).toBe('P1D');
    const to = ms(body.window.to);
    const r1 = change(body, 'new_version', R1);
    const rate = replay.result.alerts.total / days(ms(replay.result.window_processed.from), ms(replay.result.window_processed.to));
    const inWindow = days(ms(dep.r1v2.activated_at), to);
    const actual = await matched(dep.r1v2);
    expect(r1.counterfactual).toMatchObject({ basis: 'replayed', replay_id: replay.id, reason: null });
    expect(r1.counterfactual.alerts_per_day).toBeCloseTo(rate, 2);
    expect(r1.noise_saved).toBeCloseTo(rate * inWindow - actual, 3);
    // No replay of these versions: no rate, a reason, left out of the totals.
    for (const [kind, ruleId, version] of [
      ['new_version', R2, 1],
      ['rollback', R2, 2],
      ['removal', LOST, 1],
    ] as const) {
      const c = change(body, kind, ruleId);
      expect(c).toMatchObject({ expected_alerts: null, noise_saved: null, counterfactual: { basis: null, alerts_per_day: null } });
      expect(c.counterfactual.reason).toMatch(new RegExp(`less than the 1 day its observed rate needs, and no completed replay of v${version} on local exists`));
    }
    expect(body.noise_saved.unknown_changes).toBe(3);
    expect(body.noise_saved.reason).toMatch(/3 change\(s\) have no counterfactual rate/);
    expect(body.noise_saved.by_source).toMatchObject({ rollbacks: 0, removals: 0 });
    expect(body.noise_saved.by_source.new_versions).toBeCloseTo(rate * inWindow - actual, 3);
  });

  it('reports the techniques lost and gained in the window with the rules responsible', async () => {
    const body = (await roi(`?window=${windowSinceT0()}`)).body;
    // At the start: kept (T1059.001) and lost (T1003.001); now: kept and gained (T1566.001).
    expect(body.coverage).toEqual({
      techniques_at_start: 2,
      techniques_now: 2,
      gained: [{ technique: 'T1566.001', rules: [{ rule_id: GAINED, version: 1, deployment_id: dep.gained.id, target: 'eu' }] }],
      lost: [{ technique: 'T1003.001', rules: [{ rule_id: LOST, version: 1, deployment_id: dep.lost.id, target: 'local' }] }],
      reason: null,
    });
  });

  it('sees only the targets of the token’s environments', async () => {
    const devOnly = await createApiKey(svc, svc.token, { name: 'dev reader', permissions: ['rules:read'], environments: ['dev'] });
    const res = await roi(`?window=${windowSinceT0()}&min_observed=PT1S`, devOnly.token);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(dep.gained.id);
    expect(res.body.cost_avoided.by_currency.map((c: any) => c.currency)).toEqual(['USD']);
    expect(res.body.noise_saved.budget_suppression.map((b: any) => b.target)).not.toContain('eu');
    expect(res.body.coverage).toMatchObject({ techniques_at_start: 2, techniques_now: 1, gained: [], lost: [{ technique: 'T1003.001' }] });
  });

  it('never counts another tenant’s data, which its own report does', async () => {
    const mine = await roi('?min_observed=PT1S');
    expect(mine.text).not.toContain(otherDeployment);
    expect(mine.text).not.toContain(OTHER);
    const theirs = (await roi('', otherToken)).body;
    expect(theirs.noise_saved.budget_suppression).toEqual([expect.objectContaining({ deployment_id: otherDeployment, suppressed_alerts: 2, noise_saved: 2 })]);
    expect(theirs.noise_saved.changes).toEqual([]);
    expect(theirs.cost_avoided.by_currency).toEqual([expect.objectContaining({ currency: 'USD', noise_saved: 2, triage_cost_avoided: 60 })]);
    expect(JSON.stringify(theirs)).not.toContain(dep.gained.id);
    expect(theirs.coverage).toMatchObject({ techniques_now: 1, gained: [{ technique: 'T1190' }] });
  });

  it('answers a tenant with nothing with zeros, empty lists and the reasons', async () => {
    const res = await roi('', emptyToken);
    expect(res.status).toBe(200);
    const to = ms(res.body.window.to);
    expect(to - ms(res.body.window.from)).toBe(30 * DAY_MS);
    expect(res.body).toMatchObject({
      window: { duration: 'P30D' },
      noise_saved: {
        total: 0,
        by_source: { new_versions: 0, rollbacks: 0, removals: 0, budget_suppression: 0 },
        unknown_changes: 0,
        reason: expect.stringMatching(/no rule version was replaced/),
        changes: [],
        budget_suppression: [],
      },
      cost_avoided: { reason: expect.stringMatching(/no noise saved/), by_currency: [] },
      coverage: { techniques_at_start: 0, techniques_now: 0, gained: [], lost: [], reason: expect.stringMatching(/ATT&CK technique tag/) },
    });
  });

  it.each(['P0D', 'PT0S', 'P400D', 'P1M', '30', 'P30D;'])('refuses window=%s with 400 naming the field', async (window) => {
    const res = await roi(`?window=${encodeURIComponent(window)}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/query/window']);
  });

  it('refuses an unknown query parameter and a bad min_observed', async () => {
    expect((await roi('?limit=5')).status).toBe(400);
    expect((await roi('?min_observed=P0D')).body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/query/min_observed']);
  });
});
