import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { endpointProblem } from '../../siem/remote/endpoint';
import { parseRetryAfter } from '../../siem/remote/errors';
import { SiemHttpClient } from '../../siem/remote/http-client';
import { Semaphore } from '../../siem/remote/semaphore';
import { ownedOrUnmarked, readMarker, refuseForeignObject, describeDeployment, queryHash } from '../../siem/remote/deployed-marker';

/** The pieces every remote adapter shares: what reaches a SIEM, how, and what an error may say. */
describe('remote SIEM plumbing', () => {
  it('keeps the concurrency cap even when callers queue and loop', async () => {
    const slots = new Semaphore(2);
    let inFlight = 0;
    let peak = 0;
    const order: number[] = [];
    const task = async (id: number) => {
      for (let i = 0; i < 5; i++) {
        await slots.run(async () => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          order.push(id);
          await new Promise((r) => setImmediate(r));
          inFlight--;
        });
      }
    };
    await Promise.all([1, 2, 3, 4, 5].map(task));
    expect(peak).toBe(2);
    expect(order).toHaveLength(25);
    expect(slots.inFlight).toBe(0);
  });

  it('accepts plain http for loopback literals and localhost only', () => {
    expect(endpointProblem('http://127.0.0.1:8089')).toBeNull();
    expect(endpointProblem('http://[::1]:8089')).toBeNull();
    expect(endpointProblem('http://localhost:8089')).toBeNull();
    expect(endpointProblem('https://splunk.example:8089')).toBeNull();
    for (const url of ['http://splunk.example:8089', 'http://ip6-localhost', 'http://x.localhost', 'http://127.0.0.1.evil.example', 'http://0.0.0.0:1']) {
      expect([url, endpointProblem(url)]).toEqual([url, expect.stringContaining('https')]);
    }
    expect(endpointProblem('https://user:pw@splunk.example')).toMatch(/credentials/);
    expect(endpointProblem('ftp://splunk.example')).toMatch(/scheme ftp/);
  });

  it('reads Retry-After as seconds or an HTTP date, and nothing else', () => {
    const now = new Date('2026-11-26T12:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Thu, 26 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Thursday, 26-Nov-26 12:00:30 GMT', now)).toBe(30_000);
    for (const v of ['1.5', '-1', '0.5', 'soon', '']) expect([v, parseRetryAfter(v, now)]).toEqual([v, undefined]);
  });

  it('redacts every form of a credential, and the Authorization the request sent, before cutting the vendor message', async () => {
    const secret = 'p@ss word/with+signs';
    const runtimeToken = 'eyJ-runtime-token-obtained-at-run-time';
    const server = http.createServer((req, res) => {
      // A hostile or careless proxy echoing what it received, padded so a cut at 500 characters would fall inside it.
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`${'x'.repeat(490)} auth=${req.headers.authorization} raw=${secret} url=${encodeURIComponent(secret)} b64=${Buffer.from(secret).toString('base64')}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    const client = new SiemHttpClient({ kind: 'splunk', target: 't', secrets: [secret] });
    try {
      const err = await client.request({ method: 'GET', url, headers: { Authorization: `Bearer ${runtimeToken}` } }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/answered 400/);
      for (const leaked of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64'), runtimeToken, runtimeToken.slice(0, 10)])
        expect(err!.message).not.toContain(leaked);
    } finally {
      client.close();
      server.close();
    }
  });

  it('ends an answer that trickles past the timeout', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new SiemHttpClient({ kind: 'elastic', target: 't', timeoutMs: 300 });
    try {
      const err = await client.request({ method: 'GET', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` }).then(
        () => undefined,
        (e: { failure?: string }) => e,
      );
      expect(err?.failure).toBe('timeout');
    } finally {
      client.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it('refuses to write over an object another target deployed, and keeps it out of this target’s inventory', () => {
    const tenantId = 'acme-soc';
    const mine = '11111111-1111-4111-8111-111111111111';
    const theirs = '22222222-2222-4222-8222-222222222222';
    const marker = readMarker(
      describeDeployment('t', { deploymentId: '33333333-3333-4333-8333-333333333333', tenantId, targetId: theirs, version: 2, queryHash: queryHash('q') }),
    );
    expect(marker).toMatchObject({ tenantId, targetId: theirs, version: 2 });
    expect(() => refuseForeignObject('splunk', 'detflow-x', marker, { tenantId, targetId: mine })).toThrow(/another detflow target/);
    expect(() => refuseForeignObject('splunk', 'detflow-x', marker, { tenantId, targetId: theirs })).not.toThrow();
    expect(ownedOrUnmarked(marker, tenantId, mine)).toBe(false);
    expect(ownedOrUnmarked(null, tenantId, mine)).toBe(true);
  });
});
