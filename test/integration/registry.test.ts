import { createTenant, processRule, startTestService, type RuleParts, type TestService } from '../support/harness';

const IDS = ['a0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000002', 'a0000000-0000-4000-8000-000000000003'];

const rule = (id: string, parts: RuleParts = {}) => processRule(id, { title: 'Rule ' + id.slice(-1), level: 'medium', ...parts });

describe('rule registry', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    const store = (text: string) => svc.request('POST', '/api/v1/rules', { body: { rule: text } });
    expect((await store(rule(IDS[0]!, { level: 'high', tags: ['attack.execution', 'attack.t1059.001'] }))).status).toBe(201);
    expect((await store(rule(IDS[1]!, { level: 'low', status: 'stable', tags: ['attack.persistence'], product: 'linux' }))).status).toBe(201);
    expect((await store(rule(IDS[2]!, { level: 'high', category: 'network_connection', tags: ['attack.execution'] }))).status).toBe(201);
  });
  afterAll(() => svc.close());

  const ids = (res: { body: { items: Array<{ rule_id: string }> } }) => res.body.items.map((r) => r.rule_id);

  it('lists rules filtered by tag, level, status and logsource', async () => {
    expect(ids(await svc.request('GET', '/api/v1/rules'))).toEqual(IDS);
    expect(ids(await svc.request('GET', '/api/v1/rules?tag=attack.execution'))).toEqual([IDS[0], IDS[2]]);
    expect(ids(await svc.request('GET', '/api/v1/rules?tag=attack.t1059.001'))).toEqual([IDS[0]]);
    expect(ids(await svc.request('GET', '/api/v1/rules?level=high'))).toEqual([IDS[0], IDS[2]]);
    expect(ids(await svc.request('GET', '/api/v1/rules?status=stable'))).toEqual([IDS[1]]);
    expect(ids(await svc.request('GET', '/api/v1/rules?product=linux'))).toEqual([IDS[1]]);
    expect(ids(await svc.request('GET', '/api/v1/rules?category=network_connection&level=high'))).toEqual([IDS[2]]);
    expect(ids(await svc.request('GET', '/api/v1/rules?tag=attack.nothing'))).toEqual([]);
    expect((await svc.request('GET', '/api/v1/rules?level=severe')).status).toBe(400);
  });

  it('pages with limit and cursor', async () => {
    const first = await svc.request('GET', '/api/v1/rules?limit=2');
    expect(ids(first)).toEqual([IDS[0], IDS[1]]);
    const second = await svc.request('GET', `/api/v1/rules?limit=2&cursor=${first.body.next_cursor}`);
    expect(ids(second)).toEqual([IDS[2]]);
    expect(second.body.next_cursor).toBeNull();
  });

  it('keeps immutable versions, lists them newest first, and diffs them', async () => {
    const v2 = await svc.request('POST', '/api/v1/rules', { body: { rule: rule(IDS[0]!, { level: 'critical', tags: ['attack.execution'], image: '\\worse.exe' }) } });
    expect(v2.status).toBe(201);
    expect(v2.body.version).toBe(2);
    expect(v2.headers.get('location')).toBe(`/api/v1/rules/${IDS[0]}/versions/2`);

    const versions = await svc.request('GET', `/api/v1/rules/${IDS[0]}/versions`);
    expect(versions.body.items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    const v1 = await svc.request('GET', `/api/v1/rules/${IDS[0]}/versions/1`);
    expect(v1.body.content).toContain('evil.exe');
    expect(v1.body.level).toBe('high');
    // The list shows the latest version's metadata.
    expect((await svc.request('GET', `/api/v1/rules?level=critical`)).body.items[0].latest_version).toBe(2);

    const diff = await svc.request('GET', `/api/v1/rules/${IDS[0]}/diff?from=1&to=2`);
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({ from: 1, to: 2, changed: true });
    expect(diff.body.diff).toContain(`--- ${IDS[0]}@v1`);
    expect(diff.body.diff).toContain(`+++ ${IDS[0]}@v2`);
    expect(diff.body.diff).toContain("-    Image|endswith: '\\evil.exe'");
    expect(diff.body.diff).toContain("+    Image|endswith: '\\worse.exe'");
    expect(diff.body.diff).toContain('-level: high');
    expect(diff.body.diff).toContain('+level: critical');
    const toLatest = await svc.request('GET', `/api/v1/rules/${IDS[0]}/diff?from=2`);
    expect(toLatest.body).toMatchObject({ from: 2, to: 2, changed: false });
    expect((await svc.request('GET', `/api/v1/rules/${IDS[0]}/diff?from=1&to=7`)).status).toBe(404);
    expect((await svc.request('GET', `/api/v1/rules/${IDS[0]}/versions/7`)).status).toBe(404);
  });

  it('numbers concurrent pushes of one rule without gaps or duplicates', async () => {
    const id = 'b0000000-0000-4000-8000-000000000009';
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => svc.request('POST', '/api/v1/rules', { body: { rule: rule(id, { title: `variant ${i}` }) } })));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(results.map((r) => r.body.version).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("keeps each tenant's registry to itself", async () => {
    const other = await createTenant(svc, 'registry-other');
    expect(ids(await svc.request('GET', '/api/v1/rules', { token: other }))).toEqual([]);
    expect((await svc.request('GET', `/api/v1/rules/${IDS[0]}/versions`, { token: other })).status).toBe(404);
    expect((await svc.request('GET', `/api/v1/rules/${IDS[0]}/diff?from=1`, { token: other })).status).toBe(404);
    // The same rule id in another tenant is a separate rule with its own versions.
    const own = await svc.request('POST', '/api/v1/rules', { token: other, body: { rule: rule(IDS[0]!, { title: 'theirs' }) } });
    expect(own.body.version).toBe(1);
    expect((await svc.request('GET', `/api/v1/rules/${IDS[0]}`)).body.title).not.toBe('theirs');
  });

  it('answers concurrent reads of rules in several tenants each with its own latest version, and a push at once', async () => {
    const other = await createTenant(svc, 'registry-concurrent');
    const id = 'c0000000-0000-4000-8000-00000000000c';
    expect((await svc.request('POST', '/api/v1/rules', { token: other, body: { rule: rule(id, { title: 'c v1' }) } })).status).toBe(201);
    expect((await svc.request('POST', '/api/v1/rules', { token: other, body: { rule: rule(IDS[0]!, { title: 'theirs' }) } })).status).toBe(201);
    // Reads that arrive together are answered by one query (LatestRuleReader): each still gets
    // its own tenant's rule, and a rule the tenant does not have is a 404 among them.
    const reads = await Promise.all([
      svc.request('GET', `/api/v1/rules/${IDS[0]}`),
      svc.request('GET', `/api/v1/rules/${IDS[0]}`, { token: other }),
      svc.request('GET', `/api/v1/rules/${IDS[1]}`),
      svc.request('GET', `/api/v1/rules/${id}`, { token: other }),
      svc.request('GET', `/api/v1/rules/${id}`),
      svc.request('GET', `/api/v1/rules/${IDS[1]}`, { token: other }),
    ]);
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200, 200, 404, 404]);
    expect(reads[0]!.body.title).not.toBe('theirs');
    expect(reads[1]!.body).toMatchObject({ rule_id: IDS[0], title: 'theirs', latest_version: 1 });
    expect(reads[2]!.body.rule_id).toBe(IDS[1]);
    expect(reads[3]!.body).toMatchObject({ title: 'c v1', latest_version: 1 });
    expect(reads[4]!.body.type).toBe('https://detflow.dev/problems/not-found');
    // A new version is what the very next read answers, however many reads came before.
    for (let v = 2; v <= 4; v++) {
      const pushed = await svc.request('POST', '/api/v1/rules', { token: other, body: { rule: rule(id, { title: `c v${v}` }) } });
      expect(pushed.body.version).toBe(v);
      const after = await Promise.all(Array.from({ length: 5 }, () => svc.request('GET', `/api/v1/rules/${id}`, { token: other })));
      for (const r of after) expect(r.body).toMatchObject({ title: `c v${v}`, latest_version: v, content: rule(id, { title: `c v${v}` }) });
    }
  });
});
