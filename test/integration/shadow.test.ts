import crypto from 'node:crypto';
import { count, eq } from 'drizzle-orm';
import { alerts, shadowRuns } from '../../db/schema';
import { createTenant, processRule, startTestService, type TestService, until, setLocalCostModel } from '../support/harness';

const RULE_ID = '5aad0000-0000-4000-8000-000000000001';
const ruleText = processRule(RULE_ID, { title: 'Shadowed tool', level: 'medium', image: '\\shadowy.exe' });
const COST_MODEL = { currency: 'USD', price_per_gb_scanned: 5000, triage_minutes_per_alert: 12, cost_per_analyst_hour: 90 };

let n = 0;
const line = (image: string) => JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} ${++n}`, Computer: 'host-1' });

describe('shadow evaluation (POST /rules/shadow, GET /shadows/{id})', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: ruleText } })).status).toBe(201);
    expect((await setLocalCostModel(svc, COST_MODEL)).status).toBe(200);
  });
  afterAll(() => svc.close());

  const ingest = async (lines: string[]) => {
    const res = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(res.body.accepted).toBe(lines.length);
  };
  const start = (body: Record<string, unknown>, headers: Record<string, string> = {}, token?: string) =>
    svc.request('POST', '/api/v1/rules/shadow', { body: { target: 'local', ...body }, headers, ...(token ? { token } : {}) });
  const read = async (id: string, wait = 0) => (await svc.request('GET', `/api/v1/shadows/${id}?wait=${wait}`)).body;

  it('counts exactly the events ingested while it runs, carries its state over continue-as-new, writes no alert, and stops early with its figures', async () => {
    // Before the shadow starts: never counted.
    await ingest([line('shadowy.exe'), line('shadowy.exe'), line('other.exe')]);
    // Continue-as-new after every 2 evaluations, so the run below spans several workflow runs.
    const res = await start({ rule_id: RULE_ID, duration: 'PT5M', interval: 'PT1S', continue_as_new_after: 2 }, { 'idempotency-key': 'shadow-1' });
    expect(res.status).toBe(202);
    expect(res.body.workflow_id).toBe(`shadow/default/${RULE_ID}/local/${res.body.id}`);
    expect(res.headers.get('location')).toBe(`/api/v1/shadows/${res.body.id}`);
    expect((await start({ rule_id: RULE_ID, duration: 'PT5M', interval: 'PT1S', continue_as_new_after: 2 }, { 'idempotency-key': 'shadow-1' })).body.id).toBe(res.body.id);
    await until('the first evaluation', async () => ((await read(res.body.id)).progress?.evaluations >= 1 ? true : undefined));

    const first = [line('shadowy.exe'), line('calc.exe'), line('shadowy.exe'), line('notepad.exe')];
    await ingest(first);
    // Wait until those were evaluated and the workflow continued as new at least once.
    const mid = await until('a second workflow run that saw the first batch', async () => {
      const v = await read(res.body.id);
      return v.progress && v.progress.workflow_runs >= 2 && v.progress.events_scanned >= 4 ? v : undefined;
    });
    expect(mid.status).toBe('running');
    expect(mid.progress).toMatchObject({ events_scanned: 4, alerts: 2 });
    const second = [line('SHADOWY.EXE'), line('cmd.exe'), line('shadowy.exe'), line('x.exe'), line('y.exe')];
    await ingest(second);

    const stop = await svc.request('POST', `/api/v1/shadows/${res.body.id}/stop`);
    expect(stop.status).toBe(202);
    const shadow = await read(res.body.id, 30);
    expect(shadow.status).toBe('completed');
    const r = shadow.result;
    // The slice ingested before the stop is evaluated too: all 9 events since the start, 4 matching.
    expect(r.events_scanned).toBe(9);
    expect(r.alerts).toEqual({ projected_total: 4, projected_per_day: expect.any(Number), written: 0 });
    const bytes = [...first, ...second].reduce((s, l) => s + Buffer.byteLength(l), 0);
    expect(r.bytes_scanned).toBe(bytes);
    expect(r.stopped_early).toBe(true);
    expect(r.workflow_runs).toBeGreaterThanOrEqual(2);
    expect(r.evaluations).toBeGreaterThanOrEqual(3);
    expect(r.cursor.to - r.cursor.from).toBe(9);
    expect(r.latency.total_ms).toBeGreaterThan(0);
    expect(r.latency.max_evaluation_ms).toBeLessThanOrEqual(r.latency.total_ms);

    // Cost by hand from the target's cost model, over the time it observed.
    const days = r.observed_seconds / 86_400;
    const scan = (bytes / 1e9) * 5000;
    const triage = ((4 * 12) / 60) * 90;
    expect(r.cost.scan_cost).toBeCloseTo(scan, 4);
    expect(r.cost.triage_cost).toBeCloseTo(triage, 4);
    expect(r.cost.total).toBeCloseTo(scan + triage, 3);
    expect(r.cost.per_month / ((r.cost.total * 30) / days)).toBeCloseTo(1, 3);
    expect(r.alerts.projected_per_day).toBeCloseTo(4 / days, 0);

    // Continue-as-new happened: the current run is not the first one.
    const described = await svc.client.workflow.getHandle(res.body.workflow_id).describe();
    expect(described.runId).not.toBe(res.body.run_id);
    // It projects; it never raises an alert.
    expect((await svc.request('GET', `/api/v1/alerts?rule_id=${RULE_ID}`)).body.items).toEqual([]);
    const [{ rows }] = (await svc.database.db.select({ rows: count() }).from(alerts).where(eq(alerts.ruleId, RULE_ID))) as [{ rows: number }];
    expect(Number(rows)).toBe(0);
    const [row] = await svc.database.db.select().from(shadowRuns).where(eq(shadowRuns.id, res.body.id));
    expect(row!.status).toBe('completed');
    // Stopping an ended shadow changes nothing.
    expect((await svc.request('POST', `/api/v1/shadows/${res.body.id}/stop`)).status).toBe(200);
  });

  it('runs for its duration and completes on its own', async () => {
    const res = await start({ rule: ruleText, duration: 'PT3S', interval: 'PT1S' });
    expect(res.status).toBe(202);
    await until('the first evaluation', async () => ((await read(res.body.id)).progress?.evaluations >= 1 ? true : undefined));
    await ingest([line('shadowy.exe'), line('ok.exe')]);
    const shadow = await read(res.body.id, 30);
    expect(shadow).toMatchObject({ status: 'completed', rule_id: RULE_ID, version: null });
    expect(shadow.result).toMatchObject({ stopped_early: false, events_scanned: 2, alerts: { projected_total: 1, written: 0 }, workflow_runs: 1 });
    expect(shadow.result.evaluations).toBeGreaterThanOrEqual(3);
    expect(shadow.result.observed_seconds).toBeGreaterThanOrEqual(3);
  });

  it('answers 400 for bad durations and intervals, 404 for unknown or foreign rules, targets and runs', async () => {
    const bad = async (body: Record<string, unknown>, pointer: string) => {
      const res = await start(body);
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    };
    await bad({ rule_id: RULE_ID, duration: 'PT0S', interval: 'PT1S' }, '/body/duration');
    await bad({ rule_id: RULE_ID, duration: '1 hour', interval: 'PT1S' }, '/body/duration');
    await bad({ rule_id: RULE_ID, duration: 'PT1M', interval: 'PT2M' }, '/body/interval');
    await bad({ rule_id: RULE_ID, duration: 'P31D', interval: 'PT1M' }, '/body/duration');
    await bad({ duration: 'PT1M', interval: 'PT1S' }, '/body/rule_id');

    expect((await start({ rule_id: '5aad0000-0000-4000-8000-00000000dead', duration: 'PT1M', interval: 'PT1S' })).status).toBe(404);
    expect((await svc.request('POST', '/api/v1/rules/shadow', { body: { rule_id: RULE_ID, target: 'nowhere', duration: 'PT1M', interval: 'PT1S' } })).status).toBe(404);
    const other = await createTenant(svc, 'shadow-other');
    expect((await start({ rule_id: RULE_ID, duration: 'PT1M', interval: 'PT1S' }, {}, other)).status).toBe(404);
    const runs = await svc.database.db.select({ id: shadowRuns.id }).from(shadowRuns).limit(1);
    expect((await svc.request('GET', `/api/v1/shadows/${runs[0]!.id}`, { token: other })).status).toBe(404);
    expect((await svc.request('POST', `/api/v1/shadows/${runs[0]!.id}/stop`, { token: other })).status).toBe(404);
    expect((await svc.request('GET', `/api/v1/shadows/${crypto.randomUUID()}`)).status).toBe(404);
  });
});
