import { randomUUID } from 'node:crypto';
import { and, count, eq, sql } from 'drizzle-orm';
import { alerts, approvals, deployments, detectionRuns } from '../../db/schema';
import { deploymentForecasts, forecastAccuracyDistribution, summarizeForecasts } from '../../domain/health/forecast-accuracy';
import { poissonInterval } from '../../lib/poisson-interval';
import { createCiKey, createReviewerKey, createTenant, detectEverySecond, imageRule, startTestService, type TestService, until, readerActor } from '../support/harness';

/**
 * Forecast accuracy from a real history: a change deployed with approval (its impact summary
 * projects alerts/day from the events already stored), real scheduled detection on events ingested
 * after it went live, and a second rule deployed without approval (its projection is recorded on the
 * deployment all the same: no matching event in the lookback, so 0 alerts/day).
 */

const PROJECTED_RULE = 'fc000000-0000-4000-8000-000000000001';
const UNPROJECTED_RULE = 'fc000000-0000-4000-8000-000000000002';
const BEFORE = 14; // matching events stored before the change: the projection's sample
const AFTER = 5; // matching events ingested once it is live: what detection observes
const DAY_S = 86_400;

let seq = 0;
const event = (image: string) => JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} ${++seq}` });

describe('forecast accuracy (domain/health/forecast-accuracy.ts)', () => {
  let svc: TestService;
  let deploymentId: string;
  let unprojectedId: string;
  let approvalId: string;

  const ingest = async (image: string, n: number) => {
    const res = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: Array.from({ length: n }, () => event(image)).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(res.body.accepted).toBe(n);
  };
  const waitActive = (id: string) =>
    until(`deployment ${id} active`, async () => ((await svc.request('GET', `/api/v1/deployments/${id}`)).body.status === 'active' ? true : undefined));
  const alertCount = async (id: string) => {
    const [{ n }] = (await svc.database.db.select({ n: count() }).from(alerts).where(eq(alerts.deploymentId, id))) as [{ n: number }];
    return Number(n);
  };
  const runCount = async (id: string) => {
    const [{ n }] = (await svc.database.db.select({ n: count() }).from(detectionRuns).where(eq(detectionRuns.deploymentId, id))) as [{ n: number }];
    return Number(n);
  };

  beforeAll(async () => {
    svc = await startTestService();
    await detectEverySecond(svc);
    const ci = await createCiKey(svc);
    const reviewer = await createReviewerKey(svc);
    for (const [id, image] of [
      [PROJECTED_RULE, 'forecast.exe'],
      [UNPROJECTED_RULE, 'unforecast.exe'],
    ])
      expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(id!, image!) } })).status).toBe(201);
    await ingest('forecast.exe', BEFORE);
    await ingest('benign.exe', 6);

    const res = await svc.request('POST', '/api/v1/rules/deploy', { token: ci.token, body: { rule_id: PROJECTED_RULE, target: 'local', approval_required: true } });
    expect(res.status).toBe(202);
    deploymentId = res.body.id;
    approvalId = res.body.links.approval.split('/').at(-1);
    await until('the impact summary', async () => (await svc.request('GET', `/api/v1/approvals/${approvalId}`)).body.impact ?? undefined);
    expect((await svc.request('POST', `/api/v1/approvals/${approvalId}/decision`, { token: reviewer.token, body: { decision: 'approve' } })).status).toBe(200);
    await waitActive(deploymentId);

    const plain = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: UNPROJECTED_RULE, target: 'local', approval_required: false } });
    expect(plain.status).toBe(202);
    unprojectedId = plain.body.id;
    await waitActive(unprojectedId);

    // Live now: these are what scheduled detection raises.
    await ingest('forecast.exe', AFTER);
    await ingest('benign.exe', 3);
    await until('the alerts of the live deployment', async () => ((await alertCount(deploymentId)) === AFTER ? true : undefined));
    await until('a detection run of the unprojected deployment', async () => ((await runCount(unprojectedId)) > 0 ? true : undefined));
  });
  afterAll(() => svc.close());

  /** The figures worked out by hand from the recorded data, at `now`. */
  const byHand = async (now: Date) => {
    const [d] = await svc.database.db.select().from(deployments).where(eq(deployments.id, deploymentId));
    const projected = BEFORE / 7; // the impact summary replays the last 7 days: 14 matches / 7
    const projectedCi = { low: poissonInterval(BEFORE).low / 7, high: poissonInterval(BEFORE).high / 7 };
    const observedAlerts = await alertCount(deploymentId);
    const liveSeconds = (now.getTime() - d!.activatedAt!.getTime()) / 1000;
    const observed = (observedAlerts * DAY_S) / liveSeconds;
    return { d: d!, projected, projectedCi, observedAlerts, liveSeconds, observed, ratio: observed / projected };
  };

  it("compares each deployment's projected alerts/day with what detection observed since it went live", async () => {
    const now = new Date();
    const runsBefore = await runCount(deploymentId);
    const forecasts = await deploymentForecasts({ database: svc.database, now: () => now }, readerActor('default'), { ruleId: PROJECTED_RULE });
    const runsAfter = await runCount(deploymentId);
    const h = await byHand(now);
    expect(h.observedAlerts).toBe(AFTER);
    expect(forecasts).toHaveLength(1);
    const f = forecasts[0]!;
    expect(f).toMatchObject({ deployment_id: deploymentId, rule_id: PROJECTED_RULE, version: 1, target: 'local', status: 'active', ended_at: null });
    expect(f.activated_at).toBe(h.d.activatedAt!.toISOString());
    expect(f.projection!.approval_id).toBe(approvalId);
    expect(f.projection!.alerts_per_day).toBeCloseTo(h.projected, 4);
    expect(f.projection!.ci95!.low).toBeCloseTo(h.projectedCi.low, 4);
    expect(f.projection!.ci95!.high).toBeCloseTo(h.projectedCi.high, 4);
    // The projection itself was thin (14 events, a 7-day window with events on one day) and said so.
    expect(f.projection!.low_confidence).toBe(true);
    const o = f.observation!;
    expect(o.alerts).toBe(AFTER);
    expect(o.live_seconds).toBeCloseTo(h.liveSeconds, 3);
    expect(o.detection_runs).toBeGreaterThanOrEqual(runsBefore);
    expect(o.detection_runs).toBeLessThanOrEqual(runsAfter);
    expect(o.alerts_per_day).toBeCloseTo(h.observed, 3);
    expect(o.ci95.low).toBeCloseTo((poissonInterval(AFTER).low * DAY_S) / h.liveSeconds, 3);
    expect(o.ci95.high).toBeCloseTo((poissonInterval(AFTER).high * DAY_S) / h.liveSeconds, 3);
    expect(o.short_observation).toBe(true);
    expect(f.error_ratio! / h.ratio).toBeCloseTo(1, 3);
    expect(f.log_error!).toBeCloseTo(Math.log(h.ratio), 3);
    expect(f.within_interval).toBe(h.observed >= h.projectedCi.low && h.observed <= h.projectedCi.high);
    expect(f.reasons).toContainEqual(expect.stringMatching(/^short observation: live [\d.]+ h, under 1 day/));
    expect(f.reasons).toContainEqual(expect.stringMatching(/flagged low_confidence/));

    // The same with the target named; none on a target it is not on.
    expect(
      (await deploymentForecasts({ database: svc.database, now: () => now }, readerActor('default'), { ruleId: PROJECTED_RULE, target: 'local' })).map((x) => x.deployment_id),
    ).toEqual([deploymentId]);
    expect(await deploymentForecasts({ database: svc.database, now: () => now }, readerActor('default'), { ruleId: PROJECTED_RULE, target: 'elsewhere' })).toEqual([]);
  });

  it('a deployment without approval keeps the projection its change computed', async () => {
    const [f] = await deploymentForecasts({ database: svc.database }, readerActor('default'), { ruleId: UNPROJECTED_RULE });
    expect(f!.deployment_id).toBe(unprojectedId);
    // No `unforecast.exe` event in the 7-day lookback: 0 alerts/day, the upper bound 3.69 / 7.
    expect(f!.projection).toMatchObject({ approval_id: null, alerts_per_day: 0, low_confidence: true });
    expect(f!.projection!.ci95!.low).toBe(0);
    expect(f!.projection!.ci95!.high).toBeCloseTo(poissonInterval(0).high / 7, 4);
    expect(f!.observation!.alerts).toBe(0);
    expect(await alertCount(unprojectedId)).toBe(0);
    expect(f!.error_ratio).toBeNull();
    expect(f!.log_error).toBeNull();
    expect(f!.within_interval).toBe(true);
    expect(f!.reasons).toContainEqual('no error ratio: it projected and observed 0 alerts/day');
  });

  it('a deployment with no recorded projection (made before they were kept) says why', async () => {
    const [row] = await svc.database.db.select({ projection: deployments.projection }).from(deployments).where(eq(deployments.id, unprojectedId));
    await svc.database.db.update(deployments).set({ projection: null }).where(eq(deployments.id, unprojectedId));
    try {
      const [f] = await deploymentForecasts({ database: svc.database }, readerActor('default'), { ruleId: UNPROJECTED_RULE });
      expect(f!.projection).toBeNull();
      expect(f!.within_interval).toBeNull();
      expect(f!.reasons[0]).toMatch(/^no projection: no impact summary was recorded for it/);
    } finally {
      await svc.database.db.update(deployments).set({ projection: row!.projection }).where(eq(deployments.id, unprojectedId));
    }
  });

  it("counts only the actor's tenant and environments", async () => {
    await createTenant(svc, 'forecast-other');
    expect(await deploymentForecasts({ database: svc.database }, readerActor('forecast-other'), { ruleId: PROJECTED_RULE })).toEqual([]);
    const [local] = await deploymentForecasts({ database: svc.database }, readerActor('default'), { ruleId: PROJECTED_RULE });
    expect(await deploymentForecasts({ database: svc.database }, readerActor('default', ['not-' + local!.environment]), { ruleId: PROJECTED_RULE })).toEqual([]);
    expect(await deploymentForecasts({ database: svc.database }, readerActor('default', [local!.environment]), { ruleId: PROJECTED_RULE })).toHaveLength(1);
    const other = await forecastAccuracyDistribution({ database: svc.database }, readerActor('forecast-other'), { from: new Date(Date.now() - DAY_S * 1000), to: new Date() });
    expect(other).toMatchObject({ deployments: 0, compared: 0, abs_log_error: { count: 0, median: null, p90: null }, within_interval: { share: null } });
    expect(other.reasons).toEqual(['no deployment was live in the window']);
  });

  it('the distribution over the window leaves out what it cannot compare, and says how many', async () => {
    const now = new Date();
    const deps = { database: svc.database, now: () => now };
    const window = { from: new Date(now.getTime() - DAY_S * 1000), to: now };
    const h = await byHand(now);

    // By default a deployment live less than a day is not compared: both are.
    const strict = await forecastAccuracyDistribution(deps, readerActor('default'), window);
    expect(strict).toMatchObject({
      deployments: 2,
      compared: 0,
      min_observed_days: 1,
      excluded: { no_projection: 0, no_observation: 0, short_observation: 2 },
      abs_log_error: { count: 0, median: null, p90: null },
      error_ratio: { count: 0, median: null },
      within_interval: { count: 0, within: 0, share: null },
    });
    expect(strict.reasons).toEqual([expect.stringMatching(/0 without projection, 0 without observation, 2 observed too briefly/)]);
    expect(strict.histogram.reduce((s, b) => s + b.count, 0)).toBe(0);

    // Asked to include short observations, both are compared; only the projected one has a ratio (the other projected 0 and saw 0).
    const loose = await forecastAccuracyDistribution(deps, readerActor('default'), { ...window, minObservedDays: 0 });
    expect(loose).toMatchObject({ deployments: 2, compared: 2, excluded: { no_projection: 0, no_observation: 0, short_observation: 0 }, reasons: [] });
    expect(loose.abs_log_error.count).toBe(1);
    expect(loose.abs_log_error.median!).toBeCloseTo(Math.abs(Math.log(h.ratio)), 3);
    expect(loose.abs_log_error.p90!).toBeCloseTo(Math.abs(Math.log(h.ratio)), 3);
    expect(loose.error_ratio.median! / h.ratio).toBeCloseTo(1, 3);
    const inside = h.observed >= h.projectedCi.low && h.observed <= h.projectedCi.high;
    // The 0-projected one observed 0, inside its interval [0, 3.69 / 7].
    expect(loose.within_interval).toEqual({ count: 2, within: (inside ? 1 : 0) + 1, share: ((inside ? 1 : 0) + 1) / 2 });
    const bucket = loose.histogram.find((b) => b.from !== null && h.ratio >= b.from && (b.to === null || h.ratio < b.to))!;
    expect(bucket.count).toBe(1);
    expect(loose.histogram.find((b) => b.label === 'projected 0, observed 0')!.count).toBe(1);
    expect(loose.histogram.reduce((s, b) => s + b.count, 0)).toBe(2);

    // A window that ends before either went live has none.
    const before = await forecastAccuracyDistribution(deps, readerActor('default'), { from: new Date(h.d.activatedAt!.getTime() - 3 * DAY_S * 1000), to: h.d.createdAt });
    expect(before.deployments).toBe(0);
  });

  it('counts deployments that ended too soon to compare without reading them, classified as each forecast is', async () => {
    const read = async (id: string) => (await svc.database.db.select().from(deployments).where(eq(deployments.id, id)))[0]!;
    const projected = await read(deploymentId);
    const unprojected = await read(unprojectedId);
    // A deployment superseded a minute after going live, before any run (a copy of the unprojected one: runs there never reach it).
    const neverRan = { ...unprojected, id: randomUUID(), workflowId: `forecast-never-ran-${randomUUID()}`, status: 'superseded' as const };
    const endAfter = (d: typeof projected, seconds: number) =>
      svc.database.db
        .update(deployments)
        .set({ endedAt: new Date(d.activatedAt!.getTime() + seconds * 1000) })
        .where(eq(deployments.id, d.id));
    // Each case ends the deployments within a day of going live; what compareForecast says of each one read in full is the oracle.
    const cases: Array<{ name: string; arrange: () => Promise<unknown>; expected: { no_projection: number; no_observation: number; short_observation: number } }> = [
      {
        name: 'both observed an hour',
        arrange: () => Promise.all([endAfter(projected, 3600), endAfter(unprojected, 3600)]),
        expected: { no_projection: 0, no_observation: 0, short_observation: 2 },
      },
      {
        name: 'one live no time, one with no projection',
        arrange: () => Promise.all([endAfter(projected, 0), svc.database.db.update(deployments).set({ projection: null }).where(eq(deployments.id, unprojectedId))]),
        expected: { no_projection: 1, no_observation: 1, short_observation: 0 },
      },
      {
        name: 'and one with no run',
        arrange: async () => {
          await svc.database.db.update(deployments).set({ projection: unprojected.projection }).where(eq(deployments.id, unprojectedId));
          await svc.database.db.insert(deployments).values({ ...neverRan, endedAt: new Date(unprojected.activatedAt!.getTime() + 60_000) });
        },
        expected: { no_projection: 0, no_observation: 2, short_observation: 1 },
      },
    ];
    try {
      for (const c of cases) {
        await c.arrange();
        const now = new Date();
        const window = { from: new Date(now.getTime() - DAY_S * 1000), to: new Date(now.getTime() + DAY_S * 1000) };
        const distribution = await forecastAccuracyDistribution({ database: svc.database, now: () => now }, readerActor('default'), window);
        const readInFull = (
          await Promise.all(
            [PROJECTED_RULE, UNPROJECTED_RULE].map((ruleId) => deploymentForecasts({ database: svc.database, now: () => now }, readerActor('default'), { ruleId })),
          )
        ).flat();
        const oracle = summarizeForecasts(readInFull, window);
        expect({ case: c.name, excluded: oracle.excluded }).toEqual({ case: c.name, excluded: c.expected });
        expect({ case: c.name, ...distribution }).toEqual({ case: c.name, ...oracle });
      }
    } finally {
      await svc.database.db.delete(deployments).where(eq(deployments.id, neverRan.id));
      for (const d of [projected, unprojected]) await svc.database.db.update(deployments).set({ endedAt: null, projection: d.projection }).where(eq(deployments.id, d.id));
    }
  });

  it('an impact summary recorded before projections carried an interval compares its rate, and has no interval to check', async () => {
    // Recorded before deployments kept their projection, too: the approval's impact is all there is.
    await svc.database.db.update(deployments).set({ projection: null }).where(eq(deployments.id, deploymentId));
    await svc.database.db
      .update(approvals)
      .set({ impact: sql`${approvals.impact} #- '{targets,0,alerts_per_day}'` })
      .where(and(eq(approvals.id, approvalId), eq(approvals.tenantId, 'default')));
    const now = new Date();
    const [f] = await deploymentForecasts({ database: svc.database, now: () => now }, readerActor('default'), { ruleId: PROJECTED_RULE });
    const h = await byHand(now);
    // The rate it published (2 decimals) is what it is compared against.
    expect(f!.projection!.alerts_per_day).toBe(Math.round(h.projected * 100) / 100);
    expect(f!.projection!.ci95).toBeNull();
    expect(f!.within_interval).toBeNull();
    expect(f!.error_ratio).not.toBeNull();
    expect(f!.reasons).toContainEqual(expect.stringMatching(/no projected interval/));
  });
});
