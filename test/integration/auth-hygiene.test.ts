import pino from 'pino';
import { generateToken } from '../../domain/tenants/token-format';
import { createApiKey, createTenant, startTestService, until, type TestResponse, type TestService } from '../support/harness';

/** Issue 17, findings 10–12: what a 401 says, tokens in URLs, and guessing tokens. */
describe('token hygiene', () => {
  let svc: TestService;
  let clock: Date | undefined;
  const logLines: string[] = [];
  beforeAll(async () => {
    const apiLogger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
    svc = await startTestService({ now: () => clock ?? new Date(), apiLogger });
  });
  afterAll(() => svc.close());

  function expectUnauthorized(res: TestResponse) {
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(res.body.type).toBe('https://detflow.dev/problems/unauthorized');
  }

  async function audit(token: string, requestId: string | null): Promise<any> {
    const res = await svc.request('GET', '/api/v1/settings/audit?limit=500', { token });
    expect(res.status).toBe(200);
    return res.body.items.find((e: { request_id: string }) => e.request_id === requestId);
  }

  it('answers one message for unknown, revoked and expired tokens, and tells the tenant admin why in the audit', async () => {
    const admin = await createTenant(svc, 'hygiene');
    const revoked = await createApiKey(svc, admin, { name: 'revoked', permissions: ['rules:read'] });
    expect((await svc.request('DELETE', `/api/v1/settings/api-keys/${revoked.id}`, { token: admin })).status).toBe(200);
    const expiring = await createApiKey(svc, admin, { name: 'expiring', permissions: ['rules:read'], expires_at: new Date(Date.now() + 3600_000).toISOString() });
    expect((await svc.request('GET', '/api/v1/settings/api-keys', { token: expiring.token })).status).toBe(403);

    const unknown = await svc.request('GET', '/api/v1/settings/api-keys', { token: generateToken() });
    const ofRevoked = await svc.request('GET', '/api/v1/settings/api-keys', { token: revoked.token });
    clock = new Date(Date.now() + 2 * 3600_000);
    const ofExpired = await svc.request('GET', '/api/v1/settings/api-keys', { token: expiring.token });
    clock = undefined;

    for (const res of [unknown, ofRevoked, ofExpired]) expectUnauthorized(res);
    // Nothing tells a holder of a leaked token that it was once real.
    expect(ofRevoked.body.detail).toBe(unknown.body.detail);
    expect(ofExpired.body.detail).toBe(unknown.body.detail);
    expect(unknown.body.detail).not.toMatch(/revoked at|expired at|\d{4}-\d\d-\d\d/);
    expect(unknown.body.detail).toMatch(/Authorization: Bearer/);

    // The tenant's admin sees the use of its revoked and expired tokens, with the reason.
    expect(await audit(admin, ofRevoked.headers.get('x-request-id'))).toMatchObject({
      status: 401,
      tenant_id: 'hygiene',
      token_id: revoked.id,
      token_prefix: revoked.token.slice(0, 10),
      auth_failure: 'revoked',
    });
    expect(await audit(admin, ofExpired.headers.get('x-request-id'))).toMatchObject({ status: 401, tenant_id: 'hygiene', token_id: expiring.id, auth_failure: 'expired' });
    // An unknown token belongs to no tenant: the operator sees it.
    expect(await audit(admin, unknown.headers.get('x-request-id'))).toBeUndefined();
    expect(await audit(svc.token, unknown.headers.get('x-request-id'))).toMatchObject({ tenant_id: null, token_id: null, auth_failure: 'unknown' });
    // A missing header keeps its own, harmless message and reason.
    const noHeader = await svc.request('GET', '/api/v1/settings/api-keys', { token: null });
    expect(noHeader.body.detail).toMatch(/No Authorization header/);
    expect(await audit(svc.token, noHeader.headers.get('x-request-id'))).toMatchObject({ auth_failure: 'missing' });
  });

  it('refuses tokens in the query string with 400, and keeps token-shaped text out of logs and audit rows', async () => {
    const token = svc.token;
    const shaped = generateToken();
    const partlyEncoded = `%64fw%5F${shaped.slice(4, 10)}%${shaped.charCodeAt(10).toString(16)}${shaped.slice(11)}`;
    const queries = [`access_token=${token}`, `token=${token}`, 'api_key=secret', 'APIKEY=secret', 'Access_Token=secret', `q=${shaped}`, `q=${partlyEncoded}`, `${shaped}=1`];
    const refused: TestResponse[] = [];
    for (const query of queries) {
      const res = await svc.request('GET', `/api/v1/settings/api-keys?limit=5&${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.type).toBe('https://detflow.dev/problems/invalid-request');
      expect(res.body.detail).toMatch(/Authorization: Bearer/);
      expect(res.text).not.toContain(token);
      refused.push(res);
    }
    // Also without a header, and on the public contract.
    expect((await svc.request('GET', `/api/v1/settings/api-keys?access_token=${token}`, { token: null })).status).toBe(400);
    expect((await svc.request('GET', `/api/v1/openapi.json?access_token=${token}`, { token: null })).status).toBe(400);
    // Other query parameters are not affected.
    expect((await svc.request('GET', '/api/v1/settings/api-keys?limit=5')).status).toBe(200);

    // Token-shaped text elsewhere in the request: in the path, the user agent, the request id.
    const inPath = await svc.request('GET', `/api/v1/rules/${shaped}`, { headers: { 'user-agent': `curl/8 ${shaped}` } });
    expect(inPath.status).toBe(404);
    const asRequestId = await svc.request('GET', '/api/v1/settings/api-keys?limit=5', { headers: { 'x-request-id': shaped } });
    expect(asRequestId.headers.get('x-request-id')).not.toBe(shaped);

    const requestIds = [...refused, inPath, asRequestId].map((r) => r.headers.get('x-request-id')!);
    const logged = await until('the request log lines', async () => {
      const lines = logLines.filter((l) => requestIds.some((id) => l.includes(id)));
      return lines.length >= requestIds.length ? lines : undefined;
    });
    for (const line of logged) {
      expect(line).not.toContain(token.slice(10));
      expect(line).not.toContain(shaped.slice(10));
      expect(line).not.toContain(partlyEncoded.slice(10));
    }
    expect(logged.join('\n')).toContain('[redacted]');
    const row = await audit(svc.token, inPath.headers.get('x-request-id'));
    expect(row.path).not.toContain(shaped.slice(10));
    expect(row.user_agent).not.toContain(shaped.slice(10));
    expect(row.path).toContain('[redacted]');
    const auditText = (await svc.request('GET', '/api/v1/settings/audit?limit=500')).text;
    expect(auditText).not.toContain(shaped.slice(10));
    expect(auditText).not.toContain(token.slice(10));
  });

  it('throttles failed authentication per address, without slowing tokens already working from it', async () => {
    clock = new Date();
    const address = '127.0.0.7';
    const admin = await createTenant(svc, 'busy');
    const other = await createApiKey(svc, admin, { name: 'not yet used from there', permissions: ['admin'] });
    expect((await svc.request('GET', '/api/v1/settings/api-keys', { token: admin, localAddress: address })).status).toBe(200);

    for (let i = 0; i < 20; i++) expectUnauthorized(await svc.request('GET', '/api/v1/settings/api-keys', { token: generateToken(), localAddress: address }));
    const throttled = await svc.request('GET', '/api/v1/settings/api-keys', { token: generateToken(), localAddress: address });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(throttled.body.type).toBe('https://detflow.dev/problems/rate-limited');
    expect(throttled.headers.get('retry-after')).toBe('10');
    expect(throttled.body.detail).toMatch(/failed authentication/);

    // The tenant's work from that address goes on; a token not yet seen from it waits like a guess.
    expect((await svc.request('GET', '/api/v1/settings/api-keys', { token: admin, localAddress: address })).status).toBe(200);
    expect((await svc.request('GET', '/api/v1/settings/api-keys', { token: other.token, localAddress: address })).status).toBe(429);
    // Other addresses are not throttled; no token at all is not a guess.
    expectUnauthorized(await svc.request('GET', '/api/v1/settings/api-keys', { token: generateToken(), localAddress: '127.0.0.8' }));
    expectUnauthorized(await svc.request('GET', '/api/v1/settings/api-keys', { token: null, localAddress: address }));
    expect(await audit(svc.token, throttled.headers.get('x-request-id'))).toMatchObject({ status: 429, auth_failure: 'throttled' });

    // The window passes.
    clock = new Date(clock.getTime() + 10_000);
    expectUnauthorized(await svc.request('GET', '/api/v1/settings/api-keys', { token: generateToken(), localAddress: address }));
    expect((await svc.request('GET', '/api/v1/settings/api-keys', { token: other.token, localAddress: address })).status).toBe(200);
    clock = undefined;
  });
});
