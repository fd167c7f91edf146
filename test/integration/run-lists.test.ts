import { createTenant, imageRule, startTestService, until, type TestService } from '../support/harness';

/** GET /replays and GET /shadows: newest first, by status and rule, paged, the tenant's own only. */

const RULE_A = 'a71e0000-0000-4000-8000-00000000000a';
const RULE_B = 'a71e0000-0000-4000-8000-00000000000b';
const HOUR = 3_600_000;
const BASE = Math.floor(Date.now() / HOUR) * HOUR - 30 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const WINDOW = { from: iso(BASE), to: iso(BASE + 24 * HOUR) };

describe('run lists (GET /replays, GET /shadows)', () => {
  let svc: TestService;
  let other: string;
  const replayIds: string[] = [];
  let shadowId: string;
  let otherReplay: string;

  const start = async (body: Record<string, unknown>, token?: string) => {
    const res = await svc.request('POST', '/api/v1/rules/replay', { token, body: { target: 'local', ...WINDOW, ...body } });
    expect(res.status).toBe(202);
    return res.body.id as string;
  };

  beforeAll(async () => {
    svc = await startTestService();
    other = await createTenant(svc, 'run-lists-other');
    for (const id of [RULE_A, RULE_B]) expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(id, 'evil.exe') } })).status).toBe(201);
    expect((await svc.request('POST', '/api/v1/rules', { token: other, body: { rule: imageRule(RULE_A, 'evil.exe') } })).status).toBe(201);
    const lines = Array.from({ length: 24 }, (_, h) => JSON.stringify({ '@timestamp': iso(BASE + h * HOUR), Image: 'C:\\Tools\\evil.exe', CommandLine: 'evil.exe' }));
    const ingested = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(ingested.status).toBe(200);
    // Oldest first: A, B, A. Each ends before the next starts, so created_at orders them.
    for (const rule of [RULE_A, RULE_B, RULE_A]) {
      const id = await start({ rule_id: rule });
      expect((await svc.request('GET', `/api/v1/replays/${id}?wait=30`)).body.status).toBe('completed');
      replayIds.push(id);
    }
    const shadow = await svc.request('POST', '/api/v1/rules/shadow', { body: { rule_id: RULE_B, target: 'local', duration: 'PT10M', interval: 'PT1M' } });
    expect(shadow.status).toBe(202);
    shadowId = shadow.body.id;
    otherReplay = await start({ rule_id: RULE_A }, other);
  }, 120_000);
  afterAll(async () => {
    await svc.request('POST', `/api/v1/shadows/${shadowId}/stop`);
    await svc.request('GET', `/api/v1/shadows/${shadowId}?wait=30`);
    await svc.request('GET', `/api/v1/replays/${otherReplay}?wait=30`, { token: other });
    await svc.close();
  });

  it('lists the tenant’s replays newest first, with their figures, and none of another tenant', async () => {
    const res = await svc.request('GET', '/api/v1/replays');
    expect(res.status).toBe(200);
    expect(res.body.items.map((r: { id: string }) => r.id)).toEqual([...replayIds].reverse());
    expect(res.body.next_cursor).toBeNull();
    const newest = res.body.items[0];
    expect(newest).toMatchObject({ rule_id: RULE_A, target: 'local', status: 'completed', links: { self: `/api/v1/replays/${replayIds[2]}` } });
    expect(newest.progress).toMatchObject({ chunks_done: newest.result.chunks.done, chunks_total: newest.result.chunks.total });
    expect(newest.result.events_scanned).toBe(24);
    const theirs = await svc.request('GET', '/api/v1/replays', { token: other });
    expect(theirs.body.items.map((r: { id: string }) => r.id)).toEqual([otherReplay]);
  });

  it('filters by rule and status, and pages with a cursor', async () => {
    const byRule = await svc.request('GET', `/api/v1/replays?rule_id=${RULE_A.toUpperCase()}`);
    expect(byRule.body.items.map((r: { id: string }) => r.id)).toEqual([replayIds[2], replayIds[0]]);
    expect((await svc.request('GET', '/api/v1/replays?status=running')).body.items).toEqual([]);
    const first = await svc.request('GET', '/api/v1/replays?limit=2');
    expect(first.body.items.map((r: { id: string }) => r.id)).toEqual([replayIds[2], replayIds[1]]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await svc.request('GET', `/api/v1/replays?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.items.map((r: { id: string }) => r.id)).toEqual([replayIds[0]]);
    expect(second.body.next_cursor).toBeNull();
  });

  it('lists shadow evaluations, the running one with its progress', async () => {
    const running = await until('the shadow reports progress', async () => {
      const res = await svc.request('GET', '/api/v1/shadows?status=running');
      return res.body.items[0]?.progress ? res.body : undefined;
    });
    expect(running.items.map((s: { id: string }) => s.id)).toEqual([shadowId]);
    expect(running.items[0]).toMatchObject({ rule_id: RULE_B, status: 'running', links: { stop: `/api/v1/shadows/${shadowId}/stop` } });
    expect(running.items[0].progress.ends_at).toEqual(expect.any(String));
    expect((await svc.request('GET', `/api/v1/shadows?rule_id=${RULE_A}`)).body.items).toEqual([]);
    expect((await svc.request('GET', '/api/v1/shadows?status=completed')).body.items).toEqual([]);
    expect((await svc.request('GET', '/api/v1/shadows', { token: other })).body.items).toEqual([]);
  });

  it.each([
    ['/api/v1/replays?status=paused', '/query/status'],
    ['/api/v1/replays?limit=0', '/query/limit'],
    ['/api/v1/shadows?cursor=not-a-cursor', '/query/cursor'],
    ['/api/v1/shadows?colour=red', '/query'],
  ])('refuses %s with 400 problem+json', async (path, pointer) => {
    const res = await svc.request('GET', path);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(JSON.stringify(res.body)).toContain(pointer);
  });
});
