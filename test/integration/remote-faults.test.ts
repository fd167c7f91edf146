import { temporal } from '@temporalio/proto';
import { FAKES } from '../fakes';
import type { FakeKind, FakeObject, FakeSiem, RecordedRequest } from '../fakes/fake-siem';
import { createReviewerKey, processRule, startTestService, until, type TestService } from '../support/harness';

/**
 * Each remote kind's vendor faults, through the real workflows against its fake vendor server:
 * a worker that dies while the SIEM holds the deploy's write, a 429 whose Retry-After the activity
 * retry waits out, a 503 with Retry-After during the impact summary's count, and a write answered
 * after the target's timeout. Every fake applies a delayed request only once its delay is over (the
 * delay comes first, then the request is authenticated and routed), so a held write lands late, as
 * a SIEM that is slow to commit does: these tests pin down what the late write meets.
 */
const COST_MODEL = { currency: 'USD', price_per_gb_scanned: 0, triage_minutes_per_alert: 5, cost_per_analyst_hour: 60 };
const DAY = 86_400_000;
/** The deploy activity's heartbeat timeout (workflows/change-activities.ts): how soon a dead worker's attempt is retried. */
const HEARTBEAT_TIMEOUT_MS = 10_000;

/** The request that creates or changes the rule's object (`METHOD path`, as faults match). */
const WRITE: Record<FakeKind, RegExp> = {
  splunk: /^POST \/servicesNS\/[^/]+\/[^/]+\/saved\/searches(\/[^/]+)?$/,
  elastic: /^(POST|PUT|PATCH) (\/s\/[^/]+)?\/api\/detection_engine\/rules$/,
  sentinel: /^PUT \/.*\/alertRules\/[^/]+$/,
};
/** The search the impact summary counts with. */
const SEARCH: Record<FakeKind, RegExp> = {
  splunk: /^POST \/services(NS\/[^/]+\/[^/]+)?\/search\/jobs$/,
  elastic: /^POST \/_query$/,
  sentinel: /^POST \/v1\/workspaces\/[^/]+\/query$/,
};
/**
 * What the vendor answers a create that arrives when the object exists: Splunk's `POST
 * saved/searches` and Kibana's `POST rules` are create-only (409); ARM's `PUT alertRules/{id}`
 * without an etag is create-or-replace (200, the object replaced).
 */
const LATE_CREATE: Record<FakeKind, number> = { splunk: 409, elastic: 409, sentinel: 200 };
/** The vendor's status for a create. */
const CREATED: Record<FakeKind, number> = { splunk: 201, elastic: 200, sentinel: 201 };

/**
 * `re`, and a promise that resolves once a fake matches a request against it: every fake tests a
 * pending fault's `match` when a request arrives, before any delay, so this says the request is
 * in the SIEM's hands.
 */
function watched(re: RegExp): { match: RegExp; arrived: Promise<void> } {
  let arrived!: () => void;
  const promise = new Promise<void>((r) => (arrived = r));
  const match = new RegExp(re.source, re.flags);
  const test = match.test.bind(match);
  match.test = (s: string) => {
    const hit = test(s);
    if (hit) arrived();
    return hit;
  };
  return { match, arrived: promise };
}

const line = (r: RecordedRequest) => `${r.method} ${r.path}`;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

