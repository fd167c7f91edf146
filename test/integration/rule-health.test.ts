import http from 'node:http';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { and, desc, eq, isNotNull } from 'drizzle-orm';
import { detectionRuns, ruleHealthStates } from '../../db/schema';
import { workflowIds } from '../../workflows/contracts';
import { createApiKey, createTenant, startTestService, type TestService, until } from '../support/harness';

/**
 * GET /health/rules/{id} against a history built through the public API and real scheduled
 * detection (a Temporal Schedule per deployment, DetectionRun workflows, the local event store),
 * every figure worked out by hand below.
 *
 * The local targets detect once a day (P1D, the longest interval), so no run happens by itself
 * during the test: each run is the deployment's own Schedule, triggered by the test, which makes
 * the number of runs exact.
 *
 * Failed runs are the one thing written directly (as run-detection.ts's recordFailedRun writes
 * them): a detection run fails when its query fails on the target, and no version whose query
 * fails can go live through the API — the deploy first projects the version's alerts with the very
 * same query over the last days (a version with a regex RE2 refuses, say, fails its deploy), and
 * the local store has no failure that depends on the events' values (casts are TRY_CAST, patterns
 * are bound once per query). So the test records two failed runs of the live deployment, with the
 * error such a query gives.
 */

const RULE = 'c1000000-0000-4000-8000-000000000001';
const ONLY_HERE = 'c1000000-0000-4000-8000-000000000002';
const NEVER_DEPLOYED = 'c1000000-0000-4000-8000-000000000003';

function alphaRule(id: string, revision: number, filter: string): string {
  return [
    `title: Alpha tool (revision ${revision})`,
    `id: ${id}`,
    'status: test',
    'level: high',
    'logsource:',
    '  category: process_creation',
    '  product: windows',
    'detection:',
    '  selection:',
    "    Image|endswith: '\\alpha.exe'",
    '  filter:',
    `    ${filter}`,
    '  condition: selection and not filter',
    '',
  ].join('\n');
}
const GOOD = "CommandLine|contains: 'harmless'";
const ALSO_GOOD = "CommandLine|contains: 'innocuous'";
const QUERY_ERROR = 'local store query failed: Invalid Input Error: invalid repetition size: {100}';

const MINUTE = 60_000;

