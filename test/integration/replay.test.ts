import crypto from 'node:crypto';
import { alerts, deployments, replays, targets } from '../../db/schema';
import { eq } from 'drizzle-orm';
import { KIND, RULE_ID as RULE_ID_ATTR, STATUS } from '../../workflows/contracts';
import { createTenant, startTestService, type TestService, until, setLocalCostModel } from '../support/harness';

const RULE_ID = 'a1e0c0de-0000-4000-8000-000000000001';
// Two fields, so a past false positive is recognised by (Image, CommandLine), not by Image alone.
const ruleText = `title: Evil tool run
id: ${RULE_ID}
status: test
level: high
logsource:
  category: process_creation
  product: windows
detection:
  selection:
    Image|endswith: '\\evil.exe'
    CommandLine|contains: 'evil'
  condition: selection
`;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// Ten days ago at UTC midnight: in the past whatever the clock says, inside every tier's window.
const BASE = Math.floor(Date.now() / DAY) * DAY - 10 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();
const dayOf = (ms: number) => iso(ms).slice(0, 10);

/**
 * The data set, built so every figure can be counted by hand: 3 days × 24 hours × 3 benign events,
 * plus one evil event in the hours where hour % (day + 2) == 0: 12 on day 0, 8 on day 1, 6 on day 2.
 * An evil event runs on host-(hour % 2) as alice with `evil.exe -h <hour % 2>`.
 */
type Gen = { time: number; line: string; evil: boolean; hour: number; day: number };
function generate(): Gen[] {
  const out: Gen[] = [];
  for (let day = 0; day < 3; day++) {
    for (let hour = 0; hour < 24; hour++) {
      const t = BASE + day * DAY + hour * HOUR;
      for (let i = 0; i < 3; i++) {
        const line = JSON.stringify({ '@timestamp': iso(t + i * 60_000), Image: 'C:\\Windows\\notepad.exe', CommandLine: `notepad ${i}`, Computer: 'host-9', User: 'bob' });
        out.push({ time: t + i * 60_000, line, evil: false, hour, day });
      }
      if (hour % (day + 2) === 0) {
        const line = JSON.stringify({
          '@timestamp': iso(t + 30 * 60_000),
          Image: 'C:\\Tools\\evil.exe',
          CommandLine: `evil.exe -h ${hour % 2}`,
          Computer: `host-${hour % 2}`,
          User: 'alice',
        });
        out.push({ time: t + 30 * 60_000, line, evil: true, hour, day });
      }
    }
  }
  return out;
}
const DATA = generate();
const WINDOW = { from: iso(BASE), to: iso(BASE + 3 * DAY) };
const COST_MODEL = { currency: 'EUR', price_per_gb_scanned: 1000, triage_minutes_per_alert: 10, cost_per_analyst_hour: 60 };

