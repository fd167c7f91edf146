import { createTenant, startTestService, type TestService } from '../support/harness';

const RULE_ID = 'e0000000-0000-4000-8000-000000000001';
const RULE = `title: Evil tools
id: ${RULE_ID}
status: test
level: high
description: Evil or bad tools unless run in safe mode
author: detflow tests
date: 2026-11-01
tags:
  - attack.execution
logsource:
  category: process_creation
  product: windows
detection:
  sel_img:
    Image|endswith:
      - '\\evil.exe'
      - '\\bad.exe'
  filter:
    CommandLine|contains: 'safe'
  condition: sel_img and not filter
falsepositives:
  - none
`;

const CORR_ID = 'e0000000-0000-4000-8000-000000000002';
const CORRELATION = `title: Failed logon
id: e0000000-0000-4000-8000-000000000003
name: failed_logon
status: test
level: low
logsource:
  product: windows
  service: security
detection:
  selection:
    EventID: 4625
  condition: selection
---
title: Many failed logons from one source
id: ${CORR_ID}
status: test
level: high
correlation:
  type: event_count
  rules:
    - failed_logon
  group-by:
    - IpAddress
  timespan: 5m
  condition:
    gte: 3
`;

const fx = (name: string, expect: string, event: Record<string, unknown>) => JSON.stringify({ name, expect, event });

