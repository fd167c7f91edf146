import { rateLimitCounters } from '../../db/schema';
import { utcDay } from '../../api/limits/rate-limit';
import { generateToken } from '../../domain/tenants/token-format';
import { createApiKey, createTenant, sigmaRule, startTestService, type TestService } from '../support/harness';

const RULE_ID = '3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b';

describe('audit log', () => {
  let svc: TestService;
  let clock: Date | undefined;
  beforeAll(async () => {
    svc = await startTestService({ now: () => clock ?? new Date() });
  });
  afterAll(() => svc.close());

  it('records every request, whatever its status, with the token and the route', async () => {
    const reader = await createApiKey(svc, svc.token, { name: 'reader', permissions: ['rules:read'] });
    const unknownToken = generateToken();
    const calls = [
      await svc.request('POST', '/api/v1/rules', { body: { rule: sigmaRule(RULE_ID) }, headers: { 'user-agent': 'audit-test/1.0' } }), // 201
      await svc.request('GET', `/api/v1/rules/${RULE_ID}`), // 200
      await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE_ID, target: 'local', approval_required: false } }), // 202
      await svc.request('POST', '/api/v1/rules', { body: '{' }), // 400
      await svc.request('GET', `/api/v1/rules/${RULE_ID}`, { token: unknownToken }), // 401
      await svc.request('POST', '/api/v1/rules', { token: reader.token, body: { rule: sigmaRule(RULE_ID) } }), // 403
      await svc.request('GET', '/api/v1/rules/unknown-rule'), // 404
      await svc.request('POST', '/api/v1/rules', { body: { rule: 'x'.repeat(5 * 1024 * 1024 + 10) } }), // 413
      await svc.request('POST', '/api/v1/rules', { body: 'x', headers: { 'content-type': 'text/plain' } }), // 415
      await svc.request('DELETE', '/api/v1/rules/lint'), // 405
    ];
    expect(calls.map((c) => c.status)).toEqual([201, 200, 202, 400, 401, 403, 404, 413, 415, 405]);

    const res = await svc.request('GET', '/api/v1/settings/audit?limit=100');
    expect(res.status).toBe(200);
    const byRequest = new Map(res.body.items.map((e: { request_id: string }) => [e.request_id, e]));
    for (const call of calls) {
      const entry: any = byRequest.get(call.headers.get('x-request-id')!);
      expect(entry).toBeDefined();
      expect(entry.status).toBe(call.status);
      expect(entry.duration_ms).toBeGreaterThanOrEqual(0);
      expect(entry.client_ip).toMatch(/127\.0\.0\.1/);
    }
    const created: any = byRequest.get(calls[0]!.headers.get('x-request-id')!);
    expect(created).toMatchObject({ method: 'POST', route: '/rules', path: '/api/v1/rules', tenant_id: 'default', user_agent: 'audit-test/1.0' });
    const fetched: any = byRequest.get(calls[1]!.headers.get('x-request-id')!);
    expect(fetched.route).toBe('/rules/{id}');
    const unauthorized: any = byRequest.get(calls[4]!.headers.get('x-request-id')!);
    expect(unauthorized).toMatchObject({ token_id: null, tenant_id: null, token_prefix: unknownToken.slice(0, 10) });
    const forbidden: any = byRequest.get(calls[5]!.headers.get('x-request-id')!);
    expect(forbidden.token_id).toBe(reader.id);
    // No secrets: neither the token nor the body appear anywhere.
    expect(res.text).not.toContain(svc.token);
    expect(res.text).not.toContain(unknownToken);
    expect(res.text).not.toContain('evil.exe');
  });

  it('records 429s, and a tenant admin sees only its own tenant', async () => {
    const admin = await createTenant(svc, 'audited', 'free');
    await svc.database.db.insert(rateLimitCounters).values({ bucket: 'tenant:audited', day: utcDay(new Date()), count: 10_000 });
    const limited = await svc.request('GET', '/api/v1/settings/api-keys', { token: admin });
    expect(limited.status).toBe(429);
    // The next UTC day: the tenant may call again, and reads its own audit log.
    clock = new Date(Date.now() + 24 * 3600 * 1000);
    const own = await svc.request('GET', '/api/v1/settings/audit?status=429', { token: admin });
    expect(own.body.items.map((e: { request_id: string }) => e.request_id)).toContain(limited.headers.get('x-request-id'));
    const all = await svc.request('GET', '/api/v1/settings/audit?limit=500', { token: admin });
    expect(all.body.items.every((e: { tenant_id: string }) => e.tenant_id === 'audited')).toBe(true);
    clock = undefined;
  });

  it('pages with an opaque cursor', async () => {
    const first = await svc.request('GET', '/api/v1/settings/audit?limit=2');
    expect(first.body.items).toHaveLength(2);
    const second = await svc.request('GET', `/api/v1/settings/audit?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.items[0].id).toBeLessThan(first.body.items[1].id);
    const bad = await svc.request('GET', '/api/v1/settings/audit?cursor=garbage');
    expect(bad.status).toBe(400);
  });
});
