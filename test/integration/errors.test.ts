import { startTestService, type TestService } from '../support/harness';

describe('bad input gets a clear problem+json answer', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.close());

  function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, type: string) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: `https://detflow.dev/problems/${type}`, status, title: expect.any(String), detail: expect.any(String) });
    expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
    expect(res.body.instance).toMatch(/^\/api\/v1\//);
  }

  it('answers 400 malformed-json for a body that is not JSON', async () => {
    const res = await svc.request('POST', '/api/v1/rules', { body: '{"rule": "title: x' });
    expectProblem(res, 400, 'malformed-json');
    expect(res.body.detail).toMatch(/not valid JSON/);
  });

  it('answers 400 with a pointer per unknown field', async () => {
    const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: 'r', target: 'local', approval_required: false, colour: 'red' } });
    expectProblem(res, 400, 'invalid-request');
    expect(res.body.errors).toEqual([{ pointer: '/body', message: 'unknown field(s): colour' }]);
  });

  it('answers 400 with a pointer per field of the wrong type', async () => {
    const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: 42, target: 'local', approval_required: 'no', noise_budget: { max_alerts_per_day: 'ten' } } });
    expectProblem(res, 400, 'invalid-request');
    const pointers = res.body.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(['/body/approval_required', '/body/noise_budget/max_alerts_per_day', '/body/rule_id']);
  });

  it('answers 400 for a missing body', async () => {
    const res = await svc.request('POST', '/api/v1/rules');
    expectProblem(res, 400, 'invalid-request');
  });

  it('answers 413 for a body over the limit', async () => {
    const res = await svc.request('POST', '/api/v1/rules', { body: { rule: 'x'.repeat(5 * 1024 * 1024 + 10) } });
    expectProblem(res, 413, 'payload-too-large');
  });

  it('answers 415 for a body that is not declared as JSON', async () => {
    const res = await svc.request('POST', '/api/v1/rules', { body: 'rule=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectProblem(res, 415, 'unsupported-media-type');
  });

  it('answers 400 for YAML that is not a rule, with the line', async () => {
    const res = await svc.request('POST', '/api/v1/rules', { body: { rule: 'title: a\ntitle: b\n' } });
    expectProblem(res, 400, 'invalid-request');
    expect(res.body.errors[0].message).toMatch(/line 2/);
  });

  it('survives a YAML alias bomb', async () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`)].join('\n');
    const res = await svc.request('POST', '/api/v1/rules', { body: { rule: bomb } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('answers 404 problem+json for an unknown path and keeps the rate-limit headers', async () => {
    const res = await svc.request('GET', '/api/v1/no/such/thing');
    expectProblem(res, 404, 'not-found');
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000000');
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const res = await svc.request('PUT', '/api/v1/rules/deploy', { body: {} });
    expectProblem(res, 405, 'method-not-allowed');
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('refuses text with a NUL character, which PostgreSQL cannot store', async () => {
    const res = await svc.request('POST', '/api/v1/settings/tenants', { body: { id: 'nul-co', name: 'bad\u0000name', tier: 'free' } });
    expectProblem(res, 400, 'invalid-request');
    expect(res.body.errors).toEqual([{ pointer: '/body/name', message: 'contains U+0000' }]);
  });

  it('refuses unpaired surrogates, which PostgreSQL jsonb cannot store, and deep nesting, with 400 not 500', async () => {
    const surrogate = await svc.request('POST', '/api/v1/settings/api-keys', { body: '{"name":"a\\ud800b","permissions":["rules:read"]}', headers: { 'content-type': 'application/json' } });
    expectProblem(surrogate, 400, 'invalid-request');
    expect(surrogate.body.errors).toEqual([{ pointer: '/body/name', message: 'contains an unpaired UTF-16 surrogate' }]);
    const deep = await svc.request('POST', '/api/v1/rules/lint', { body: '['.repeat(100_000) + ']'.repeat(100_000), headers: { 'content-type': 'application/json' } });
    expect(deep.status).toBe(400);
    expect(deep.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('refuses a rule whose YAML escapes decode to text the registry cannot store', async () => {
    const yaml = (extra: string) => `title: "Escaped"\nid: 0e5c0000-0000-4000-8000-000000000001\nlogsource:\n  product: windows\n${extra}detection:\n  sel:\n    Image: x\n  condition: sel\n`;
    for (const [extra, reason] of [
      ['tags:\n  - "a\\0b"\n', 'contains U+0000'],
      ['tags:\n  - "\\ud800"\n', 'contains an unpaired UTF-16 surrogate'],
    ] as const) {
      const res = await svc.request('POST', '/api/v1/rules', { body: { rule: yaml(extra) } });
      expectProblem(res, 400, 'invalid-request');
      expect(res.body.errors[0].message).toBe(`its tags ${reason}`);
    }
  });

  it('answers 400, not 500, for forged cursors and a path that is not valid percent-encoding', async () => {
    const cursor = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const uuid = '00000000-0000-4000-8000-000000000000';
    const ruleId = 'c0c0c0c0-0000-4000-8000-000000000001';
    const rule = `title: Cursor\nid: ${ruleId}\nlogsource:\n  product: windows\ndetection:\n  sel:\n    Image: x\n  condition: sel\n`;
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule } })).status).toBe(201);
    for (const path of [
      `/api/v1/rules?cursor=${cursor('\u0000')}`,
      `/api/v1/settings/tenants?cursor=${cursor('\ud800')}`,
      `/api/v1/settings/api-keys?cursor=${cursor('not-a-uuid')}`,
      `/api/v1/settings/webhook/deliveries?cursor=${cursor('-271821-04-20T00:00:00Z')}`,
      `/api/v1/deployments?cursor=${cursor('2020-01-01T00:00:00Z|x')}`,
      `/api/v1/approvals?cursor=${cursor(`-271821-04-20T00:00:00Z|${uuid}`)}`,
      `/api/v1/alerts?cursor=${cursor(`2020-01-01T00:00:00Z|${uuid}`).slice(0, -2)}`,
      `/api/v1/settings/audit?cursor=${cursor(1e300)}`,
      `/api/v1/rules/${ruleId}/versions?cursor=${cursor(1.5)}`,
      '/api/v1/rules/%ZZ',
      '/api/v1/deployments/%ED%A0%80',
    ]) {
      const res = await svc.request('GET', path);
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    // A cursor the API issued still works.
    expect((await svc.request('GET', `/api/v1/deployments?cursor=${cursor(`2020-01-01T00:00:00Z|${uuid}`)}`)).status).toBe(200);
  });

  it('answers 400 for an invalid path parameter', async () => {
    const res = await svc.request('GET', '/api/v1/deployments/not-a-uuid');
    expectProblem(res, 400, 'invalid-request');
    expect(res.body.errors[0].pointer).toBe('/params/id');
  });

  it('serves the OpenAPI document generated from the route schemas', async () => {
    const res = await svc.request('GET', '/api/v1/openapi.json', { token: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.0.3');
    expect(res.body.paths['/rules/deploy'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/DeployRequest');
    expect(res.body.components.schemas.DeployRequest.additionalProperties).toBe(false);
    expect(Object.keys(res.body.paths['/rules/deploy'].post.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '403', '404', '409', '429']));
    expect(res.body.paths['/health/roi'].get.responses['501']).toBeDefined();
  });

  it('answers liveness and readiness without a token', async () => {
    expect((await svc.request('GET', '/healthz', { token: null })).body).toEqual({ status: 'ok' });
    const ready = await svc.request('GET', '/readyz', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ database: 'ok', temporal: 'ok' });
  });
});
