import { createTenant, startTestService, type TestService } from '../support/harness';

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

  it('says a body must be an object when it is JSON of another kind (null, a number, a string)', async () => {
    for (const [body, what] of [
      ['null', 'null'],
      ['42', 'a number'],
      ['"rule"', 'a string'],
    ] as const) {
      const res = await svc.request('POST', '/api/v1/rules', { body });
      expectProblem(res, 400, 'invalid-request');
      expect(res.body.detail).toBe(`The body must be a JSON object; it is ${what}`);
    }
  });

  it('answers 400 with a pointer per unknown field', async () => {
    const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: 'r', target: 'local', approval_required: false, colour: 'red' } });
    expectProblem(res, 400, 'invalid-request');
    expect(res.body.errors).toEqual([{ pointer: '/body', message: 'unknown field(s): colour' }]);
  });

  it('answers 400 with a pointer per field of the wrong type', async () => {
    const res = await svc.request('POST', '/api/v1/rules/deploy', {
      body: { rule_id: 42, target: 'local', approval_required: 'no', noise_budget: { max_alerts_per_day: 'ten' } },
    });
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
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 9 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
      ),
    ].join('\n');
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
    // A literal path wins over a parameter that would match it: GET /rules/lint is not "no rule named lint".
    const lint = await svc.request('GET', '/api/v1/rules/lint');
    expectProblem(lint, 405, 'method-not-allowed');
    expect(lint.headers.get('allow')).toBe('POST');
    expect((await svc.request('GET', '/api/v1/rules/4d1c0000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('refuses text with a NUL character, which PostgreSQL cannot store', async () => {
    const res = await svc.request('POST', '/api/v1/settings/tenants', { body: { id: 'nul-co', name: 'bad\u0000name', tier: 'free' } });
    expectProblem(res, 400, 'invalid-request');
    expect(res.body.errors).toEqual([{ pointer: '/body/name', message: 'contains U+0000' }]);
  });

  it('refuses unpaired surrogates, which PostgreSQL jsonb cannot store, and deep nesting, with 400 not 500', async () => {
    const surrogate = await svc.request('POST', '/api/v1/settings/api-keys', {
      body: '{"name":"a\\ud800b","permissions":["rules:read"]}',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(surrogate, 400, 'invalid-request');
    expect(surrogate.body.errors).toEqual([{ pointer: '/body/name', message: 'contains an unpaired UTF-16 surrogate' }]);
    const deep = await svc.request('POST', '/api/v1/rules/lint', { body: '['.repeat(100_000) + ']'.repeat(100_000), headers: { 'content-type': 'application/json' } });
    expect(deep.status).toBe(400);
    expect(deep.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('refuses a rule whose YAML escapes decode to text the registry cannot store', async () => {
    const yaml = (extra: string) =>
      `title: "Escaped"\nid: 0e5c0000-0000-4000-8000-000000000001\nlogsource:\n  product: windows\n${extra}detection:\n  sel:\n    Image: x\n  condition: sel\n`;
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

  it('answers 400 for durations and instants no later step could use', async () => {
    const ruleId = 'c0c0c0c0-0000-4000-8000-000000000002';
    const rule = `title: Bounds\nid: ${ruleId}\nlogsource:\n  product: windows\ndetection:\n  sel:\n    Image: x\n  condition: sel\n`;
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule } })).status).toBe(201);
    const pointers = async (method: string, path: string, body: unknown) => {
      const res = await svc.request(method, path, { body });
      expect([path, res.status]).toEqual([path, 400]);
      return res.body.errors.map((e: { pointer: string }) => e.pointer);
    };
    expect(await pointers('POST', '/api/v1/rules/deploy', { rule_id: ruleId, target: 'local', approval_expires_in: 'P9999999999D' })).toContain('/body/approval_expires_in');
    expect(await pointers('POST', '/api/v1/rules/deploy', { rule_id: ruleId, target: 'local', approval_expires_in: 'P999999W' })).toContain('/body/approval_expires_in');
    expect(await pointers('POST', '/api/v1/approvals', { rule_id: ruleId, targets: ['local'], expires_in: 'P99999999999999999999W' })).toContain('/body/expires_in');
    const target = {
      name: 'bounds',
      kind: 'local',
      environment: 'dev',
      cost_model: { currency: 'USD', price_per_gb_scanned: 1, triage_minutes_per_alert: 5, cost_per_analyst_hour: 60 },
    };
    for (const interval of ['PT0S', 'PT99999999999999999999H', 'P2D']) {
      expect(await pointers('POST', '/api/v1/settings/targets', { ...target, detection_interval: interval })).toContain('/body/detection_interval');
    }
    expect(await pointers('POST', '/api/v1/rules/replay', { rule_id: ruleId, target: 'local', from: '0000-01-01T00:00:00Z', to: '0000-01-02T00:00:00Z' })).toContain(
      '/body/from',
    );
  });

  it('answers 400 for a replay or shadow of a stored rule that does not parse as a rule', async () => {
    const ruleId = 'c0c0c0c0-0000-4000-8000-000000000003';
    // Stored (Sigma YAML with an id and a title) though its logsource is not a map.
    const rule = `title: Odd logsource\nid: ${ruleId}\nlogsource: windows\ndetection:\n  sel:\n    Image: x\n  condition: sel\n`;
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule } })).status).toBe(201);
    for (const [path, extra] of [
      ['/api/v1/rules/replay', { lookback: 'P1D' }],
      ['/api/v1/rules/shadow', { duration: 'PT1M', interval: 'PT1M' }],
    ] as const) {
      const res = await svc.request('POST', path, { body: { rule_id: ruleId, target: 'local', ...extra } });
      expectProblem(res, 400, 'invalid-request');
      expect(res.body.detail).toMatch(/^The rule does not parse/);
    }
  });

  it('holds a tenant to its tier’s number of rules; new versions of its rules are always stored', async () => {
    const token = await createTenant(svc, 'rules-cap', 'free');
    const rule = (n: number, revision = 1) =>
      `title: Capped ${n} r${revision}\nid: ca000000-0000-4000-8000-${String(n).padStart(12, '0')}\nlogsource:\n  product: windows\ndetection:\n  sel:\n    Image: x${revision}\n  condition: sel\n`;
    const answers = await Promise.all(Array.from({ length: 104 }, (_, i) => svc.request('POST', '/api/v1/rules', { token, body: { rule: rule(i) } })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(100);
    for (const refused of answers.filter((a) => a.status !== 201)) expectProblem(refused, 403, 'resource-limit');
    const stored = answers.findIndex((a) => a.status === 201);
    expect((await svc.request('POST', '/api/v1/rules', { token, body: { rule: rule(stored, 2) } })).status).toBe(201);
    expect((await svc.request('GET', '/api/v1/rules?limit=500', { token })).body.items).toHaveLength(100);
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
    expect(res.body.paths['/health/dashboard'].get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/HealthDashboard');
    expect(res.body.paths['/health/roi'].get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/RoiReport');
  });

  it('answers liveness and readiness without a token', async () => {
    expect((await svc.request('GET', '/healthz', { token: null })).body).toEqual({ status: 'ok' });
    const ready = await svc.request('GET', '/readyz', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ database: 'ok', temporal: 'ok' });
  });
});
