import { and, eq } from 'drizzle-orm';
import { deployments } from '../../db/schema';
import { sigmaRule, startTestService, type TestService } from '../support/harness';

const RULE_ID = '7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

describe('deploy walking skeleton: API → Temporal → worker → activities → database → API', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: sigmaRule(RULE_ID, 'v1') } })).status).toBe(201);
  });
  afterAll(() => svc.close());

  const deploy = (key?: string, body: Record<string, unknown> = {}) =>
    svc.request('POST', '/api/v1/rules/deploy', {
      body: { rule_id: RULE_ID, target: 'local', approval_required: false, ...body },
      ...(key ? { headers: { 'idempotency-key': key } } : {}),
    });

  const waitActive = async (id: string) => {
    const res = await svc.request('GET', `/api/v1/deployments/${id}?wait=20`);
    expect(res.status).toBe(200);
    if (res.body.status === 'deploying') {
      // Say where the run is stuck, from its history, instead of a bare status mismatch.
      const history = await svc.client.workflow.getHandle(res.body.workflow_id).fetchHistory();
      const events = (history.events ?? []).map(
        (e) => `${String(e.eventType)}${e.activityTaskFailedEventAttributes ? `: ${e.activityTaskFailedEventAttributes.failure?.message}` : ''}`,
      );
      throw new Error(`deployment ${id} still deploying after 20 s; history: ${events.join(' | ')}`);
    }
    return res.body;
  };

  it('stores a rule version, and the same text again is not a new version', async () => {
    const again = await svc.request('POST', '/api/v1/rules', { body: { rule: sigmaRule(RULE_ID, 'v1') } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ rule_id: RULE_ID, version: 1, created: false });
    const rule = await svc.request('GET', `/api/v1/rules/${RULE_ID}`);
    expect(rule.body).toMatchObject({ rule_id: RULE_ID, latest_version: 1, level: 'high', tags: [], logsource: { category: 'process_creation', product: 'windows' } });
  });

  it('answers 202 with the run links and ends active, recorded by the workflow', async () => {
    const res = await deploy();
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/api/v1/deployments/${res.body.id}`);
    expect(res.body.workflow_id).toBe(`deploy/default/${RULE_ID}/local/${res.body.id}`);
    expect(res.body.run_id).toEqual(expect.any(String));
    expect(res.body.links.run).toContain(encodeURIComponent(res.body.workflow_id));
    const done = await waitActive(res.body.id);
    expect(done).toMatchObject({ status: 'active', version: 1, target: 'local', environment: 'dev', approval_required: false });
    expect(done.activated_at).toEqual(expect.any(String));

    // The workflow itself says the same, through its query, and carries its search attributes.
    const handle = svc.client.workflow.getHandle(res.body.workflow_id);
    expect(await handle.result()).toMatchObject({ status: 'active', deployments: [{ deployment_id: res.body.id, target: 'local', status: 'active' }] });
    const description = await handle.describe();
    expect(description.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value])).toEqual(
      expect.arrayContaining([
        ['DetflowTenant', 'default'],
        ['DetflowRuleId', RULE_ID],
        ['DetflowTarget', 'local'],
        ['DetflowKind', 'deploy'],
        ['DetflowStatus', 'active'],
      ]),
    );
  });

  it('returns the same deployment and run for the same Idempotency-Key, and a second run for a second key', async () => {
    // v1 is live since the test before: each change here sets a budget of its own, or it would change nothing.
    const first = await deploy('ci-build-1001', { noise_budget: { max_alerts_per_day: 900 } });
    const again = await deploy('ci-build-1001', { noise_budget: { max_alerts_per_day: 900 } });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.run_id).toBe(first.body.run_id);
    await waitActive(first.body.id);
    // Even after the run finished, the key still names it.
    const late = await deploy('ci-build-1001', { noise_budget: { max_alerts_per_day: 900 } });
    expect(late.body).toMatchObject({ id: first.body.id, run_id: first.body.run_id, status: 'active' });

    // Another key for the same change (the version is live) would change nothing: this one sets a budget.
    const second = await deploy('ci-build-1002', { noise_budget: { max_alerts_per_day: 1000 } });
    expect(second.status).toBe(202);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.run_id).not.toBe(first.body.run_id);
    await waitActive(second.body.id);
    const rows = await svc.database.db.select().from(deployments).where(eq(deployments.id, first.body.id));
    expect(rows).toHaveLength(1);
    // The newer deployment superseded the older one: exactly one is active.
    const active = await svc.database.db
      .select()
      .from(deployments)
      .where(and(eq(deployments.ruleId, RULE_ID), eq(deployments.status, 'active')));
    expect(active.map((d) => d.id)).toEqual([second.body.id]);
    expect((await svc.request('GET', `/api/v1/deployments/${first.body.id}`)).body.status).toBe('superseded');
  });

  it('refuses an Idempotency-Key reused with a different request', async () => {
    expect((await deploy('ci-build-2000')).status).toBe(202);
    const res = await deploy('ci-build-2000', { noise_budget: { max_alerts_per_day: 5 } });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('https://detflow.dev/problems/idempotency-key-reused');
  });

  it('deploys a named version and answers 404 for one that does not exist', async () => {
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: sigmaRule(RULE_ID, 'v2') } })).body.version).toBe(2);
    const v1 = await deploy(undefined, { version: 1 });
    expect((await waitActive(v1.body.id)).version).toBe(1);
    const missing = await deploy(undefined, { version: 9 });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/no version 9/);
  });

  it('lists deployments newest first, paged by an opaque cursor, filtered by rule and status', async () => {
    const all = await svc.request('GET', `/api/v1/deployments?rule_id=${RULE_ID}&limit=500`);
    expect(all.body.items.length).toBeGreaterThanOrEqual(3);
    const first = await svc.request('GET', `/api/v1/deployments?rule_id=${RULE_ID}&limit=1`);
    const second = await svc.request('GET', `/api/v1/deployments?rule_id=${RULE_ID}&limit=1&cursor=${first.body.next_cursor}`);
    expect([first.body.items[0].id, second.body.items[0].id]).toEqual(all.body.items.slice(0, 2).map((d: { id: string }) => d.id));
    const active = await svc.request('GET', `/api/v1/deployments?rule_id=${RULE_ID}&status=active`);
    expect(active.body.items.every((d: { status: string }) => d.status === 'active')).toBe(true);
    expect((await svc.request('GET', '/api/v1/deployments?cursor=bm9wZQ')).status).toBe(400);
  });

  it('answers 404 for an unknown rule, target or deployment', async () => {
    expect((await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: 'nope', target: 'local', approval_required: false } })).status).toBe(404);
    expect((await deploy(undefined, { target: 'splunk-prod' })).status).toBe(404);
    expect((await svc.request('GET', '/api/v1/deployments/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});
