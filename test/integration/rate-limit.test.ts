import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { rateLimitCounters } from '../../db/schema';
import { nextUtcMidnight, utcDay } from '../../api/limits/rate-limit';
import { createTenant, request, startTestService, testDbKind, type TestService } from '../support/harness';

describe('per-tenant daily rate limits', () => {
  let svc: TestService;
  let clock = new Date('2026-11-25T10:00:00Z');
  beforeAll(async () => {
    svc = await startTestService({ now: () => clock });
  });
  afterAll(() => svc.close());

  async function presetCount(bucket: string, count: number, at = clock) {
    await svc.database.db
      .insert(rateLimitCounters)
      .values({ bucket, day: utcDay(at), count })
      .onConflictDoUpdate({ target: [rateLimitCounters.bucket, rateLimitCounters.day], set: { count } });
  }

  it('counts down, then answers 429 with Retry-After and the three headers', async () => {
    const token = await createTenant(svc, 'freebie', 'free');
    await presetCount('tenant:freebie', 9_998);
    const a = await svc.request('GET', '/api/v1/settings/api-keys', { token });
    expect(a.status).toBe(200);
    expect(a.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(a.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(a.headers.get('x-ratelimit-reset')).toBe(String(nextUtcMidnight(clock)));
    const b = await svc.request('GET', '/api/v1/settings/api-keys', { token });
    expect(b.status).toBe(200);
    expect(b.headers.get('x-ratelimit-remaining')).toBe('0');
    const c = await svc.request('GET', '/api/v1/settings/api-keys', { token });
    expect(c.status).toBe(429);
    expect(c.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(c.body.type).toBe('https://detflow.dev/problems/rate-limited');
    expect(c.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(c.headers.get('retry-after')).toBe(String(nextUtcMidnight(clock) - Math.floor(clock.getTime() / 1000)));
    // Other tenants are not affected.
    expect((await svc.request('GET', '/api/v1/settings/api-keys')).status).toBe(200);
    // The next UTC day starts a new count.
    clock = new Date('2026-11-26T00:00:01Z');
    const d = await svc.request('GET', '/api/v1/settings/api-keys', { token });
    expect(d.status).toBe(200);
    expect(d.headers.get('x-ratelimit-remaining')).toBe('9999');
    clock = new Date('2026-11-25T10:00:00Z');
  });

  it('gives each tier its own daily limit', async () => {
    const pro = await createTenant(svc, 'pro-co', 'professional');
    const res = await svc.request('GET', '/api/v1/settings/api-keys', { token: pro });
    expect(res.headers.get('x-ratelimit-limit')).toBe('100000');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('99999');
    const changed = await svc.request('PATCH', '/api/v1/settings/tenants/pro-co', { body: { tier: 'enterprise' } });
    expect(changed.body.tier).toBe('enterprise');
    expect((await svc.request('GET', '/api/v1/settings/api-keys', { token: pro })).headers.get('x-ratelimit-limit')).toBe('1000000');
  });

  it('reports 2^31-1 for Unlimited and never refuses it', async () => {
    const token = await createTenant(svc, 'bigcorp', 'unlimited');
    await presetCount('tenant:bigcorp', 50_000_000);
    const res = await svc.request('GET', '/api/v1/settings/api-keys', { token });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('2147483647');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('2147483647');
  });

  it('counts requests without a valid token against their client address', async () => {
    await presetCount('anon:127.0.0.2', 10_000);
    const res = await svc.request('GET', '/api/v1/settings/api-keys', { token: null, localAddress: '127.0.0.2' });
    expect(res.status).toBe(429);
    expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
    // Another address has its own count; a bad token counts like no token.
    const other = await svc.request('GET', '/api/v1/settings/api-keys', { token: null, localAddress: '127.0.0.3' });
    expect(other.status).toBe(401);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('9999');
    const badToken = await svc.request('GET', '/api/v1/settings/api-keys', { token: 'dfw_nope', localAddress: '127.0.0.3' });
    expect(badToken.status).toBe(401);
    expect(badToken.headers.get('x-ratelimit-remaining')).toBe('9998');
  });
});

const onPostgres = testDbKind() === 'postgres' ? describe : describe.skip;

onPostgres('rate-limit counters shared by two API processes on one PostgreSQL database', () => {
  let svc: TestService;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await svc.close();
  });

  function freePort(): Promise<number> {
    return new Promise((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
  }

  async function startApiProcess(): Promise<string> {
    const port = await freePort();
    const child = spawn(process.execPath, [require.resolve('tsx/cli'), path.join(__dirname, '../../api/main.ts')], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        DATABASE_URL: svc.databaseUrl!,
        TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
        TEMPORAL_TASK_QUEUE: svc.taskQueue,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DETFLOW_SECRET_KEY: 'shared-by-both-api-processes',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += String(d)));
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        if ((await fetch(`${url}/healthz`)).ok) return url;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`API process did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('lets exactly the limit through, whichever process answers', async () => {
    const token = await createTenant(svc, 'shared-co', 'free');
    const [a, b] = await Promise.all([startApiProcess(), startApiProcess()]);
    await svc.database.db.execute(sql`insert into rate_limit_counters (bucket, day, count) values ('tenant:shared-co', ${utcDay(new Date())}, 9990)`);
    const statuses: number[] = [];
    const remaining: number[] = [];
    // Concurrent requests through both processes: the database counter decides for all of them.
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => request(i % 2 ? a : b, 'GET', '/api/v1/settings/api-keys', { token })));
    for (const r of results) {
      statuses.push(r.status);
      remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
    // Every successful request saw a distinct count.
    expect(new Set(remaining.filter((_, i) => statuses[i] === 200)).size).toBe(10);
    const after = await request(a, 'GET', '/api/v1/settings/api-keys', { token });
    expect(after.status).toBe(429);
  });
});
