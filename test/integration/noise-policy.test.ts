import http from 'node:http';
import { eq } from 'drizzle-orm';
import { detectionRuns } from '../../db/schema';
import { createApiKey, detectEverySecond, imageRule, startTestService, type TestService, until } from '../support/harness';

/**
 * `noise_budget.on_exceed` driven by real scheduled detection on the local target: a Temporal
 * Schedule per deployment every second, events ingested over HTTP, notifications to a webhook
 * receiver on loopback.
 */

let seq = 0;
const event = (image: string) => JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} ${++seq}` });

describe('noise_budget.on_exceed at run time', () => {
  let svc: TestService;
  let receiver: http.Server;
  const received: Array<{ event: string; data: Record<string, any> }> = [];

  beforeAll(async () => {
    svc = await startTestService();
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
    expect((await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${port}/hook`, secret: 'a-webhook-secret-of-some-length' } })).status).toBe(
      200,
    );
    await detectEverySecond(svc);
  });
  afterAll(async () => {
    await svc.close();
    await new Promise((r) => receiver.close(r));
  });

  const ingest = async (image: string, n: number) => {
    const res = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: Array.from({ length: n }, () => event(image)).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(res.body.accepted).toBe(n);
  };
  async function deploy(id: string, image: string, revision: number, noiseBudget?: Record<string, unknown>) {
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(id, image, revision) } })).status).toBeLessThan(300);
    const res = await svc.request('POST', '/api/v1/rules/deploy', {
      body: { rule_id: id, target: 'local', approval_required: false, version: revision, ...(noiseBudget ? { noise_budget: noiseBudget } : {}) },
    });
    expect(res.status).toBe(202);
    expect(await svc.client.workflow.getHandle(res.body.workflow_id).result()).toMatchObject({ status: 'active' });
    return res.body.id as string;
  }
  const deployment = async (id: string) => (await svc.request('GET', `/api/v1/deployments/${id}`)).body;
  const alertsOf = async (id: string) => (await svc.request('GET', `/api/v1/alerts?deployment_id=${id}&limit=500`)).body.items as Array<{ status: string }>;
  const notified = (event: string, deploymentOrRule: string) =>
    until(`${event} for ${deploymentOrRule}`, async () =>
      received.find((b) => b.event === event && (b.data.deployment_id === deploymentOrRule || b.data.rule_id === deploymentOrRule)),
    );

  it('rejects an unknown policy with a 400 naming the field', async () => {
    await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule('b7000000-0000-4000-8000-000000000009', 'x.exe') } });
    const res = await svc.request('POST', '/api/v1/rules/deploy', {
      body: { rule_id: 'b7000000-0000-4000-8000-000000000009', target: 'local', approval_required: false, noise_budget: { max_alerts_per_day: 1, on_exceed: 'panic' } },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/body/noise_budget/on_exceed']);
  });

  it('demote: stops alerting, keeps evaluating in shadow, and alerts again once a person promotes it', async () => {
    const id = await deploy('b7000000-0000-4000-8000-000000000001', 'demote.exe', 1, { max_alerts_per_day: 2, on_exceed: 'demote' });
    await ingest('demote.exe', 5);
    const demoted = await until('demoted', async () => {
      const d = await deployment(id);
      return d.status === 'demoted' ? d : undefined;
    });
    expect(demoted.demotion).toMatchObject({ alerts: 5, budget: 2, reason: expect.stringMatching(/noise budget exceeded/) });
    const first = await alertsOf(id);
    expect(first.filter((a) => a.status === 'open')).toHaveLength(2);
    expect(first.filter((a) => a.status === 'suppressed')).toHaveLength(3);
    expect((await notified('noise_budget.exceeded', id)).data).toMatchObject({ on_exceed: 'demote', alerts: 5, budget: 2 });
    expect((await notified('deployment.demoted', id)).data).toMatchObject({ rule_id: 'b7000000-0000-4000-8000-000000000001', target: 'local' });

    // In shadow: matches are counted on the deployment, no alert is written.
    await ingest('demote.exe', 4);
    const shadowed = await until('4 shadow matches', async () => {
      const d = await deployment(id);
      return d.demotion.shadow_matches >= 4 ? d : undefined;
    });
    expect(shadowed.demotion.shadow_matches).toBe(4);
    expect(shadowed.status).toBe('demoted');
    expect(await alertsOf(id)).toHaveLength(5);
    const runs = await svc.database.db.select().from(detectionRuns).where(eq(detectionRuns.deploymentId, id));
    expect(runs.filter((r) => r.mode === 'shadow').every((r) => r.alertsRaised === 0 && r.alertsSuppressed === 0)).toBe(true);

    // Promotion: only a demoted deployment, only within the token's environments.
    const prodOnly = await createApiKey(svc, svc.token, { name: 'prod deployer', permissions: ['deploy'], environments: ['prod'] });
    // A deployment outside the token's environments is not found for it (issue 17: environment scope).
    expect((await svc.request('POST', `/api/v1/deployments/${id}/promote`, { token: prodOnly.token, body: {} })).status).toBe(404);
    const reader = await createApiKey(svc, svc.token, { name: 'reader', permissions: ['rules:read'] });
    expect((await svc.request('POST', `/api/v1/deployments/${id}/promote`, { token: reader.token, body: {} })).status).toBe(403);
    expect((await svc.request('POST', '/api/v1/deployments/00000000-0000-4000-8000-000000000000/promote', { body: {} })).status).toBe(404);
    const promoted = await svc.request('POST', `/api/v1/deployments/${id}/promote`, {
      body: { comment: 'tuned the filter upstream', noise_budget: { max_alerts_per_day: 3, on_exceed: 'demote' } },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({
      status: 'active',
      noise_budget: { max_alerts_per_day: 3, on_exceed: 'demote' },
      demotion: { promoted_by: expect.any(String), comment: 'tuned the filter upstream', promoted_at: expect.any(String) },
    });
    expect((await svc.request('POST', `/api/v1/deployments/${id}/promote`, { body: {} })).status).toBe(409);
    expect((await notified('deployment.promoted', id)).data).toMatchObject({ comment: 'tuned the filter upstream' });

    // The events seen in shadow never alert late; new ones do, against a budget counted from the promotion.
    await ingest('demote.exe', 1);
    const after = await until('a new open alert', async () => {
      const list = await alertsOf(id);
      return list.filter((a) => a.status === 'open').length >= 3 ? list : undefined;
    });
    expect(after).toHaveLength(6);
    expect((await deployment(id)).status).toBe('active');
  });

  it('rollback: a Rollback run restores the version deployed before, with the reason recorded and notified', async () => {
    const ruleId = 'b7000000-0000-4000-8000-000000000002';
    const v1 = await deploy(ruleId, 'rollback.exe', 1);
    const v2 = await deploy(ruleId, 'rollback.exe', 2, { max_alerts_per_day: 1, on_exceed: 'rollback' });
    expect((await deployment(v1)).status).toBe('superseded');
    await ingest('rollback.exe', 3);
    const ended = await until('v2 rolled back', async () => {
      const d = await deployment(v2);
      return d.status === 'rolled_back' ? d : undefined;
    });
    expect(ended.error).toBe('rolled back: noise budget exceeded: 3 alerts against 1/day');
    const live = (await svc.request('GET', `/api/v1/deployments?rule_id=${ruleId}&status=active`)).body.items;
    expect(live).toHaveLength(1);
    // The restored version keeps the budget but only suppresses: no chain of rollbacks by itself.
    expect(live[0]).toMatchObject({ version: 1, requested_by: null, noise_budget: { max_alerts_per_day: 1, on_exceed: 'suppress' } });
    expect(live[0].workflow_id).toBe(`rollback/default/${ruleId}/local/noise-budget-${v2}`);
    const run = await svc.client.workflow.getHandle(live[0].workflow_id).result();
    expect(run).toMatchObject({ status: 'completed', restored_version: 1, removed: false });
    expect((await notified('rollback.completed', ruleId)).data).toMatchObject({
      from_version: 2,
      restored_version: 1,
      reason: 'noise budget exceeded: 3 alerts against 1/day',
    });
    expect((await notified('noise_budget.exceeded', v2)).data).toMatchObject({ on_exceed: 'rollback' });
    const onTarget = (await svc.siem.local.listDeployed('default')).filter((d) => d.ruleId === ruleId);
    expect(onTarget.map((d) => d.version)).toEqual([1]);

    // The restored version detects from where v2 stopped: the 3 events are not alerted again.
    await ingest('rollback.exe', 1);
    await until('restored version alerts', async () => ((await alertsOf(live[0].id)).length === 1 ? true : undefined));
    expect(await alertsOf(v1)).toHaveLength(0);
  });

  it('rollback with no earlier version takes the rule off the target', async () => {
    const ruleId = 'b7000000-0000-4000-8000-000000000003';
    const only = await deploy(ruleId, 'only.exe', 1, { max_alerts_per_day: 0, on_exceed: 'rollback' });
    await ingest('only.exe', 1);
    await until('removed', async () => ((await deployment(only)).status === 'rolled_back' ? true : undefined));
    expect((await svc.request('GET', `/api/v1/deployments?rule_id=${ruleId}&status=active`)).body.items).toEqual([]);
    expect((await notified('rollback.completed', ruleId)).data).toMatchObject({ removed: true, restored_version: null });
    expect((await svc.siem.local.listDeployed('default')).some((d) => d.ruleId === ruleId)).toBe(false);
    expect((await alertsOf(only)).map((a) => a.status)).toEqual(['suppressed']);
  });
});