describe('GET /health/rules/{id}', () => {
  let svc: TestService;
  let receiver: http.Server;
  const received: Array<{ event: string; text: string; data: Record<string, any> }> = [];
  /** The API's clock runs `shift` ms ahead of the real one (the worker's does not). */
  let shift = 0;
  let other: string;
  const ingestedAt = Date.now();
  /** Event times: the newest is 1 minute before the test started. */
  const eventTime = (minutesAgo: number) => new Date(ingestedAt - minutesAgo * MINUTE).toISOString();
  let v1: string;
  let v2: string;
  let alertsV1: Array<{ id: string; status: string; created_at: string; event_time: string }>;

  const health = (id: string, query = '', token?: string) => svc.request('GET', `/api/v1/health/rules/${id}${query}`, token ? { token } : {});

  async function slowDetection(token: string) {
    const local = (await svc.request('GET', '/api/v1/settings/targets/local', { token })).body;
    const put = await svc.request('PUT', '/api/v1/settings/targets/local', {
      token,
      body: { name: local.name, kind: local.kind, environment: local.environment, connection: local.connection, cost_model: local.cost_model, detection_interval: 'P1D' },
    });
    expect(put.status).toBe(200);
  }
  async function deploy(token: string, rule: string, version: number, budget?: number) {
    expect((await svc.request('POST', '/api/v1/rules', { token, body: { rule } })).status).toBeLessThan(300);
    const res = await svc.request('POST', '/api/v1/rules/deploy', {
      token,
      body: { rule_id: RULE, target: 'local', approval_required: false, version, ...(budget !== undefined ? { noise_budget: { max_alerts_per_day: budget } } : {}) },
    });
    expect([res.status, res.text]).toEqual([202, expect.any(String)]);
    expect(await svc.client.workflow.getHandle(res.body.workflow_id).result()).toMatchObject({ status: 'active' });
    return res.body.id as string;
  }
  async function ingest(token: string, events: Array<Record<string, unknown>>) {
    const res = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      token,
      body: events.map((e) => JSON.stringify(e)).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(res.body.accepted).toBe(events.length);
  }
  let lastTrigger = 0;
  /** One run of the deployment's own Schedule; resolves once the run is recorded and its workflow (health check included) has ended. */
  async function runDetection(tenantId: string, deploymentId: string) {
    const runs = async () =>
      (
        await svc.database.db
          .select()
          .from(detectionRuns)
          .where(and(eq(detectionRuns.tenantId, tenantId), eq(detectionRuns.deploymentId, deploymentId)))
      ).length;
    const before = await runs();
    // A triggered action's workflow id carries its time to the second: one trigger per second.
    while (Math.floor(Date.now() / 1000) <= Math.floor(lastTrigger / 1000)) await new Promise((r) => setTimeout(r, 50));
    lastTrigger = Date.now();
    const schedule = svc.client.schedule.getHandle(workflowIds.detectionSchedule(tenantId, deploymentId));
    await schedule.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
    await until(`run ${before + 1} of ${deploymentId}`, async () => ((await runs()) > before ? true : undefined), 60);
    // Wait for that run's workflow itself (its health check included): the schedule's list of running
    // actions lags behind under load. The run records its activity key: workflow id / run id / activity id.
    const [newest] = await svc.database.db
      .select({ key: detectionRuns.activityKey })
      .from(detectionRuns)
      .where(and(eq(detectionRuns.tenantId, tenantId), eq(detectionRuns.deploymentId, deploymentId), isNotNull(detectionRuns.activityKey)))
      .orderBy(desc(detectionRuns.startedAt))
      .limit(1);
    const parts = newest!.key!.split('/');
    await svc.client.workflow.getHandle(parts.slice(0, -2).join('/'), parts.at(-2)).result();
  }
  const alertsOf = async (deploymentId: string, token?: string) =>
    (await svc.request('GET', `/api/v1/alerts?deployment_id=${deploymentId}&limit=500`, token ? { token } : {})).body.items as typeof alertsV1;

  beforeAll(async () => {
    svc = await startTestService({ now: () => new Date(Date.now() + shift), detectionSchedules: 'per-deployment' });
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const { port } = receiver.address() as { port: number };
    const hook = await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${port}/hook`, secret: 'a-webhook-secret-of-some-length' } });
    expect(hook.status).toBe(200);
    other = await createTenant(svc, 'other-tenant');
    await slowDetection(svc.token);
    await slowDetection(other);

    // v1: budget 5/day. 7 alpha events match (2 of them without a CommandLine: `not filter` keeps
    // them), 2 beta events of the same logsource do not. 7 of the 9 events carry CommandLine.
    v1 = await deploy(svc.token, alphaRule(RULE, 1, GOOD), 1, 5);
    const alpha = [1, 2, 3, 4, 5, 6, 7].map((k) => ({
      '@timestamp': eventTime(k),
      Image: 'C:\\Tools\\alpha.exe',
      ...(k <= 5 ? { CommandLine: `alpha.exe --run ${k}` } : {}),
    }));
    const beta = [8, 9].map((k) => ({ '@timestamp': eventTime(k), Image: 'C:\\Tools\\beta.exe', CommandLine: `beta.exe ${k}` }));
    await ingest(svc.token, [...alpha, ...beta]);
    await runDetection('default', v1); // 7 matches: 5 open, 2 suppressed
    await runDetection('default', v1); // nothing new
    alertsV1 = await alertsOf(v1);
    expect(alertsV1).toHaveLength(7);
    const open = alertsV1.filter((a) => a.status === 'open');
    expect(open).toHaveLength(5);
    // Dispositions: 3 true positives, 1 false positive, 1 benign; the 2 suppressed alerts keep none.
    const verdicts = ['true_positive', 'true_positive', 'true_positive', 'false_positive', 'benign'];
    for (const [i, a] of open.entries()) {
      expect((await svc.request('PATCH', `/api/v1/alerts/${a.id}`, { body: { disposition: verdicts[i] } })).status).toBe(200);
    }

    // v2 replaces v1, without a budget; it runs once, two of its runs fail (see above), it runs again.
    v2 = await deploy(svc.token, alphaRule(RULE, 2, ALSO_GOOD), 2);
    await runDetection('default', v2);
    for (const minutesAgo of [0.5, 0.25]) {
      await svc.database.db.insert(detectionRuns).values({
        tenantId: 'default',
        deploymentId: v2,
        ruleId: RULE,
        startedAt: new Date(Date.now() - minutesAgo * MINUTE),
        durationMs: 3,
        eventsScanned: 0,
        matches: 0,
        alertsRaised: 0,
        alertsSuppressed: 0,
        mode: 'alert',
        cursorFrom: 0,
        cursorTo: 0,
        error: QUERY_ERROR,
      });
    }
    await runDetection('default', v2);

    // Another tenant has a rule with the same id, alerts and runs of its own: none of it counts for the default tenant.
    const theirs = await deploy(other, alphaRule(RULE, 1, GOOD), 1, 100);
    await ingest(
      other,
      [1, 2, 3].map((k) => ({ '@timestamp': eventTime(k), Image: 'C:\\Tools\\alpha.exe' })),
    );
    await runDetection('other-tenant', theirs);
    for (const a of await alertsOf(theirs, other)) {
      expect((await svc.request('PATCH', `/api/v1/alerts/${a.id}`, { token: other, body: { disposition: 'false_positive' } })).status).toBe(200);
    }
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: alphaRule(ONLY_HERE, 1, GOOD) } })).status).toBe(201);
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: alphaRule(NEVER_DEPLOYED, 1, GOOD) } })).status).toBe(201);
    // The notifications of those runs are delivered before any test moves the service's clock: a
    // delivery retried while the clock is a day ahead would be scheduled a day late.
    await until('three rule.health_degraded notifications', async () => (received.filter((b) => b.event === 'rule.health_degraded').length >= 3 ? true : undefined), 60).catch(
      async (err: Error) => {
        const states = await svc.database.db.select().from(ruleHealthStates);
        throw new Error(`${err.message}; received ${JSON.stringify(received.map((r) => [r.event, r.data.deployment_id, r.data.status]))}; states ${JSON.stringify(states)}`);
      },
    );
  }, 180_000);
  afterAll(async () => {
    await svc.close();
    await new Promise((r) => receiver.close(r));
  });

  /** Nearest-rank percentile: the smallest value with at least `p` of the values at or below it. */
  const nearestRank = (sorted: number[], p: number) => sorted[Math.ceil(p * sorted.length) - 1];

  it('reports every figure of the window as worked out by hand', async () => {
    const res = await health(RULE);
    expect(res.status).toBe(200);
    const h = res.body;
    const today = new Date().toISOString().slice(0, 10);
    expect(h).toMatchObject({ rule_id: RULE, title: 'Alpha tool (revision 2)', target: null, window: { duration: 'P30D' } });
    expect(new Date(h.window.to).getTime() - new Date(h.window.from).getTime()).toBe(30 * 86_400_000);

    // SNR: 3 TP / (1 FP + 1 benign) = 1.5; precision 3 / 5; the 2 suppressed alerts have no disposition.
    expect(h.snr).toEqual({ ratio: 1.5, precision: 0.6, true_positives: 3, false_positives: 1, benign: 1, duplicates: 0, undispositioned: 2, reason: null });

    // Latency of the 7 alerts: alert time (created_at) − event time.
    const latencies = alertsV1.map((a) => new Date(a.created_at).getTime() - new Date(a.event_time).getTime()).sort((a, b) => a - b);
    expect(latencies[0]).toBeGreaterThanOrEqual(MINUTE); // the newest event is a minute old
    expect(h.latency).toEqual({ alerts: 7, p50_ms: nearestRank(latencies, 0.5), p95_ms: nearestRank(latencies, 0.95), max_ms: latencies[6], reason: null });
    expect(h.latency.p50_ms).toBe(latencies[3]); // ceil(0.5 × 7) = 4th
    expect(h.latency.p95_ms).toBe(latencies[6]); // ceil(0.95 × 7) = 7th

    // Error rate: v1 ran twice, v2 four times of which two failed: 2 / 6 = 1/3, at or above the 0.25 default → failing.
    expect(h.error_rate).toMatchObject({ rate: 2 / 6, runs: 6, failed_runs: 2, status: 'failing', reason: '2 of 6 detection runs failed (33.3%, failing at 25%)' });
    expect(h.error_rate.last_error).toEqual({ deployment_id: v2, message: QUERY_ERROR, at: expect.any(String) });

    // Noise budget: v1 raised 7 today against 5/day (2 suppressed): one day over budget; v2 (no budget) raised none.
    expect(h.noise_budget).toEqual({
      alerts_today: 7,
      alerts: 7,
      alerts_per_day: 7 / 30,
      suppressed: 2,
      days_over_budget: 1,
      per_day: [{ day: today, alerts: 7, suppressed: 2, over_budget: true }],
      deployments: [
        { deployment_id: v1, target: 'local', version: 1, max_alerts_per_day: 5, alerts_today: 7, consumption_today: 1.4, alerts: 7, suppressed: 2, days_over_budget: 1 },
        { deployment_id: v2, target: 'local', version: 2, max_alerts_per_day: null, alerts_today: 0, consumption_today: null, alerts: 0, suppressed: 0, days_over_budget: 0 },
      ],
    });

    // Data quality of v2 (the live version) on local: 9 events of its logsource in the last 24 h;
    // Image on all 9 (ok), CommandLine on 7 (7/9 ≈ 0.78: under 0.95, not under 0.5 → degraded).
    const ls = '`product: windows, category: process_creation`';
    expect(h.data_quality).toEqual({
      status: 'degraded',
      reason: `only 7 of 9 events of ${ls} in the last 24 h carry \`CommandLine\` (77.8%)`,
      freshness_hours: 24,
      logsources: [
        {
          target: 'local',
          logsource: { product: 'windows', category: 'process_creation' },
          events: 9,
          newest_event_time: eventTime(1),
          status: 'degraded',
          reason: `only 7 of 9 events of ${ls} in the last 24 h carry \`CommandLine\` (77.8%)`,
          fields: [
            {
              field: 'CommandLine',
              events_with_field: 7,
              share: 7 / 9,
              status: 'degraded',
              reason: `only 7 of 9 events of ${ls} in the last 24 h carry \`CommandLine\` (77.8%)`,
            },
            { field: 'Image', events_with_field: 9, share: 1, status: 'ok', reason: null },
          ],
        },
      ],
    });

    // Overall: the worst of error rate (failing) and data quality (degraded).
    expect(h.status).toBe('failing');
    expect(h.reasons).toEqual(['2 of 6 detection runs failed (33.3%, failing at 25%)', `only 7 of 9 events of ${ls} in the last 24 h carry \`CommandLine\` (77.8%)`]);

    // Trend: the 30 days before had nothing.
    expect(h.trend).toMatchObject({
      alerts: { current: 7, previous: 0, change: 7 },
      snr: { current: 1.5, previous: null, change: null },
      precision: { current: 0.6, previous: null, change: null },
      error_rate: { current: 2 / 6, previous: null, change: null },
      latency_p95_ms: { current: latencies[6], previous: null, change: null },
    });
    expect(h.trend.previous_window.to).toBe(h.window.from);

    // The live deployment: v2 on local.
    expect(h.deployments).toEqual([{ id: v2, version: 2, target: 'local', status: 'active', activated_at: expect.any(String), max_alerts_per_day: null }]);

    // Forecast accuracy of both versions live in the window, newest first: each keeps its change's projection
    // (deployed without approval), observed over its runs — v1: 5 raised + 2 suppressed in 2 runs; v2: none in 4.
    expect(h.forecasts.map((f: any) => [f.deployment_id, f.version, f.observation?.alerts, f.observation?.detection_runs])).toEqual([
      [v2, 2, 0, 4],
      [v1, 1, 7, 2],
    ]);
    for (const f of h.forecasts) expect(f.projection).toMatchObject({ approval_id: null, alerts_per_day: expect.any(Number) });

    // Naming the target gives the same figures.
    const named = await health(RULE, '?target=local');
    expect(named.body).toMatchObject({ target: 'local', snr: h.snr, error_rate: h.error_rate, noise_budget: h.noise_budget });
  });

  it('compares with the window before: two hours later, everything lies in the previous window', async () => {
    shift = 2 * 60 * MINUTE;
    try {
      const h = (await health(RULE, '?window=PT2H')).body;
      expect(h.trend).toMatchObject({
        alerts: { current: 0, previous: 7, change: -7 },
        snr: { current: null, previous: 1.5, change: null },
        error_rate: { current: null, previous: 2 / 6 },
      });
      expect(h.snr).toMatchObject({ ratio: null, precision: null, reason: 'no alert of the window has a true_positive, false_positive or benign disposition' });
      expect(h.latency).toEqual({ alerts: 0, p50_ms: null, p95_ms: null, max_ms: null, reason: 'no alert in the window' });
      expect(h.error_rate).toMatchObject({ rate: null, runs: 0, status: 'no_data', reason: 'no detection run in the window' });
      expect(h.noise_budget).toMatchObject({ alerts_today: 0, alerts: 0, alerts_per_day: 0, suppressed: 0, days_over_budget: 0, per_day: [] });
      // v2 is still live in the window: graded by its data alone.
      expect(h.status).toBe('degraded');
    } finally {
      shift = 0;
    }
  });

  it('fails data quality when no event of the logsource is recent', async () => {
    shift = 25 * 60 * MINUTE;
    try {
      const h = (await health(RULE)).body;
      const reason = `no event in the last 24 h carries \`product: windows, category: process_creation\` on target local (newest event ${eventTime(1)})`;
      expect(h.data_quality).toMatchObject({ status: 'failing', reason });
      expect(h.data_quality.logsources[0]).toMatchObject({ events: 0, newest_event_time: eventTime(1), status: 'failing' });
      expect(h.data_quality.logsources[0].fields.map((f: any) => f.share)).toEqual([null, null]);
    } finally {
      shift = 0;
    }
  });

  it('grades by the tenant’s own thresholds', async () => {
    expect((await svc.request('GET', '/api/v1/settings/health')).body).toEqual({
      thresholds: { field_share_ok: 0.95, field_share_failing: 0.5, freshness_hours: 24, error_rate_degraded: 0.05, error_rate_failing: 0.25 },
      updated_at: null,
    });
    const bad = await svc.request('PUT', '/api/v1/settings/health', { body: { field_share_failing: 0.99 } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: any) => e.pointer)).toEqual(['/body/field_share_failing']);
    expect((await svc.request('PUT', '/api/v1/settings/health', { body: { field_share_ok: 0.75, error_rate_failing: 0.6 } })).status).toBe(200);
    try {
      const h = (await health(RULE)).body;
      expect(h.data_quality.status).toBe('ok'); // 7/9 ≥ 0.75
      expect(h.error_rate).toMatchObject({ status: 'degraded', reason: '2 of 6 detection runs failed (33.3%, degraded at 5%)' });
      expect(h.status).toBe('degraded');
      expect(h.reasons).toEqual(['2 of 6 detection runs failed (33.3%, degraded at 5%)']);
    } finally {
      expect((await svc.request('PUT', '/api/v1/settings/health', { body: {} })).status).toBe(200);
    }
    // Settings span every environment: a token limited to some may not read them.
    const devOnly = await createApiKey(svc, svc.token, { name: 'dev admin', permissions: ['admin'], environments: ['dev'] });
    expect((await svc.request('GET', '/api/v1/settings/health', { token: devOnly.token })).status).toBe(403);
  });

  it('counts only the tenant’s own data; another tenant’s rule is not found', async () => {
    const theirs = (await health(RULE, '', other)).body;
    expect(theirs.snr).toMatchObject({ true_positives: 0, false_positives: 3, benign: 0, ratio: 0, precision: 0 });
    expect(theirs.error_rate).toMatchObject({ runs: 1, failed_runs: 0, rate: 0, status: 'ok' });
    expect(theirs.noise_budget).toMatchObject({ alerts: 3, suppressed: 0 });
    expect(theirs.data_quality.logsources[0]).toMatchObject({ events: 3 });
    const foreign = await health(ONLY_HERE, '', other);
    expect(foreign.status).toBe(404);
    expect(foreign.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // …and the default tenant's figures are as before (checked in full above).
    expect((await health(RULE)).body.snr).toMatchObject({ true_positives: 3, false_positives: 1 });
  });

  it('counts only targets within the token’s environments', async () => {
    const prodOnly = await createApiKey(svc, svc.token, { name: 'prod reader', permissions: ['rules:read'], environments: ['prod'] });
    const h = (await health(RULE, '', prodOnly.token)).body;
    expect(h).toMatchObject({ status: 'no_data', deployments: [], forecasts: [], noise_budget: { alerts: 0 }, error_rate: { runs: 0 }, snr: { true_positives: 0 } });
    const outside = await health(RULE, '?target=local', prodOnly.token);
    expect(outside.status).toBe(404);
    expect(outside.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('answers a rule without data with explicit nulls and the reason', async () => {
    const res = await health(NEVER_DEPLOYED);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'no_data',
      reasons: [`rule '${NEVER_DEPLOYED}' has no deployment in the window`],
      snr: { ratio: null, precision: null, true_positives: 0 },
      latency: { alerts: 0, p50_ms: null, p95_ms: null, max_ms: null },
      error_rate: { rate: null, runs: 0, failed_runs: 0, last_error: null, status: 'no_data' },
      noise_budget: { alerts_today: 0, alerts_per_day: 0, days_over_budget: 0, deployments: [] },
      data_quality: { status: 'no_data', logsources: [] },
      trend: { alerts: { current: 0, previous: 0, change: 0 }, snr: { current: null, previous: null, change: null } },
      deployments: [],
      forecasts: [],
    });
    expect(res.text).not.toMatch(/NaN|Infinity/);
  });

  it('notifies rule.health_degraded when a deployment’s grade gets worse, not on every run', async () => {
    const ls = '`product: windows, category: process_creation`';
    const quality = `only 7 of 9 events of ${ls} in the last 24 h carry \`CommandLine\` (77.8%)`;
    // v1's first run found CommandLine on 7 of 9 events (ok → degraded); its second run, the same: nothing.
    // v2's first run: a new deployment, degraded data again. Its last run: 2 of its 4 runs failed (ok → failing).
    const degraded = await until(
      'three rule.health_degraded notifications',
      async () => {
        const found = received.filter((b) => b.event === 'rule.health_degraded');
        return found.length >= 3 ? found : undefined;
      },
      60,
    );
    expect(degraded.map((b) => [b.data.deployment_id, b.data.status, b.data.reasons])).toEqual([
      [v1, 'degraded', [quality]],
      [v2, 'degraded', [quality]],
      [v2, 'failing', ['2 of 4 detection runs failed (50%, failing at 25%)']],
    ]);
    expect(degraded[2]!.data).toMatchObject({
      rule_id: RULE,
      version: 2,
      target: 'local',
      error_rate: { status: 'failing', rate: 0.5, runs: 4, failed_runs: 2, last_error: QUERY_ERROR },
      data_quality: { status: 'degraded', reason: quality },
      window_hours: 24,
    });
    expect(degraded[2]!.text).toBe(`:warning: Health of rule \`${RULE}\` v2 on *local* is *failing*: 2 of 4 detection runs failed (50%, failing at 25%)`);
    // Another run with nothing new: the grades stay as they are, nothing is sent.
    await runDetection('default', v2);
    await new Promise((r) => setTimeout(r, 1500));
    expect(received.filter((b) => b.event === 'rule.health_degraded')).toHaveLength(3);
  });

  it('refuses an unknown rule, an unknown target and a bad window', async () => {
    const unknown = await health('c1000000-0000-4000-8000-0000000000ff');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await health(RULE, '?target=nowhere')).status).toBe(404);
    for (const window of ['P1X', 'PT1M', 'P400D', '30']) {
      const bad = await health(RULE, `?window=${window}`);
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: any) => e.pointer)).toEqual(['/query/window']);
    }
  });
});
