import { and, eq } from 'drizzle-orm';
import { approvals } from '../../db/schema';
import { createCiKey, createReviewerKey, processRule, startTestService, type TestService } from '../support/harness';

const rule = (id: string, revision = 1) => processRule(id, { title: `Equal changes (revision ${revision})`, level: 'medium', image: `\\equal-${revision}.exe` });

/** A second target in another environment, so a change can name two. */
const STAGING = {
  name: 'equal-staging',
  kind: 'local',
  environment: 'staging',
  cost_model: { currency: 'USD', price_per_gb_scanned: 0, triage_minutes_per_alert: 5, cost_per_analyst_hour: 60 },
};

describe('equal changes: one pending approval, and a deploy of the live version changes nothing', () => {
  let svc: TestService;
  let requester: string;
  let reviewer: string;
  beforeAll(async () => {
    svc = await startTestService();
    requester = (await createCiKey(svc)).token;
    reviewer = (await createReviewerKey(svc)).token;
    expect((await svc.request('POST', '/api/v1/settings/targets', { body: STAGING })).status).toBe(201);
  });
  afterAll(() => svc.close());

  const store = async (id: string, revision = 1) => expect([200, 201]).toContain((await svc.request('POST', '/api/v1/rules', { body: { rule: rule(id, revision) } })).status);
  const deploy = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    svc.request('POST', '/api/v1/rules/deploy', { token: requester, body: { target: 'local', ...body }, headers });
  const decide = (id: string, decision = 'approve') => svc.request('POST', `/api/v1/approvals/${id}/decision`, { token: reviewer, body: { decision, comment: 'ok' } });
  const pendingOf = async (ruleId: string) => (await svc.request('GET', `/api/v1/approvals?rule_id=${ruleId}&status=pending`)).body.items as Array<{ id: string }>;

  it('answers the 202 of a deploy that needs approval with approval_id and links.approval at once', async () => {
    const id = 'e0000000-0000-4000-8000-000000000001';
    await store(id);
    const res = await deploy({ rule_id: id });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'pending_approval', unchanged: false, reused: false, approval_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(res.body.links.approval).toBe(`/api/v1/approvals/${res.body.approval_id}`);
    expect((await svc.request('GET', res.body.links.self)).body.approval_id).toBe(res.body.approval_id);
    const direct = await deploy({ rule_id: id, approval_required: false });
    expect(direct.status).toBe(202);
    expect(direct.body).toMatchObject({ approval_id: null, unchanged: false, reused: false });
    expect(direct.body.links.approval).toBeUndefined();
  });

  it('makes one approval of two identical submissions sent at once, and answers the second with it (200)', async () => {
    const id = 'e0000000-0000-4000-8000-000000000002';
    await store(id);
    const body = { rule_id: id.toUpperCase(), noise_budget: { max_alerts_per_day: 10 } };
    const answers = await Promise.all([deploy(body), deploy({ ...body, rule_id: id }), deploy(body)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 202]);
    const [created] = answers.filter((a) => a.status === 202);
    for (const a of answers) expect(a.body).toMatchObject({ id: created!.body.id, approval_id: created!.body.approval_id, status: 'pending_approval' });
    for (const a of answers.filter((x) => x.status === 200)) expect(a.body).toMatchObject({ reused: true, unchanged: false, rule_id: id, version: 1, target: 'local' });
    expect((await pendingOf(id)).map((a) => a.id)).toEqual([created!.body.approval_id]);

    // POST /approvals for the same change (targets as a list, repeated) is equal too.
    const submitted = await svc.request('POST', '/api/v1/approvals', {
      token: requester,
      body: { rule_id: id, version: 1, targets: ['local', 'local'], noise_budget: { max_alerts_per_day: 10, on_exceed: 'suppress' } },
    });
    expect(submitted.status).toBe(200);
    expect(submitted.body).toMatchObject({ id: created!.body.approval_id, status: 'pending' });
    // The database holds one pending approval for the change, whatever the API shows.
    const rows = await svc.database.db
      .select()
      .from(approvals)
      .where(and(eq(approvals.ruleId, id), eq(approvals.status, 'pending')));
    expect(rows).toHaveLength(1);
  });

  it('treats another budget, version or target set as another change', async () => {
    const id = 'e0000000-0000-4000-8000-000000000003';
    await store(id);
    await store(id, 2);
    const first = await deploy({ rule_id: id, version: 1 });
    expect(first.status).toBe(202);
    const budget = await deploy({ rule_id: id, version: 1, noise_budget: { max_alerts_per_day: 3 } });
    const onExceed = await deploy({ rule_id: id, version: 1, noise_budget: { max_alerts_per_day: 3, on_exceed: 'demote' } });
    const latest = await deploy({ rule_id: id });
    const twoTargets = await svc.request('POST', '/api/v1/approvals', { token: requester, body: { rule_id: id, version: 1, targets: ['local', STAGING.name] } });
    for (const r of [budget, onExceed, latest, twoTargets]) expect([r.status, r.body.reused ?? false]).toEqual([202, false]);
    expect(await pendingOf(id)).toHaveLength(5);
    // Once the first is decided, an equal change is a new request: it is no longer pending.
    expect((await decide(first.body.approval_id, 'reject')).status).toBe(200);
    const afterDecision = await deploy({ rule_id: id, version: 1 });
    expect(afterDecision.status).toBe(202);
    expect(afterDecision.body.approval_id).not.toBe(first.body.approval_id);
  });

  it('names the reused approval under the Idempotency-Key of the request that reused it', async () => {
    const id = 'e0000000-0000-4000-8000-000000000004';
    await store(id);
    const first = await deploy({ rule_id: id }, { 'idempotency-key': 'equal-first' });
    const second = await deploy({ rule_id: id }, { 'idempotency-key': 'equal-second' });
    expect([first.status, second.status]).toEqual([202, 200]);
    const retried = await deploy({ rule_id: id }, { 'idempotency-key': 'equal-second' });
    expect(retried.body).toMatchObject({ id: first.body.id, approval_id: first.body.approval_id });
    expect(await pendingOf(id)).toHaveLength(1);
  });

  it('answers a deploy of the version active on the target with 200 and unchanged: true, and starts nothing', async () => {
    const id = 'e0000000-0000-4000-8000-000000000005';
    await store(id);
    const started = await deploy({ rule_id: id, noise_budget: { max_alerts_per_day: 100 } });
    expect((await decide(started.body.approval_id)).status).toBe(200);
    expect((await svc.request('GET', `/api/v1/deployments/${started.body.id}?wait=30`)).body.status).toBe('active');

    for (const approval_required of [true, false]) {
      const again = await deploy({ rule_id: id, approval_required, noise_budget: { max_alerts_per_day: 100, on_exceed: 'suppress' } });
      expect(again.status).toBe(200);
      expect(again.headers.get('location')).toBe(`/api/v1/deployments/${started.body.id}`);
      expect(again.body).toMatchObject({ id: started.body.id, status: 'active', version: 1, unchanged: true, reused: false, approval_id: started.body.approval_id });
    }
    const all = () => svc.request('GET', `/api/v1/deployments?rule_id=${id}`).then((r) => r.body.items.length as number);
    expect(await all()).toBe(1);
    // The same version with another budget is a change: it goes through approval again.
    const rebudgeted = await deploy({ rule_id: id, noise_budget: { max_alerts_per_day: 50 } });
    expect(rebudgeted.status).toBe(202);
    expect(await all()).toBe(2);
  });

  describe('GET /deployments/{id}?wait=N&until=…', () => {
    it('holds a pending approval (until=decided, the default) and answers once the decision was acted on', async () => {
      const id = 'e0000000-0000-4000-8000-000000000006';
      await store(id);
      const started = await deploy({ rule_id: id });

      const t0 = performance.now();
      const undecided = await svc.request('GET', `/api/v1/deployments/${started.body.id}?wait=2`);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(1900);
      expect(undecided.body).toMatchObject({ status: 'pending_approval', approval_id: started.body.approval_id });
      // Without wait it answers at once, as before.
      const t1 = performance.now();
      expect((await svc.request('GET', `/api/v1/deployments/${started.body.id}`)).body.status).toBe('pending_approval');
      expect(performance.now() - t1).toBeLessThan(1500);

      const t2 = performance.now();
      const waiting = svc.request('GET', `/api/v1/deployments/${started.body.id}?wait=30`);
      await new Promise((r) => setTimeout(r, 1000));
      expect((await decide(started.body.approval_id)).status).toBe(200);
      // Held through the decision and the deploy that follows it.
      expect((await waiting).body.status).toBe('active');
      expect(performance.now() - t2).toBeGreaterThanOrEqual(1000);
    });

    it('answers each step with until=any_change, and at once for a final status', async () => {
      const id = 'e0000000-0000-4000-8000-000000000007';
      await store(id);
      await store(id, 2);
      const approved = await deploy({ rule_id: id, version: 1 });
      const stepping = svc.request('GET', `/api/v1/deployments/${approved.body.id}?wait=30&until=any_change`);
      await new Promise((r) => setTimeout(r, 500));
      expect((await decide(approved.body.approval_id)).status).toBe(200);
      // The next status after pending_approval, not where it ends (unless the deploy took under a poll).
      expect(['deploying', 'active']).toContain((await stepping).body.status);

      const rejected = await deploy({ rule_id: id, version: 2 });
      const waiting = svc.request('GET', `/api/v1/deployments/${rejected.body.id}?wait=30&until=any_change`);
      await new Promise((r) => setTimeout(r, 500));
      expect((await decide(rejected.body.approval_id, 'reject')).status).toBe(200);
      expect((await waiting).body.status).toBe('rejected');
      const t0 = performance.now();
      expect((await svc.request('GET', `/api/v1/deployments/${rejected.body.id}?wait=30&until=any_change`)).body.status).toBe('rejected');
      // A change since the status the caller last saw answers at once, not at the next one.
      expect((await svc.request('GET', `/api/v1/deployments/${approved.body.id}?wait=30&until=any_change&from=pending_approval`)).body.status).toBe('active');
      expect(performance.now() - t0).toBeLessThan(1500);
      const t1 = performance.now();
      expect((await svc.request('GET', `/api/v1/deployments/${approved.body.id}?wait=2&until=any_change&from=active`)).body.status).toBe('active');
      expect(performance.now() - t1).toBeGreaterThanOrEqual(1900);
    });

    it('refuses an unknown until with a problem', async () => {
      const [any] = (await svc.request('GET', '/api/v1/deployments?limit=1')).body.items;
      const res = await svc.request('GET', `/api/v1/deployments/${any.id}?wait=1&until=forever`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/query/until' })]);
      const fromWithoutAnyChange = await svc.request('GET', `/api/v1/deployments/${any.id}?wait=1&from=active`);
      expect(fromWithoutAnyChange.status).toBe(400);
      expect(fromWithoutAnyChange.body.errors).toEqual([expect.objectContaining({ pointer: '/query/from' })]);
    });
  });
});