describe('POST /rules/test', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: RULE } })).status).toBe(201);
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: CORRELATION } })).status).toBe(201);
  });
  afterAll(() => svc.close());

  const test = (fixtures: string[], ruleId = RULE_ID, token?: string) =>
    svc.request('POST', '/api/v1/rules/test', { body: { rule_id: ruleId, target: 'local', fixtures }, ...(token ? { token } : {}) });

  it('passes a suite, with coverage computed by hand and the run recorded', async () => {
    const res = await test([
      fx('evil runs', 'match', { Image: 'C:\\x\\evil.exe', CommandLine: 'evil --go' }),
      fx('good runs', 'no_match', { Image: 'C:\\x\\good.exe', CommandLine: 'good' }),
      fx('evil in safe mode', 'no_match', { Image: 'C:\\x\\EVIL.exe', CommandLine: 'evil --SAFE' }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.passed).toBe(true);
    expect(res.body.summary).toEqual({ total: 3, passed: 3, failed: 0 });
    expect(res.body.tests.map((t: any) => [t.name, t.matched_on_target, t.matched_in_evaluator])).toEqual([
      ['evil runs', true, true],
      ['good runs', false, false],
      ['evil in safe mode', false, false],
    ]);
    // Selections: sel_img and filter both reached → 2/2.
    expect(res.body.coverage.selections).toMatchObject({ total: 2, covered: 2, percent: 100 });
    // Values: evil.exe and safe reached, bad.exe never → 2/3.
    expect(res.body.coverage.values).toMatchObject({ total: 3, covered: 2 });
    expect(res.body.coverage.values.percent).toBeCloseTo(66.7, 1);
    const bad = res.body.coverage.values.items.find((v: any) => v.value === '\\bad.exe');
    expect(bad.covered).toBe(false);
    // Branches: the and, sel_img, not filter, filter — each seen true and false → 8/8.
    expect(res.body.coverage.branches).toMatchObject({ total: 8, covered: 8, percent: 100 });
    expect(res.headers.get('location')).toBe(`/api/v1/rules/tests/${res.body.id}`);

    const read = await svc.request('GET', `/api/v1/rules/tests/${res.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it('fails a test whose expectation is wrong, saying why, and flags a suite without negatives', async () => {
    const res = await test([
      fx('evil runs', 'match', { Image: 'C:\\x\\evil.exe', CommandLine: 'go', Unused: 1 }),
      fx('good should match (wrong)', 'match', { Image: 'C:\\x\\good.exe', CommandLine: 'go' }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.passed).toBe(false);
    expect(res.body.summary).toEqual({ total: 2, passed: 1, failed: 1 });
    expect(res.body.tests[1]).toMatchObject({ passed: false, reason: 'the rule did not match this event' });
    const codes = res.body.quality.map((q: any) => q.code);
    expect(codes).toEqual(expect.arrayContaining(['no_negative_tests', 'fixture_fields_unused', 'fixture_reaches_no_selection']));
    expect(codes).not.toContain('no_positive_tests');
  });

  it('tests a correlation rule over event streams in-process', async () => {
    const logon = (ip: string) => ({ EventID: 4625, IpAddress: ip, '@timestamp': '2026-11-20T10:00:00Z' });
    const res = await test(
      [
        JSON.stringify({ name: 'brute force', expect: 'match', events: [logon('10.0.0.1'), logon('10.0.0.1'), logon('10.0.0.1')] }),
        JSON.stringify({ name: 'spread out sources', expect: 'no_match', events: [logon('10.0.0.1'), logon('10.0.0.2'), logon('10.0.0.3')] }),
      ],
      CORR_ID,
    );
    expect(res.status).toBe(200);
    expect(res.body.summary).toEqual({ total: 2, passed: 2, failed: 0 });
    expect(res.body.tests[0].matched_on_target).toBeNull();
    expect(res.body.evaluated_on).toMatch(/correlation/);
  });

  it('answers 400 naming the index of each fixture that is not a test document', async () => {
    const res = await test([
      fx('ok', 'match', { Image: 'x' }),
      '{not json',
      JSON.stringify({ name: 'n', expect: 'maybe', event: {} }),
      JSON.stringify({ name: 'e', expect: 'match', events: [{}] }),
    ]);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.pointer)).toEqual(['/body/fixtures/1', '/body/fixtures/2', '/body/fixtures/3']);
    expect((await svc.request('POST', '/api/v1/rules/test', { body: { rule_id: RULE_ID, target: 'local', fixtures: [{ name: 'obj' }] } })).status).toBe(400);
  });

  it('refuses more fixtures than the tier allows, and unknown or foreign rules', async () => {
    const free = await createTenant(svc, 'tests-free', 'free');
    expect((await svc.request('POST', '/api/v1/rules', { token: free, body: { rule: RULE } })).status).toBe(201);
    const many = Array.from({ length: 51 }, (_, i) => fx(`f${i}`, 'no_match', { Image: `${i}.exe` }));
    const res = await test(many, RULE_ID, free);
    expect(res.status).toBe(403);
    expect(res.body.type).toBe('https://detflow.dev/problems/resource-limit');
    expect((await test([fx('a', 'match', {})], 'e0000000-0000-4000-8000-0000000000ff')).status).toBe(404);
    const other = await createTenant(svc, 'tests-other');
    expect((await test([fx('a', 'match', {})], CORR_ID, other)).status).toBe(404);
    const run = await test([fx('a', 'no_match', { Image: 'a.exe' })]);
    expect((await svc.request('GET', `/api/v1/rules/tests/${run.body.id}`, { token: other })).status).toBe(404);
  });
  it('answers 400 for fixtures holding text the service cannot store', async () => {
    for (const [fixture, pointer] of [
      [JSON.stringify({ name: 'nul\u0000name', expect: 'match', event: { Image: 'C:\\x\\evil.exe', CommandLine: 'go' } }), '/body/fixtures/0/name'],
      [JSON.stringify({ name: 'lone', expect: 'match', event: { Image: 'C:\\x\\evil.exe', CommandLine: '\ud800' } }), '/body/fixtures/0/events/0/CommandLine'],
      ['{"name":"huge","expect":"match","event":{"Image":"C:\\\\x\\\\evil.exe","CommandLine":"go","n":1e400}}', '/body/fixtures/0/events/0'],
    ] as const) {
      const res = await test([fixture]);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].pointer).toBe(pointer);
    }
  });
});
