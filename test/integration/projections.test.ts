import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { replays, targets } from '../../db/schema';
import { poissonInterval } from '../../lib/poisson-interval';
import { createCiKey, createReviewerKey, processRule, startTestService, type TestService, until, setLocalCostModel } from '../support/harness';

const RULE_ID = '9f0e0000-0000-4000-8000-00000000a11e';
const ruleText = processRule(RULE_ID, { title: 'Projected tool', image: '\\projected.exe' });
const COST_MODEL = { currency: 'EUR', price_per_gb_scanned: 1000, triage_minutes_per_alert: 10, cost_per_analyst_hour: 60 };

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
// Five days ago at UTC midnight: in the past, and inside the impact summary's 7-day lookback.
const BASE = Math.floor(Date.now() / DAY) * DAY - 5 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

/** 2 days × 24 hours × (24 benign events at minutes 0–23 + one matching event at minute 10:30). */
function generate(): Array<{ time: number; line: string; matches: boolean }> {
  const out = [];
  for (let hour = 0; hour < 48; hour++) {
    const t = BASE + hour * HOUR;
    for (let i = 0; i < 24; i++)
      out.push({
        time: t + i * MIN,
        matches: false,
        line: JSON.stringify({ '@timestamp': iso(t + i * MIN), Image: 'C:\\Windows\\notepad.exe', CommandLine: `n ${hour} ${i}` }),
      });
    const m = t + 10 * MIN + 30_000;
    out.push({ time: m, matches: true, line: JSON.stringify({ '@timestamp': iso(m), Image: 'C:\\Tools\\projected.exe', CommandLine: `p ${hour}` }) });
  }
  return out;
}
const DATA = generate();

