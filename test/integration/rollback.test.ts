import { and, eq } from 'drizzle-orm';
import { deployments } from '../../db/schema';
import { createApiKey, processRule, startTestService, type TestService } from '../support/harness';

const rule = (id: string, revision: number) => processRule(id, { title: `Rollback subject (revision ${revision})`, level: 'low', image: `\\r${revision}.exe` });

describe('POST /rules/rollback', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.close());

  async function deploy(id: string, revision: number) {
    await svc.request('POST', '/api/v1/rules', { body: { rule: rule(id, revision) } });
    const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: id, target: 'local', approval_required: false, version: revision } });
    expect(res.status).toBe(202);
    expect(await svc.client.workflow.getHandle(res.body.workflow_id).result()).toMatchObject({ status: 'active' });
    return res.body.id as string;
  }
  const rollback = async (body: Record<string, unknown>, token?: string) => {
    const res = await svc.request('POST', '/api/v1/rules/rollback', { body: { target: 'local', reason: 'too noisy', ...body }, ...(token ? { token } : {}) });
    if (res.status === 202) res.body.result = await svc.client.workflow.getHandle(res.body.workflow_id).result();
    return res;
  };
  const active = async (id: string) =>
    svc.database.db
      .select()
      .from(deployments)
      .where(and(eq(deployments.ruleId, id), eq(deployments.status, 'active')));

  it('restores the version deployed before, and the live one ends rolled back with the reason', async () => {
    const id = 'a1000000-0000-4000-8000-000000000001';
    await deploy(id, 1);
    const v2 = await deploy(id, 2);
    const res = await rollback({ rule_id: id });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ from_version: 2, restores_version: 1 });
    expect(res.body.result).toMatchObject({ status: 'completed', restored_version: 1, removed: false });
    const now = await active(id);
    expect(now.map((d) => d.version)).toEqual([1]);
    const ended = (await svc.request('GET', `/api/v1/deployments/${v2}`)).body;
    expect(ended).toMatchObject({ status: 'rolled_back', error: 'rolled back: too noisy' });
    const live = await svc.siem.local.listDeployed('default');
    expect(live.filter((d) => d.ruleId === id).map((d) => d.version)).toEqual([1]);
  });

  it('restores a named version', async () => {
    const id = 'a1000000-0000-4000-8000-000000000002';
    await deploy(id, 1);
    await deploy(id, 2);
    await deploy(id, 3);
    const res = await rollback({ rule_id: id, to_version: 1 });
    expect(res.body.result).toMatchObject({ restored_version: 1 });
    expect((await active(id)).map((d) => d.version)).toEqual([1]);
    expect((await rollback({ rule_id: id, to_version: 1 })).status).toBe(409);
    expect((await rollback({ rule_id: id, to_version: 9 })).status).toBe(404);
  });

  it('removes the rule when there is no earlier version, and 409 when nothing is deployed', async () => {
    const id = 'a1000000-0000-4000-8000-000000000003';
    const only = await deploy(id, 1);
    const res = await rollback({ rule_id: id });
    expect(res.body).toMatchObject({ restores_version: null });
    expect(res.body.result).toMatchObject({ status: 'completed', removed: true });
    expect(await active(id)).toEqual([]);
    expect((await svc.request('GET', `/api/v1/deployments/${only}`)).body.status).toBe('rolled_back');
    expect((await svc.siem.local.listDeployed('default')).some((d) => d.ruleId === id)).toBe(false);
    const again = await rollback({ rule_id: id });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/nothing to roll back/);
  });

  it('removes the rule on remove: true even when an earlier version exists; remove with to_version is a 400', async () => {
    const id = 'a1000000-0000-4000-8000-000000000005';
    await deploy(id, 1);
    const v2 = await deploy(id, 2);
    const both = await rollback({ rule_id: id, remove: true, to_version: 1 });
    expect(both.status).toBe(400);
    expect(both.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/body/remove']);
    const res = await rollback({ rule_id: id, remove: true, reason: 'deleted from the repository' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ from_version: 2, restores_version: null });
    expect(res.body.links.restored).toBeUndefined();
    expect(res.body.result).toMatchObject({ status: 'completed', removed: true, restored_version: null });
    expect(await active(id)).toEqual([]);
    expect((await svc.request('GET', `/api/v1/deployments/${v2}`)).body).toMatchObject({ status: 'rolled_back', error: 'rolled back: deleted from the repository' });
    expect((await svc.siem.local.listDeployed('default')).some((d) => d.ruleId === id)).toBe(false);
  });

  it('refuses a target outside the token environments, and unknown rules or targets', async () => {
    const id = 'a1000000-0000-4000-8000-000000000004';
    await deploy(id, 1);
    const prodOnly = await createApiKey(svc, svc.token, { name: 'prod', permissions: ['deploy'], environments: ['prod'] });
    expect((await rollback({ rule_id: id }, prodOnly.token)).status).toBe(403);
    expect((await rollback({ rule_id: 'a1000000-0000-4000-8000-0000000000ff' })).status).toBe(404);
    expect((await rollback({ rule_id: id, target: 'elsewhere' })).status).toBe(404);
    expect((await svc.request('POST', '/api/v1/rules/rollback', { body: { rule_id: id, target: 'local' } })).status).toBe(400);
  });
});
