import { createApiKey, createTenant, processRule, startTestService, type TestService } from '../support/harness';

const RULE_ID = 'f0000000-0000-4000-8000-0000000004e5';

type Key = { id: string; name: string; principal: string };

describe('four-eyes by person: tokens act for a principal', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(RULE_ID) } })).status).toBe(201);
  });
  afterAll(() => svc.close());

  const submit = (token: string) => svc.request('POST', '/api/v1/approvals', { token, body: { rule_id: RULE_ID, targets: ['local'] } });
  const decide = (id: string, token: string, decision = 'approve') => svc.request('POST', `/api/v1/approvals/${id}/decision`, { token, body: { decision, comment: 'ok' } });
  const keys = async (token: string): Promise<Key[]> => (await svc.request('GET', '/api/v1/settings/api-keys?limit=500', { token })).body.items;

  it('gives the bootstrap token and a tenant’s first admin token a principal', async () => {
    expect((await keys(svc.token)).find((k) => k.name === 'bootstrap admin')!.principal).toBe('bootstrap');
    const tenantAdmin = await createTenant(svc, 'persons');
    expect((await keys(tenantAdmin)).find((k) => k.name === 'tenant admin')!.principal).toBe('admin@persons');
  });

  it('refuses a decision by the person who requested the change, whichever of their tokens decides', async () => {
    const alice = await svc.request('POST', '/api/v1/settings/api-keys', {
      body: { name: 'alice', permissions: ['admin'], principal: 'alice@example.com' },
    });
    expect(alice.status).toBe(201);
    expect(alice.body.principal).toBe('alice@example.com');

    const submitted = await submit(alice.body.token);
    expect(submitted.status).toBe(202);
    expect(submitted.body.requested_by_principal).toBe('alice@example.com');
    const approvalId: string = submitted.body.id;
    const deploymentId: string = submitted.body.deployment_ids[0];
    expect((await svc.request('GET', `/api/v1/deployments/${deploymentId}`)).body.requested_by_principal).toBe('alice@example.com');

    // Alice mints an approve token for herself: it inherits her principal, and is refused.
    const aliceReviewer = await createApiKey(svc, alice.body.token, { name: 'alice approves', permissions: ['approve', 'rules:read'] });
    const own = await decide(approvalId, aliceReviewer.token);
    expect(own.status).toBe(403);
    expect(own.body.type).toBe('https://detflow.dev/problems/insufficient-scope');
    expect(own.body.detail).toMatch(/alice@example\.com/);
    expect((await svc.request('GET', `/api/v1/approvals/${approvalId}`)).body).toMatchObject({ status: 'pending', decided_by: null, decided_by_principal: null });

    // Another person decides.
    const bob = await createApiKey(svc, svc.token, { name: 'bob', permissions: ['approve', 'rules:read'], principal: 'bob@example.com' });
    const decided = await decide(approvalId, bob.token);
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({
      status: 'approved',
      decided_by: bob.id,
      decided_by_principal: 'bob@example.com',
      requested_by_principal: 'alice@example.com',
    });

    // The audit names the person of every request.
    const audit = await svc.request('GET', '/api/v1/settings/audit?limit=500');
    const byRequest = new Map(audit.body.items.map((e: { request_id: string; principal: string | null }) => [e.request_id, e.principal]));
    expect(byRequest.get(submitted.headers.get('x-request-id'))).toBe('alice@example.com');
    expect(byRequest.get(own.headers.get('x-request-id'))).toBe('alice@example.com');
    expect(byRequest.get(decided.headers.get('x-request-id'))).toBe('bob@example.com');
  });

  it('lets a token name another principal only when it is an admin, and otherwise inherits its own', async () => {
    const tenantAdmin = await createTenant(svc, 'delegates');
    const carol = await createApiKey(svc, tenantAdmin, { name: 'carol', permissions: ['admin'], principal: 'carol' });
    const inherited = await svc.request('POST', '/api/v1/settings/api-keys', { token: carol.token, body: { name: 'carol ci', permissions: ['deploy'] } });
    expect(inherited.body.principal).toBe('carol');
    const same = await svc.request('POST', '/api/v1/settings/api-keys', { token: carol.token, body: { name: 'carol again', permissions: ['deploy'], principal: 'carol' } });
    expect(same.status).toBe(201);
  });
});
