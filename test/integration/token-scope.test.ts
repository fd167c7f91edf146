import { createApiKey, createTenant, startTestService, type TestService } from '../support/harness';

type Key = { id: string; permissions: string[]; principal?: string };

describe('token hygiene: who may revoke which token, and how long a created token lives', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.close());

  const revoke = (id: string, token: string) => svc.request('DELETE', `/api/v1/settings/api-keys/${id}`, { token });
  const list = async (token: string): Promise<Key[]> => {
    const res = await svc.request('GET', '/api/v1/settings/api-keys?limit=500', { token });
    expect(res.status).toBe(200);
    return res.body.items;
  };

  it('lets a token revoke only tokens whose permissions and environments it holds itself', async () => {
    const tenantAdmin = await createTenant(svc, 'narrowed');
    const tenantAdminId = (await list(tenantAdmin)).find((k) => k.permissions.includes('admin'))!.id;
    const devAdmin = await createApiKey(svc, tenantAdmin, { name: 'dev admin', permissions: ['admin'], environments: ['dev'] });
    const wideDeployer = await createApiKey(svc, tenantAdmin, { name: 'deployer', permissions: ['deploy'] });
    const prodReader = await createApiKey(svc, tenantAdmin, { name: 'prod reader', permissions: ['rules:read'], environments: ['prod'] });
    const devReader = await createApiKey(svc, tenantAdmin, { name: 'dev reader', permissions: ['rules:read'], environments: ['dev'] });
    const deployer = await createApiKey(svc, tenantAdmin, { name: 'all-env deployer', permissions: ['deploy', 'rules:read'] });
    const narrowAdmin = await createApiKey(svc, tenantAdmin, { name: 'deploy-only admin', permissions: ['deploy', 'admin'], environments: ['dev'] });

    // Wider environments than the revoker's: refused, and the token still works.
    for (const [id, what] of [
      [wideDeployer.id, /environments/],
      [prodReader.id, /prod/],
      [tenantAdminId, /environments/],
    ] as const) {
      const res = await revoke(id, devAdmin.token);
      expect(res.status).toBe(403);
      expect(res.body.type).toBe('https://detflow.dev/problems/insufficient-scope');
      expect(res.body.detail).toMatch(what);
    }
    expect((await svc.request('GET', '/api/v1/deployments', { token: wideDeployer.token })).status).not.toBe(401);
    // Inside its own scope: allowed.
    expect((await revoke(devReader.id, devAdmin.token)).status).toBe(200);
    expect((await revoke(narrowAdmin.id, devAdmin.token)).status).toBe(200);
    // The tenant admin holds everything of its tenant.
    expect((await revoke(deployer.id, tenantAdmin)).status).toBe(200);
    expect((await revoke(devAdmin.id, tenantAdmin)).status).toBe(200);
  });

  it("keeps the operator's tokens out of a tenant admin's reach: not listed, not revocable", async () => {
    const bootstrapId = (await list(svc.token)).find((k) => k.permissions.includes('operator'))!.id;
    const secondOperator = await createApiKey(svc, svc.token, { name: 'second operator', permissions: ['operator'] });
    const defaultAdmin = await createApiKey(svc, svc.token, { name: 'default admin', permissions: ['admin'] });

    const seen = await list(defaultAdmin.token);
    expect(seen.map((k) => k.id)).toContain(defaultAdmin.id);
    expect(seen.filter((k) => k.permissions.includes('operator'))).toEqual([]);

    for (const id of [bootstrapId, secondOperator.id]) {
      const res = await revoke(id, defaultAdmin.token);
      expect(res.status).toBe(404);
    }
    expect((await svc.request('GET', '/api/v1/settings/tenants', { token: svc.token })).status).toBe(200);
    // An operator manages operator tokens.
    expect((await list(svc.token)).map((k) => k.id)).toEqual(expect.arrayContaining([bootstrapId, secondOperator.id]));
    expect((await revoke(secondOperator.id, svc.token)).status).toBe(200);
    expect((await svc.request('GET', '/api/v1/settings/tenants', { token: secondOperator.token })).status).toBe(401);
  });

  it('caps the expiry of a created token at its creator’s, and says so', async () => {
    const creatorExpiry = new Date(Date.now() + 10 * 60_000);
    const shortAdmin = await createApiKey(svc, svc.token, { name: 'short admin', permissions: ['admin'], expires_at: creatorExpiry.toISOString() });
    const create = (body: Record<string, unknown>) =>
      svc.request('POST', '/api/v1/settings/api-keys', { token: shortAdmin.token, body: { name: 'child', permissions: ['rules:read'], ...body } });

    const never = await create({});
    expect(never.status).toBe(201);
    expect(never.body).toMatchObject({ expires_at: creatorExpiry.toISOString(), expires_at_capped: true });
    const later = await create({ expires_at: new Date(Date.now() + 86_400_000).toISOString() });
    expect(later.body).toMatchObject({ expires_at: creatorExpiry.toISOString(), expires_at_capped: true });
    const sooner = new Date(Date.now() + 5 * 60_000);
    const within = await create({ expires_at: sooner.toISOString() });
    expect(within.body).toMatchObject({ expires_at: sooner.toISOString(), expires_at_capped: false });
    // The list shows the capped expiry too.
    const listed = (await list(svc.token)).find((k) => k.id === never.body.id) as Key & { expires_at: string };
    expect(listed.expires_at).toBe(creatorExpiry.toISOString());

    // A creator that never expires leaves the expiry as asked.
    const free = await svc.request('POST', '/api/v1/settings/api-keys', { body: { name: 'forever', permissions: ['rules:read'] } });
    expect(free.body).toMatchObject({ expires_at: null, expires_at_capped: false });

    // The OpenAPI document describes the field.
    const doc = (await svc.request('GET', '/api/v1/openapi.json', { token: null })).body;
    expect(JSON.stringify(doc.components.schemas.CreatedApiKey)).toMatch(/"expires_at_capped":\{"type":"boolean"/);
  });
});