describe('projections carry their sample, a 95% interval on alerts/day, and low_confidence with reasons', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: ruleText } })).status).toBe(201);
    expect((await setLocalCostModel(svc, COST_MODEL)).status).toBe(200);
    const ingest = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: DATA.map((d) => d.line).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(ingest.body.accepted).toBe(DATA.length);
  });
  afterAll(() => svc.close());

  const replay = async (from: number, to: number) => {
    const res = await svc.request('POST', '/api/v1/rules/replay', { body: { rule_id: RULE_ID, target: 'local', from: iso(from), to: iso(to) } });
    expect(res.status).toBe(202);
    const done = (await svc.request('GET', `/api/v1/replays/${res.body.id}?wait=30`)).body;
    expect(done.status).toBe('completed');
    return done.result;
  };
  const inWindow = (from: number, to: number) => DATA.filter((d) => d.time >= from && d.time < to);
  // Triage per alert from the cost model: 10 min at 60/h.
  const triagePerAlert = (10 / 60) * 60;

  it('a two-day replay over 1,200 events and 48 alerts is not flagged', async () => {
    const from = BASE;
    const to = BASE + 2 * DAY;
    const r = await replay(from, to);
    const events = inWindow(from, to);
    const alerts = events.filter((e) => e.matches).length;
    expect(events.length).toBe(1_200);
    expect(alerts).toBe(48);
    expect(r.sample).toEqual({ events: events.length, alerts, window_seconds: 2 * 86_400, from: iso(from), to: iso(to), days_with_events: 2, days_in_window: 2 });
    const ci = poissonInterval(alerts);
    expect(r.alerts_per_day.estimate).toBe(alerts / 2);
    expect(r.alerts_per_day.ci95.low).toBeCloseTo(ci.low / 2, 4);
    expect(r.alerts_per_day.ci95.high).toBeCloseTo(ci.high / 2, 4);
    expect(r.alerts_per_day.ci95.low).toBeLessThan(r.alerts_per_day.estimate);
    expect(r.alerts_per_day.ci95.high).toBeGreaterThan(r.alerts_per_day.estimate);
    expect(r.alerts_per_day.method).toBe('poisson-exact-garwood');
    expect(r.low_confidence).toBe(false);
    expect(r.low_confidence_reasons).toEqual([]);
    // The old figures keep their meaning: mean per day is the same estimate.
    expect(r.alerts.mean_per_day).toBe(r.alerts_per_day.estimate);
    // Cost per month: scanning × 30 / 2 days + alerts/day × 30 × triage per alert, at each end of the interval.
    const bytes = events.reduce((s, e) => s + Buffer.byteLength(e.line), 0);
    const scanPerMonth = ((bytes / 1e9) * 1000 * 30) / 2;
    expect(r.cost.per_month).toBeCloseTo(scanPerMonth + (alerts / 2) * 30 * triagePerAlert, 3);
    expect(r.cost.per_month_ci95.low).toBeCloseTo(scanPerMonth + r.alerts_per_day.ci95.low * 30 * triagePerAlert, 3);
    expect(r.cost.per_month_ci95.high).toBeCloseTo(scanPerMonth + r.alerts_per_day.ci95.high * 30 * triagePerAlert, 3);
  });

  it('a half-hour replay is flagged for its window, its events and its alerts', async () => {
    const from = BASE + 5 * HOUR;
    const to = from + 30 * MIN;
    const r = await replay(from, to);
    const events = inWindow(from, to);
    const alerts = events.filter((e) => e.matches).length;
    expect([events.length, alerts]).toEqual([24 + 1, 1]);
    expect(r.sample).toMatchObject({ events: 25, alerts: 1, window_seconds: 1_800, days_with_events: 1, days_in_window: 1 });
    // 1 alert in 1,800 s: 48 per day, and the exact interval of a count of 1 scaled by 48.
    expect(r.alerts_per_day.estimate).toBe(48);
    expect(r.alerts_per_day.ci95.low).toBeCloseTo(poissonInterval(1).low * 48, 3);
    expect(r.alerts_per_day.ci95.high).toBeCloseTo(poissonInterval(1).high * 48, 3);
    expect(r.low_confidence).toBe(true);
    expect(r.low_confidence_reasons).toEqual([
      expect.stringMatching(/covers 30 min, under 1 h: the daily rate multiplies it 48×/),
      expect.stringMatching(/25 events, under 1000/),
      expect.stringMatching(/1 alerts, under 10/),
    ]);
  });

  it('a short shadow run is flagged with its reason and carries its sample and interval', async () => {
    const res = await svc.request('POST', '/api/v1/rules/shadow', { body: { rule_id: RULE_ID, target: 'local', duration: 'PT3S', interval: 'PT1S' } });
    expect(res.status).toBe(202);
    await until('the first evaluation', async () => ((await svc.request('GET', `/api/v1/shadows/${res.body.id}`)).body.progress?.evaluations >= 1 ? true : undefined));
    const now = Date.now();
    const lines = [0, 1, 2].map((i) => JSON.stringify({ '@timestamp': iso(now), Image: i < 2 ? 'C:\\Tools\\projected.exe' : 'C:\\x.exe', CommandLine: `s ${i}` }));
    await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', { body: lines.join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
    const shadow = (await svc.request('GET', `/api/v1/shadows/${res.body.id}?wait=30`)).body;
    expect(shadow.status).toBe('completed');
    const r = shadow.result;
    expect(r.sample).toEqual({
      events: 3,
      alerts: 2,
      window_seconds: r.observed_seconds,
      from: r.started_at,
      to: r.ended_at,
      days_with_events: null,
      days_in_window: expect.any(Number),
    });
    const perDay = 86_400 / r.observed_seconds;
    expect(r.alerts_per_day.estimate).toBeCloseTo(2 * perDay, 0);
    expect(r.alerts_per_day.estimate).toBe(r.alerts.projected_per_day);
    expect(r.alerts_per_day.ci95.low).toBeCloseTo(poissonInterval(2).low * perDay, 0);
    expect(r.alerts_per_day.ci95.high).toBeCloseTo(poissonInterval(2).high * perDay, 0);
    expect(r.low_confidence).toBe(true);
    expect(r.low_confidence_reasons[0]).toMatch(/^the sample covers \d+(\.\d)? s, under 1 h: the daily rate multiplies it \d+×$/);
    expect(r.low_confidence_reasons).toContainEqual(expect.stringMatching(/3 events, under 1000/));
    expect(r.low_confidence_reasons).toContainEqual(expect.stringMatching(/2 alerts, under 10/));
    expect(r.cost.per_month_ci95.high).toBeGreaterThan(r.cost.per_month);
    expect(r.cost.per_month_ci95.low).toBeLessThan(r.cost.per_month);
  });

  it("an approval's impact carries the sample and interval per target, flagged when the data does not cover the lookback", async () => {
    const ci = await createCiKey(svc);
    const reviewer = await createReviewerKey(svc);
    const res = await svc.request('POST', '/api/v1/approvals', { token: ci.token, body: { rule_id: RULE_ID, targets: ['local'] } });
    expect(res.status).toBe(202);
    const impact = res.body.impact ?? (await until('the impact', async () => (await svc.request('GET', `/api/v1/approvals/${res.body.id}`)).body.impact ?? undefined));
    const t = impact.targets[0];
    // Everything in the store lies in the last 7 days: the 1,200 events above and the shadow's 3.
    const alerts = DATA.filter((d) => d.matches).length + 2;
    const events = DATA.length + 3;
    expect(t.sample).toMatchObject({ events, alerts, window_seconds: 7 * 86_400, days_in_window: 8 });
    // Events on the two generated days and today.
    expect(t.sample.days_with_events).toBe(3);
    expect(t.projected_alerts_per_day).toBeCloseTo(alerts / 7, 2);
    expect(t.alerts_per_day.estimate).toBeCloseTo(alerts / 7, 4);
    expect(t.alerts_per_day.ci95.low).toBeCloseTo(poissonInterval(alerts).low / 7, 4);
    expect(t.alerts_per_day.ci95.high).toBeCloseTo(poissonInterval(alerts).high / 7, 4);
    expect(t.low_confidence).toBe(true);
    expect(t.low_confidence_reasons).toEqual([expect.stringMatching(/events fall on 3 of the 8 UTC days of the window/)]);
    expect(impact.low_confidence).toBe(true);
    expect(impact.low_confidence_reasons).toEqual([`local: ${t.low_confidence_reasons[0]}`]);
    expect(impact.alerts_per_day.estimate).toBe(t.alerts_per_day.estimate);
    const triage = (perDay: number) => perDay * triagePerAlert;
    expect(t.cost_per_day.total_ci95.low).toBeCloseTo(t.cost_per_day.scanning + triage(t.alerts_per_day.ci95.low), 2);
    expect(t.cost_per_day.total_ci95.high).toBeCloseTo(t.cost_per_day.scanning + triage(t.alerts_per_day.ci95.high), 2);
    expect((await svc.request('POST', `/api/v1/approvals/${res.body.id}/decision`, { token: reviewer.token, body: { decision: 'reject' } })).status).toBe(200);
  });

  it('a replay recorded before projections carried a sample answers the new fields as null', async () => {
    const [target] = await svc.database.db.select().from(targets).where(eq(targets.name, 'local'));
    const id = crypto.randomUUID();
    const oldResult = {
      window_processed: { from: iso(BASE), to: iso(BASE + DAY) },
      chunks: { done: 1, total: 1 },
      events_scanned: 10,
      bytes_scanned: 100,
      alerts: { total: 1, per_day: [], mean_per_day: 1, peak_per_day: 1 },
      cost: { currency: 'EUR', total: 1, per_month: 30 },
    };
    await svc.database.db.insert(replays).values({
      id,
      tenantId: 'default',
      ruleId: RULE_ID,
      version: 1,
      ruleContent: ruleText,
      targetId: target!.id,
      windowFrom: new Date(BASE),
      windowTo: new Date(BASE + DAY),
      chunkEvents: 100_000,
      status: 'completed',
      result: oldResult,
      workflowId: `replay/default/${RULE_ID}/local/${id}`,
      endedAt: new Date(),
    });
    const res = await svc.request('GET', `/api/v1/replays/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual({
      ...oldResult,
      cost: { ...oldResult.cost, per_month_ci95: null },
      sample: null,
      alerts_per_day: null,
      low_confidence: null,
      low_confidence_reasons: null,
    });
  });
});
