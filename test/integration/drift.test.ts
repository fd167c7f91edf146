import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { targets } from '../../db/schema';
import { createApiKey, processRule, startTestService, until, type TestService } from '../support/harness';

const RULE = 'd1000000-0000-4000-8000-000000000001';

describe('drift detection on the local target', () => {
  let svc: TestService;
  let localId: string;
  beforeAll(async () => {
    svc = await startTestService();
    const [t] = await svc.database.db
      .select()
      .from(targets)
      .where(and(eq(targets.tenantId, 'default'), eq(targets.name, 'local')));
    localId = t!.id;
    // Deliveries are recorded whether or not the receiver answers: nothing listens on this port.
    expect((await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: 'http://127.0.0.1:9/hook', secret: 'a-webhook-secret-of-some-length' } })).status).toBe(200);
  });
  afterAll(() => svc.close());

  const check = async () => {
    const res = await svc.request('POST', '/api/v1/settings/targets/local/drift-check');
    expect(res.status).toBe(200);
    return res.body as {
      target: string;
      checked_at: string | null;
      items: Array<{ kind: string; object: string; rule_id: string | null; deployment_id: string | null; detail: string }>;
    };
  };
  const driftDeliveries = async () =>
    (await svc.request('GET', '/api/v1/settings/webhook/deliveries?event=deployment.drifted')).body.items as Array<{ payload: { data: Record<string, unknown> } }>;

  it('finds a live deployment deleted from the target, notifies it once, shows it on the deployment and the rule, and restores it', async () => {
    expect((await svc.request('GET', '/api/v1/settings/targets/local/drift')).body).toEqual({ target: 'local', checked_at: null, items: [] });
    await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(RULE, { title: 'Drift subject', level: 'low', image: '\\drift.exe' }) } });
    const deployed = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE, target: 'local', approval_required: false } });
    expect(deployed.status).toBe(202);
    await svc.client.workflow.getHandle(deployed.body.workflow_id).result();
    const deploymentId = deployed.body.id as string;

    const clean = await check();
    expect(clean.items).toEqual([]);
    expect(clean.checked_at).not.toBeNull();

    // Out of band: the rule disappears from the target without detflow taking it off.
    expect((await svc.siem.local.undeploy('default', deploymentId)).changed).toBe(true);
    const found = await check();
    expect(found.items).toEqual([expect.objectContaining({ kind: 'missing', object: RULE, rule_id: RULE, deployment_id: deploymentId })]);
    // Seen again by the next check: still one open departure, notified once.
    expect((await check()).items).toHaveLength(1);
    const notified = await until('the drift notification', async () => {
      const items = await driftDeliveries();
      return items.length > 0 ? items : undefined;
    });
    expect(notified).toHaveLength(1);
    expect(notified[0]!.payload.data).toMatchObject({ target: 'local', object: RULE, kind: 'missing', deployment_id: deploymentId });

    const view = await svc.request('GET', `/api/v1/deployments/${deploymentId}`);
    expect(view.body.drift).toEqual([expect.objectContaining({ kind: 'missing', object: RULE })]);
    // The list reads a page's deployments together: each item is what reading it alone gives,
    // the drift on this deployment only.
    const otherRule = randomUUID();
    await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(otherRule, { title: 'Drift bystander', level: 'low', image: '\\bystander.exe' }) } });
    const other = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: otherRule, target: 'local', approval_required: false } });
    await svc.client.workflow.getHandle(other.body.workflow_id).result();
    const listed = await svc.request('GET', '/api/v1/deployments?limit=500');
    expect(listed.body.items.length).toBeGreaterThanOrEqual(2);
    for (const item of listed.body.items as Array<{ id: string }>) {
      expect(item).toEqual((await svc.request('GET', `/api/v1/deployments/${item.id}`)).body);
    }
    expect(listed.body.items.find((d: { id: string }) => d.id === deploymentId).drift).toHaveLength(1);
    expect(listed.body.items.find((d: { id: string }) => d.id === other.body.id).drift).toEqual([]);
    const health = await svc.request('GET', `/api/v1/health/rules/${RULE}`);
    expect(health.status).toBe(200);
    expect(health.body.drift).toEqual([expect.objectContaining({ kind: 'missing', target: 'local' })]);
    expect(health.body.reasons.some((r: string) => r.startsWith('drift on local:'))).toBe(true);

    const restored = await svc.request('POST', `/api/v1/deployments/${deploymentId}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: deploymentId, status: 'active', drift: [] });
    expect((await svc.siem.local.listDeployed('default', localId)).map((d) => d.deploymentId)).toContain(deploymentId);
    expect((await svc.request('GET', '/api/v1/settings/targets/local/drift')).body.items).toEqual([]);
    expect(await driftDeliveries()).toHaveLength(1);
  });

  it('reports an object under the naming scheme that detflow did not deploy as unmanaged', async () => {
    const stray = randomUUID();
    await svc.siem.local.deploy({
      deploymentId: stray,
      tenantId: 'default',
      targetId: localId,
      rule: { ruleId: 'd1000000-0000-4000-8000-0000000000ff', version: 1, query: 'false' },
    });
    const found = await check();
    expect(found.items).toEqual([expect.objectContaining({ kind: 'unmanaged', rule_id: 'd1000000-0000-4000-8000-0000000000ff', deployment_id: null })]);
    await svc.siem.local.undeploy('default', stray);
    expect((await check()).items).toEqual([]);
  });

  it('refuses what the token may not do: restore and the check need deploy, and a foreign deployment is unknown', async () => {
    const reader = await createApiKey(svc, svc.token, { name: 'reader', permissions: ['rules:read'] });
    expect((await svc.request('GET', '/api/v1/settings/targets/local/drift', { token: reader.token })).status).toBe(200);
    expect((await svc.request('POST', '/api/v1/settings/targets/local/drift-check', { token: reader.token })).status).toBe(403);
    expect((await svc.request('POST', `/api/v1/deployments/${randomUUID()}/restore`)).status).toBe(404);
    expect((await svc.request('GET', '/api/v1/settings/targets/nowhere/drift')).status).toBe(404);
  });
});