describe.each(Object.keys(FAKES) as FakeKind[])('%s target: the vendor’s faults through the workflows', (kind) => {
  let svc: TestService;
  let fake: FakeSiem;
  let reviewer: string;
  const target = `${kind}-faults`;
  const tight = `${kind}-tight`;
  const prefix = { splunk: 'a', elastic: 'b', sentinel: 'c' }[kind];
  const ruleId = (n: number) => `${prefix}f000000-0000-4000-8000-00000000000${n}`;

  beforeAll(async () => {
    svc = await startTestService();
    fake = await FAKES[kind]!();
    reviewer = (await createReviewerKey(svc)).token;
    for (const [name, extra] of [
      [target, {}],
      [tight, { timeout_ms: 500 }],
    ] as const) {
      const created = await svc.request('POST', '/api/v1/settings/targets', {
        body: { name, kind, environment: 'prod', connection: { ...fake.connection(), ingest_lag_seconds: 0, ...extra }, cost_model: COST_MODEL },
      });
      expect(created.status).toBe(201);
    }
    for (const n of [1, 2, 3, 4]) {
      const rule = processRule(ruleId(n), { title: `Fault subject ${n}`, image: `\\fault-${n}.exe` });
      expect((await svc.request('POST', '/api/v1/rules', { body: { rule } })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  const mine = (n: number) => fake.objects().filter((o) => o.name.includes(ruleId(n)));
  const deploy = async (n: number, on = target) => {
    const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: ruleId(n), target: on, approval_required: false } });
    expect(res.status).toBe(202);
    return res.body as { id: string; workflow_id: string };
  };
  const settled = async (id: string) => (await svc.request('GET', `/api/v1/deployments/${id}?wait=60`)).body as { status: string; error: string | null };
  type Mark = { requests: number; writes: number };
  /** Where the fake's logs are now. */
  const mark = (): Mark => ({ requests: fake.requests().length, writes: fake.writes().length });
  /** The fake's requests from `from` on that match `re`, in the order they were answered. */
  const requestsSince = (from: number, re: RegExp) =>
    fake
      .requests()
      .slice(from)
      .filter((r) => re.test(line(r)));
  /** The one start of an activity in the run (the last attempt's): its attempt number and the failure that led to it. */
  const activityStart = async (workflowId: string, activityType = 'deployToTarget') => {
    const events: HistoryEvent[] = (await svc.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activityType);
    expect(scheduled).toHaveLength(1);
    const started = events.filter((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled[0]!.eventId));
    expect(started).toHaveLength(1);
    return started[0]!.activityTaskStartedEventAttributes!;
  };
  /** Resolves once the fake has answered nothing new for `ms` (late requests and what follows them are in). */
  const quiet = async (ms: number) => {
    let seen = fake.requests().length;
    for (;;) {
      await new Promise((r) => setTimeout(r, ms));
      const now = fake.requests().length;
      if (now === seen) return;
      seen = now;
    }
  };
  /**
   * The object after a retried write: one, with the deployment's marker; the retry created it,
   * and the first attempt's write, held by the SIEM, landed after it and changed nothing.
   */
  const expectCreatedOnceDespiteTheLateWrite = (n: number, deploymentId: string, from: Mark, firstSentBefore: Date, asRetried: FakeObject[]) => {
    expect(mine(n)).toHaveLength(1);
    expect(mine(n)[0]).toMatchObject({ enabled: true, description: expect.stringContaining(`deployment=${deploymentId}`) });
    expect(mine(n)).toEqual(asRetried);
    const writes = requestsSince(from.requests, WRITE[kind]);
    // Answered in this order: the retry's create, then the first attempt's request, which had
    // arrived first (before the crash or the timeout) and was held by the SIEM.
    expect(writes.map((w) => [w.status, w.at <= firstSentBefore])).toEqual([
      [CREATED[kind], false],
      [LATE_CREATE[kind], true],
    ]);
    // Exactly one create. Where the vendor refuses a second create (Splunk, Elastic) nothing else
    // was written: a first attempt still waiting for the answer (the dead worker's) is told 409,
    // reads the object again, finds it as this deployment wants it and leaves it; one that gave
    // up (the timeout) hears nothing. ARM's PUT replaces: the held request itself lands as a
    // replacement with the same content (the object is unchanged, above); no adapter can take
    // back a request the SIEM already holds.
    expect(
      fake
        .writes()
        .slice(from.writes)
        .map((w) => w.status),
    ).toEqual(kind === 'sentinel' ? [201, 200] : [CREATED[kind]]);
  };

  it('deploys exactly once when the worker dies while the SIEM holds the write', async () => {
    // Held past the heartbeat timeout: the dead worker's attempt cannot report before Temporal
    // gives its work to the new worker (held less, it would land, report, and no retry would run).
    const HOLD_MS = HEARTBEAT_TIMEOUT_MS + 5_000;
    const from = mark();
    const write = watched(WRITE[kind]);
    fake.fault({ times: 1, match: write.match, delayMs: HOLD_MS });
    const { id, workflow_id } = await deploy(1);
    await write.arrived;
    const crashedAt = new Date();
    await svc.crashWorker();

    expect(await settled(id)).toMatchObject({ status: 'active', error: null });
    const started = await activityStart(workflow_id);
    expect(started.attempt).toBe(2);
    expect(started.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT);
    // The retry found nothing (the held write had not landed) and created the object.
    const asRetried = mine(1);
    expect(asRetried).toHaveLength(1);
    expect(requestsSince(from.requests, WRITE[kind])).toHaveLength(1);

    // The held write lands, and the dead attempt goes on with what it was answered.
    await until('the held write to land', async () => (requestsSince(from.requests, WRITE[kind]).length >= 2 ? true : undefined), HOLD_MS / 1000 + 10);
    await quiet(1_000);
    expectCreatedOnceDespiteTheLateWrite(1, id, from, crashedAt, asRetried);
    expect((await svc.request('GET', `/api/v1/deployments/${id}`)).body.status).toBe('active');
  });

  it('waits out a 429’s Retry-After before the retried write', async () => {
    const from = fake.requests().length;
    fake.fault({ times: 1, match: WRITE[kind], status: 429, retryAfterSeconds: 2 });
    const { id, workflow_id } = await deploy(2);
    expect(await settled(id)).toMatchObject({ status: 'active', error: null });
    expect(mine(2)).toHaveLength(1);
    expect(mine(2)[0]!.description).toContain(`deployment=${id}`);

    const [throttled, retried, ...more] = requestsSince(from, WRITE[kind]);
    expect(more).toEqual([]);
    expect([throttled!.status, retried!.status]).toEqual([429, CREATED[kind]]);
    const waited = retried!.at.getTime() - throttled!.at.getTime();
    // Two seconds, as asked: neither the policy's first interval (0.5 s) nor the delay for a
    // throttle that names none (5 s).
    expect(waited).toBeGreaterThanOrEqual(1_950);
    expect(waited).toBeLessThan(4_500);
    const started = await activityStart(workflow_id);
    expect(started.attempt).toBe(2);
    expect(started.lastFailure?.applicationFailureInfo).toMatchObject({ type: 'SiemUnavailable', nonRetryable: false });
    expect(Number(started.lastFailure!.applicationFailureInfo!.nextRetryDelay!.seconds)).toBe(2);
  });

  it('retries the impact summary’s count after a 503 with Retry-After, and reaches approval with the impact', async () => {
    const now = Date.now();
    fake.addProcessEvents([1, 2, 3].map((d) => ({ time: new Date(now - d * DAY), image: 'C:\\x\\fault-3.exe', commandLine: 'fault-3' })));
    const from = fake.requests().length;
    fake.fault({ times: 1, match: SEARCH[kind], status: 503, retryAfterSeconds: 1 });
    const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: ruleId(3), target, approval_required: true } });
    expect(res.body).toMatchObject({ status: 'pending_approval' });
    const approvalId = String(res.body.links.approval).split('/').at(-1)!;
    const approval = await until('the impact summary', async () => {
      const a = (await svc.request('GET', `/api/v1/approvals/${approvalId}`)).body;
      return a.impact ? a : undefined;
    });
    expect(approval.status).toBe('pending');
    expect(approval.impact.targets).toEqual([expect.objectContaining({ target, kind, lookback_days: 7 })]);
    // The three matches of the last 7 days, counted by the SIEM once the 503 was retried.
    expect(approval.impact.targets[0].projected_alerts_per_day).toBeCloseTo(3 / 7, 2);
    expect((await svc.request('GET', `/api/v1/deployments/${res.body.id}`)).body.status).toBe('pending_approval');

    // The count's first search was answered 503; the activity failed and was retried once the
    // second its Retry-After asked for was over, and every search of the retry was answered.
    const searches = requestsSince(from, SEARCH[kind]);
    const [unavailable] = searches;
    expect(unavailable!.status).toBe(503);
    const retried = searches.filter((s) => s.at.getTime() - unavailable!.at.getTime() >= 950);
    expect(retried.length).toBeGreaterThan(0);
    expect(retried.every((s) => s.status === 200)).toBe(true);
    const started = await activityStart(res.body.workflow_id, 'computeImpact');
    expect(started.attempt).toBe(2);
    expect(started.lastFailure?.applicationFailureInfo).toMatchObject({ type: 'SiemUnavailable', nonRetryable: false });
    expect(Number(started.lastFailure!.applicationFailureInfo!.nextRetryDelay!.seconds)).toBe(1);
    // Nothing reached the SIEM's rules before a decision.
    expect(mine(3)).toEqual([]);
    expect((await svc.request('POST', `/api/v1/approvals/${approvalId}/decision`, { token: reviewer, body: { decision: 'reject', comment: 'fault test' } })).status).toBe(200);
  });

  it('retries a write answered after the target’s timeout', async () => {
    // Longer than the timeout (500 ms) plus the retry's backoff (500 ms), so the retry runs first.
    const HOLD_MS = 3_000;
    const from = mark();
    const write = watched(WRITE[kind]);
    fake.fault({ times: 1, match: write.match, delayMs: HOLD_MS });
    const { id, workflow_id } = await deploy(4, tight);
    await write.arrived;
    const firstArrivedBy = new Date();
    expect(await settled(id)).toMatchObject({ status: 'active', error: null });
    const started = await activityStart(workflow_id);
    expect(started.attempt).toBe(2);
    expect(started.lastFailure?.message).toMatch(/did not answer within 500 ms/);
    const asRetried = mine(4);

    await until('the held write to land', async () => (requestsSince(from.requests, WRITE[kind]).length >= 2 ? true : undefined), HOLD_MS / 1000 + 10);
    await quiet(500);
    expectCreatedOnceDespiteTheLateWrite(4, id, from, firstArrivedBy, asRetried);
  });
});
