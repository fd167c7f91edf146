import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient, ApiError, ConnectionError } from '../../cli/api-client';
import { Deadline } from '../../cli/deadline';
import { backoffMs, retryAfterMs } from '../../cli/retry';

/** A loopback server answering each request with the next of `answers` (the last one repeats), recording what it got. */
async function serve(answers: Array<{ status: number; headers?: Record<string, string>; body?: unknown }>) {
  const seen: Array<{ method: string; key: string | undefined }> = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method!, key: req.headers['idempotency-key'] as string | undefined });
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    req.resume();
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(JSON.stringify(answer.body ?? { title: `status ${answer.status}` }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('CLI retries while waiting', () => {
  it('backs off exponentially with jitter, capped at 10 s', () => {
    expect(backoffMs(0, () => 0)).toBe(250);
    expect(backoffMs(0, () => 1)).toBe(500);
    expect(backoffMs(3, () => 0)).toBe(2000);
    expect(backoffMs(3, () => 1)).toBe(4000);
    expect(backoffMs(50, () => 1)).toBe(10_000);
    expect(backoffMs(50, () => 0)).toBe(5000);
  });

  it('reads Retry-After as seconds or as an HTTP date, and ignores what it cannot read', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(10_000);
    expect(retryAfterMs(new Date(Date.UTC(2020, 0, 1)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(0);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it('retries a read through 503 and 429, honouring Retry-After, and says once that the service went and once that it is back', async () => {
    const svc = await serve([
      { status: 503, headers: { 'retry-after': '1' } },
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 200, body: { ok: true } },
    ]);
    const said: string[] = [];
    try {
      const client = new ApiClient({ url: svc.url, token: 't' }).retrying(new Deadline(30), (line) => said.push(line));
      const started = Date.now();
      const answer = await client.request<{ ok: boolean }>('GET', '/deployments/x');
      expect(answer).toEqual({ status: 200, body: { ok: true } });
      // Two pauses of at least the second Retry-After asked for.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      expect(svc.seen.map((s) => s.method)).toEqual(['GET', 'GET', 'GET']);
      expect(said).toHaveLength(2);
      expect(said[0]).toMatch(new RegExp(`^detflow: ${svc.url} answers 503 status 503; retrying for up to \\d+ s \\(--timeout\\), next in 1\\.0 s\\n$`));
      expect(said[1]).toMatch(new RegExp(`^detflow: ${svc.url} answers again after \\d+ s; waiting goes on\\n$`));
    } finally {
      await svc.close();
    }
  });

  it('sends a submission once without an Idempotency-Key, and again with the same key when it has one', async () => {
    const svc = await serve([{ status: 502 }, { status: 202, body: { id: 'd' } }]);
    try {
      const client = new ApiClient({ url: svc.url, token: 't' }).retrying(new Deadline(30), () => undefined);
      await expect(client.request('POST', '/rules/deploy', { rule_id: 'r' })).rejects.toMatchObject({ name: 'ApiError', status: 502 });
      expect(svc.seen).toHaveLength(1);
      svc.seen.length = 0;
      const answer = await client.request('POST', '/rules/deploy', { rule_id: 'r' }, { idempotencyKey: 'k-1' });
      expect(answer.status).toBe(202);
      // 502, then 202 to the second attempt, which carried the same key.
      expect(svc.seen).toEqual([
        { method: 'POST', key: 'k-1' },
        { method: 'POST', key: 'k-1' },
      ]);
    } finally {
      await svc.close();
    }
  });

  it('does not retry an answer that says no (404), nor without a wait', async () => {
    const svc = await serve([{ status: 404 }, { status: 503 }]);
    try {
      const waiting = new ApiClient({ url: svc.url, token: 't' }).retrying(new Deadline(30), () => undefined);
      await expect(waiting.request('GET', '/deployments/x')).rejects.toBeInstanceOf(ApiError);
      expect(svc.seen).toHaveLength(1);
      const plain = new ApiClient({ url: svc.url, token: 't' });
      await expect(plain.request('GET', '/deployments/x')).rejects.toMatchObject({ status: 503 });
      expect(svc.seen).toHaveLength(2);
    } finally {
      await svc.close();
    }
  });

  it('gives up on an unreachable service when the deadline comes, saying so', async () => {
    const svc = await serve([{ status: 200 }]);
    await svc.close();
    const said: string[] = [];
    const client = new ApiClient({ url: svc.url, token: 't' }).retrying(new Deadline(2), (line) => said.push(line));
    const started = Date.now();
    const err = await client.request('GET', '/deployments/x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toMatch(/ECONNREFUSED.*still so when the --timeout of 2 s ran out$/);
    // Retried up to the deadline itself, and not much past it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(said).toEqual([expect.stringMatching(/is unreachable \(fetch failed \(ECONNREFUSED\)\)/)]);
  });
});