describe('replay (POST /rules/replay, GET /replays/{id})', () => {
  let svc: TestService;
  let uninterrupted: any;

  beforeAll(async () => {
    svc = await startTestService();
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: ruleText } })).status).toBe(201);
    expect((await setLocalCostModel(svc, COST_MODEL)).status).toBe(200);
    const ingest = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: DATA.map((d) => d.line).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(ingest.body.accepted).toBe(DATA.length);

    // A past false positive of this rule: equal on Image and CommandLine to the evil events of odd hours.
    const [target] = await svc.database.db.select().from(targets).where(eq(targets.name, 'local'));
    const deploymentId = crypto.randomUUID();
    await svc.database.db.insert(deployments).values({
      id: deploymentId,
      tenantId: 'default',
      ruleId: RULE_ID,
      version: 1,
      targetId: target!.id,
      status: 'superseded',
      approvalRequired: false,
      workflowId: `deploy/default/${RULE_ID}/local/${deploymentId}`,
    });
    await svc.database.db.insert(alerts).values({
      tenantId: 'default',
      deploymentId,
      ruleId: RULE_ID,
      version: 1,
      targetId: target!.id,
      eventSeq: 1,
      eventId: 'fp-1',
      eventTime: new Date(BASE - DAY),
      event: { Image: 'C:\\Tools\\evil.exe', CommandLine: 'evil.exe -h 1', Computer: 'elsewhere', User: 'carol' },
      status: 'closed',
      disposition: 'false_positive',
    });
  });
  afterAll(() => svc.close());

  const start = (body: Record<string, unknown>, headers: Record<string, string> = {}, token?: string) =>
    svc.request('POST', '/api/v1/rules/replay', { body: { target: 'local', ...body }, headers, ...(token ? { token } : {}) });
  const read = async (id: string, wait = 0) => (await svc.request('GET', `/api/v1/replays/${id}?wait=${wait}`)).body;

  it('counts a generated data set exactly: volume per day, scanned, bytes, noise, latency and cost', async () => {
    const res = await start({ rule_id: RULE_ID, ...WINDOW, noise_budget: { max_alerts_per_day: 10 } }, { 'idempotency-key': 'replay-exact-1' });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/v1/replays/${res.body.id}`);
    expect(res.body.workflow_id).toBe(`replay/default/${RULE_ID}/local/${res.body.id}`);
    expect(res.body.links.run).toContain(encodeURIComponent(res.body.workflow_id));
    // The same key names the same replay and run: no second workflow.
    const again = await start({ rule_id: RULE_ID, ...WINDOW, noise_budget: { max_alerts_per_day: 10 } }, { 'idempotency-key': 'replay-exact-1' });
    expect(again.body).toMatchObject({ id: res.body.id, run_id: res.body.run_id });

    const replay = await read(res.body.id, 30);
    expect(replay.status).toBe('completed');
    const r = replay.result;
    const evil = DATA.filter((d) => d.evil);
    expect(evil).toHaveLength(26);
    expect(r.alerts.total).toBe(26);
    expect(r.alerts.per_day).toEqual([0, 1, 2].map((day) => ({ day: dayOf(BASE + day * DAY), alerts: [12, 8, 6][day], events_scanned: 72 + [12, 8, 6][day]! })));
    expect(r.events_scanned).toBe(DATA.length);
    // The local store bills the raw JSON text of each scanned event.
    const bytes = DATA.reduce((s, d) => s + Buffer.byteLength(d.line), 0);
    expect(r.bytes_scanned).toBe(bytes);
    expect(r.chunks).toEqual({ done: 1, total: 1 });
    expect(r.alerts.peak_per_day).toBe(12);
    expect(r.alerts.mean_per_day).toBeCloseTo(26 / 3, 3);

    // Duplicates by (day, host, user, process): day 0 one entity (11 repeats), day 1 two (6), day 2 one (5).
    expect(r.noise.duplicates).toBe(22);
    // The false positive equals the evil events of odd hours on (Image, CommandLine): day 1, hours 3, 9, 15, 21.
    expect(r.noise.false_positive_fields).toEqual(['Image', 'CommandLine']);
    expect(r.noise.false_positive_matches).toBe(4);
    expect(r.noise.false_positive_alerts_considered).toBe(1);
    // Either: 11 + |{3,6,9,12,15,18,21}| + 5 on day 1 — hour 3 is a false positive but no repeat.
    expect(r.noise.noisy_alerts).toBe(23);
    expect(r.noise.noise_ratio).toBeCloseTo(23 / 26, 4);
    expect(r.noise.sampled).toBe(false);
    expect(r.noise.budget).toEqual({ max_alerts_per_day: 10, days_over_budget: 1, alerts_over_budget: 2, within_budget: false });

    expect(r.latency.per_chunk).toHaveLength(1);
    expect(r.latency.total_ms).toBeGreaterThan(0);
    expect(r.latency.total_ms).toBeCloseTo(r.latency.per_chunk[0].ms, 3);

    // By hand, from the target's cost model.
    const scan = (bytes / 1e9) * 1000;
    const triage = ((26 * 10) / 60) * 60;
    expect(r.cost).toMatchObject({ currency: 'EUR', bytes_scanned: bytes, window_days: 3 });
    expect(r.cost.scan_cost).toBeCloseTo(scan, 4);
    expect(r.cost.triage_hours).toBeCloseTo((26 * 10) / 60, 4);
    expect(r.cost.triage_cost).toBeCloseTo(triage, 4);
    expect(r.cost.total).toBeCloseTo(scan + triage, 3);
    expect(r.cost.per_month).toBeCloseTo(((scan + triage) * 30) / 3, 2);
    uninterrupted = r;

    const [row] = await svc.database.db.select().from(replays).where(eq(replays.id, res.body.id));
    expect(row!.status).toBe('completed');
    // The run carries the search attributes operators filter on.
    const handle = svc.client.workflow.getHandle(res.body.workflow_id);
    expect(await handle.result()).toMatchObject({ status: 'completed', alerts: { total: 26 } });
    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(STATUS)).toBe('completed');
    expect(described.typedSearchAttributes.get(KIND)).toBe('replay');
    expect(described.typedSearchAttributes.get(RULE_ID_ATTR)).toBe(RULE_ID);
  });

  it('replays an inline rule the same way as the stored one', async () => {
    const res = await start({ rule: ruleText, ...WINDOW });
    expect(res.status).toBe(202);
    const replay = await read(res.body.id, 30);
    expect(replay).toMatchObject({ status: 'completed', rule_id: RULE_ID, version: null });
    expect(replay.result.alerts.per_day).toEqual(uninterrupted.alerts.per_day);
  });

  it('replays a window with no events: zeros, completed', async () => {
    const res = await start({ rule_id: RULE_ID, from: iso(BASE - 5 * DAY), to: iso(BASE - 4 * DAY) });
    const replay = await read(res.body.id, 30);
    expect(replay.status).toBe('completed');
    expect(replay.result).toMatchObject({ events_scanned: 0, bytes_scanned: 0, alerts: { total: 0, per_day: [], peak_per_day: 0, mean_per_day: 0 } });
    expect(replay.result.noise).toMatchObject({ duplicates: 0, false_positive_matches: 0, noisy_alerts: 0, noise_ratio: 0 });
    expect(replay.result.cost).toMatchObject({ scan_cost: 0, triage_cost: 0, total: 0, per_month: 0, window_days: 1 });
  });

  it('shows progress while running and, cancelled, ends cancelled with the figures of the chunks done', async () => {
    // One chunk per hour (72): long enough to be caught running.
    const res = await start({ rule_id: RULE_ID, ...WINDOW, chunk_events: 1 });
    const running = await until('a chunk done', async () => {
      const v = await read(res.body.id);
      return v.progress && v.progress.chunks_done >= 1 ? v : undefined;
    });
    expect(running.status).toBe('running');
    expect(running.progress.chunks_total).toBe(72);
    expect(running.result).toBeNull();
    const cancel = await svc.request('POST', `/api/v1/replays/${res.body.id}/cancel`);
    expect(cancel.status).toBe(202);

    const replay = await read(res.body.id, 30);
    expect(replay.status).toBe('cancelled');
    const r = replay.result;
    expect(r.chunks.total).toBe(72);
    expect(r.chunks.done).toBeGreaterThanOrEqual(1);
    expect(r.chunks.done).toBeLessThan(72);
    // The partial figures are exactly those of the processed prefix of the window.
    const until_ = Date.parse(r.window_processed.to);
    expect(until_).toBe(BASE + r.chunks.done * HOUR);
    const prefix = DATA.filter((d) => d.time < until_);
    expect(r.events_scanned).toBe(prefix.length);
    expect(r.alerts.total).toBe(prefix.filter((d) => d.evil).length);
    expect(r.cost.window_days).toBeCloseTo(r.chunks.done / 24, 5);
    // A second cancel changes nothing.
    expect((await svc.request('POST', `/api/v1/replays/${res.body.id}/cancel`)).status).toBe(200);
  });

  it('resumes after the worker is killed mid-replay and gives the same result as an uninterrupted one', async () => {
    const res = await start({ rule_id: RULE_ID, ...WINDOW, chunk_events: 1, noise_budget: { max_alerts_per_day: 10 } });
    const running = await until('two chunks done', async () => {
      const v = await read(res.body.id);
      return v.progress && v.progress.chunks_done >= 2 ? v : undefined;
    });
    expect(running.progress.chunks_done).toBeLessThan(72);
    await svc.restartWorker();
    const replay = await read(res.body.id, 45);
    expect(replay.status).toBe('completed');
    const r = replay.result;
    expect(r.chunks).toEqual({ done: 72, total: 72 });
    // Chunking and the restart change nothing but latency.
    for (const k of ['alerts', 'events_scanned', 'bytes_scanned', 'noise'] as const) expect(r[k]).toEqual(uninterrupted[k]);
    expect({ ...r.cost }).toEqual({ ...uninterrupted.cost });
    expect(r.latency.per_chunk).toHaveLength(72);
  });

  it('answers 400 for bad windows and requests', async () => {
    const bad = async (body: Record<string, unknown>, pointer: string) => {
      const res = await start(body);
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    };
    await bad({ rule_id: RULE_ID, from: WINDOW.to, to: WINDOW.from }, '/body/from');
    await bad({ rule_id: RULE_ID, from: WINDOW.from, to: iso(Date.now() + DAY) }, '/body/to');
    await bad({ rule_id: RULE_ID, from: WINDOW.from }, '/body/to');
    await bad({ rule_id: RULE_ID }, '/body/from');
    await bad({ rule_id: RULE_ID, ...WINDOW, lookback: 'P1D' }, '/body/lookback');
    await bad({ rule_id: RULE_ID, lookback: 'P1M' }, '/body/lookback');
    await bad({ rule_id: RULE_ID, from: 'yesterday', to: WINDOW.to }, '/body/from');
    await bad({ rule_id: RULE_ID, rule: ruleText, ...WINDOW }, '/body/rule');
    await bad({ rule: 'title: [unclosed', ...WINDOW }, '/body/rule');
    await bad({ rule_id: RULE_ID, ...WINDOW, extra: 1 }, '/body');
  });

  it('answers 404 for unknown or foreign rules, targets and replays', async () => {
    expect((await start({ rule_id: 'b2e0c0de-0000-4000-8000-00000000dead', ...WINDOW })).status).toBe(404);
    expect((await start({ rule_id: RULE_ID, version: 9, ...WINDOW })).status).toBe(404);
    expect((await svc.request('POST', '/api/v1/rules/replay', { body: { rule_id: RULE_ID, target: 'nowhere', ...WINDOW } })).status).toBe(404);
    const other = await createTenant(svc, 'replay-other');
    // Another tenant's rule and replay do not exist for this token.
    expect((await start({ rule_id: RULE_ID, ...WINDOW }, {}, other)).status).toBe(404);
    const mine = await start({ rule_id: RULE_ID, from: iso(BASE - 5 * DAY), to: iso(BASE - 4 * DAY) });
    expect((await svc.request('GET', `/api/v1/replays/${mine.body.id}`, { token: other })).status).toBe(404);
    expect((await svc.request('POST', `/api/v1/replays/${mine.body.id}/cancel`, { token: other })).status).toBe(404);
    expect((await svc.request('GET', `/api/v1/replays/${crypto.randomUUID()}`)).status).toBe(404);
    await read(mine.body.id, 30);
  });

  it('answers 403 resource-limit beyond the tier: window length and concurrent runs', async () => {
    const free = await createTenant(svc, 'replay-free', 'free');
    const inline = ruleText.replace(RULE_ID, 'c3e0c0de-0000-4000-8000-000000000003');
    const over = await start({ rule: inline, lookback: 'P8D' }, {}, free);
    expect(over.status).toBe(403);
    expect(over.body.type).toBe('https://detflow.dev/problems/resource-limit');
    const allowed = await start({ rule: inline, lookback: 'P7D' }, {}, free);
    expect(allowed.status).toBe(202);
    expect((await svc.request('GET', `/api/v1/replays/${allowed.body.id}?wait=30`, { token: free })).body.status).toBe('completed');

    // Free runs 2 at once: two long shadow evaluations hold both slots.
    const shadows = [];
    for (let i = 0; i < 2; i++) {
      const s = await svc.request('POST', '/api/v1/rules/shadow', { token: free, body: { rule: inline, target: 'local', duration: 'PT10M', interval: 'PT1M' } });
      expect(s.status).toBe(202);
      shadows.push(s.body.id as string);
    }
    const refused = await start({ rule: inline, lookback: 'P1D' }, {}, free);
    expect(refused.status).toBe(403);
    expect(refused.body.type).toBe('https://detflow.dev/problems/resource-limit');
    for (const id of shadows) {
      expect((await svc.request('POST', `/api/v1/shadows/${id}/stop`, { token: free })).status).toBe(202);
      expect((await svc.request('GET', `/api/v1/shadows/${id}?wait=30`, { token: free })).body.status).toBe('completed');
    }
  });
});
