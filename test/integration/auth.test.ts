import { createApiKey, createTenant, sigmaRule, startTestService, type TestService } from '../support/harness';
import { generateToken } from '../../domain/tenants/token-format';

const RULE_ID = '0f9b1f4e-8d7c-4b6a-9e5d-3c2b1a0f9e8d';

// Every endpoint of the contract (spec section 4), plus the ones this service adds.
const CONTRACT_ENDPOINTS: Array<[string, string]> = [
  ['POST', '/api/v1/rules/lint'],
  ['POST', '/api/v1/rules/test'],
  ['POST', '/api/v1/rules/replay'],
  ['POST', '/api/v1/rules/shadow'],
  ['POST', '/api/v1/rules/deploy'],
  ['POST', '/api/v1/rules/rollback'],
  ['POST', '/api/v1/approvals'],
  ['POST', '/api/v1/approvals/abc/decision'],
  ['GET', '/api/v1/health/rules/abc'],
  ['GET', '/api/v1/health/dashboard'],
  ['GET', '/api/v1/health/roi'],
  ['POST', '/api/v1/rules'],
  ['GET', `/api/v1/rules/${RULE_ID}`],
  ['GET', '/api/v1/deployments/6370903f-e866-8dd1-bb91-8fcb5a06ddce'],
  ['GET', '/api/v1/settings/api-keys'],
  ['POST', '/api/v1/settings/api-keys'],
  ['GET', '/api/v1/settings/audit'],
  ['GET', '/api/v1/settings/tenants'],
];

describe('authentication and scopes', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: sigmaRule(RULE_ID) } })).status).toBe(201);
  });
  afterAll(() => svc.close());

  function expectUnauthorized(res: { status: number; headers: Headers; body: any }, detail: RegExp) {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(res.body.type).toBe('https://detflow.dev/problems/unauthorized');
    expect(res.body.detail).toMatch(detail);
  }

  it.each(CONTRACT_ENDPOINTS)('answers 401 problem+json without a token: %s %s', async (method, path) => {
    const res = await svc.request(method, path, { token: null, ...(method === 'POST' ? { body: {} } : {}) });
    expectUnauthorized(res, /No Authorization header/);
  });

  it('rejects a header that is not a bearer token', async () => {
    const res = await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: null, headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expectUnauthorized(res, /not of the form/);
  });

  it('rejects a malformed token without looking it up', async () => {
    const bad = svc.token.slice(0, -1) + (svc.token.endsWith('A') ? 'B' : 'A'); // breaks the checksum
    expectUnauthorized(await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: bad }), /malformed/);
    expectUnauthorized(await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: 'dfw_short' }), /malformed/);
  });

  it('rejects a well-formed token it never issued', async () => {
    expectUnauthorized(await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: generateToken() }), /not valid: it is unknown, revoked or expired/);
  });

  it('rejects a revoked token at once', async () => {
    const key = await createApiKey(svc, svc.token, { name: 'to revoke', permissions: ['rules:read'] });
    expect((await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: key.token })).status).toBe(200);
    const revoked = await svc.request('DELETE', `/api/v1/settings/api-keys/${key.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    expectUnauthorized(await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: key.token }), /not valid: it is unknown, revoked or expired/);
  });

  it('rejects an expired token', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const key = await createApiKey(svc, svc.token, { name: 'short lived', permissions: ['rules:read'], expires_at: expiresAt });
    expect((await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: key.token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    expectUnauthorized(await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: key.token }), /not valid: it is unknown, revoked or expired/);
  });

  it('refuses an expiry in the past', async () => {
    const res = await svc.request('POST', '/api/v1/settings/api-keys', { body: { name: 'x', permissions: ['rules:read'], expires_at: '2001-01-01T00:00:00Z' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ pointer: '/body/expires_at', message: 'must be in the future' }]);
  });

  it("hides another tenant's rules and deployments behind 404", async () => {
    const otherAdmin = await createTenant(svc, 'acme');
    const res = await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: otherAdmin });
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('https://detflow.dev/problems/not-found');
    const deploy = await svc.request('POST', '/api/v1/rules/deploy', { token: otherAdmin, body: { rule_id: RULE_ID, target: 'local', approval_required: false } });
    expect(deploy.status).toBe(404);
    expect(deploy.body.detail).toMatch(/No rule/);
  });

  it('refuses a target outside the token environments with 403 insufficient-scope', async () => {
    // The built-in local target lives in the first environment (dev).
    const key = await createApiKey(svc, svc.token, { name: 'prod deployer', permissions: ['deploy', 'rules:read'], environments: ['prod'] });
    const res = await svc.request('POST', '/api/v1/rules/deploy', { token: key.token, body: { rule_id: RULE_ID, target: 'local', approval_required: false } });
    expect(res.status).toBe(403);
    expect(res.body.type).toBe('https://detflow.dev/problems/insufficient-scope');
    expect(res.body.detail).toMatch(/environment dev/);
  });

  it('refuses an operation the token has no permission for with 403', async () => {
    const reader = await createApiKey(svc, svc.token, { name: 'reader', permissions: ['rules:read'] });
    const store = await svc.request('POST', '/api/v1/rules', { token: reader.token, body: { rule: sigmaRule(RULE_ID) } });
    expect(store.status).toBe(403);
    expect(store.body.type).toBe('https://detflow.dev/problems/insufficient-scope');
    expect(store.body.detail).toMatch(/rules:write/);
    expect((await svc.request('GET', '/api/v1/settings/audit', { token: reader.token })).status).toBe(403);
    expect((await svc.request('GET', '/api/v1/settings/tenants', { token: reader.token })).status).toBe(403);
  });

  it('lets a token grant only what it holds', async () => {
    const tenantAdmin = await createTenant(svc, 'globex');
    const res = await svc.request('POST', '/api/v1/settings/api-keys', { token: tenantAdmin, body: { name: 'x', permissions: ['operator'] } });
    expect(res.status).toBe(403);
    const devAdmin = await createApiKey(svc, tenantAdmin, { name: 'dev admin', permissions: ['admin'], environments: ['dev'] });
    const wider = await svc.request('POST', '/api/v1/settings/api-keys', { token: devAdmin.token, body: { name: 'y', permissions: ['deploy'], environments: ['prod'] } });
    expect(wider.status).toBe(403);
    expect(wider.body.detail).toMatch(/prod/);
    const unknownEnv = await svc.request('POST', '/api/v1/settings/api-keys', { token: tenantAdmin, body: { name: 'z', permissions: ['deploy'], environments: ['qa'] } });
    expect(unknownEnv.status).toBe(400);
    expect(unknownEnv.body.errors[0].message).toMatch(/qa/);
  });

  it('lists tokens with their prefix and never the token itself', async () => {
    const key = await createApiKey(svc, svc.token, { name: 'listed', permissions: ['rules:read'] });
    const res = await svc.request('GET', '/api/v1/settings/api-keys?limit=500');
    expect(res.status).toBe(200);
    const listed = res.body.items.find((k: { id: string }) => k.id === key.id);
    expect(listed.prefix).toBe(key.token.slice(0, 10));
    expect(res.text).not.toContain(key.token);
  });
});
