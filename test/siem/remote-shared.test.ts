import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
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

  /**
   * A raw server whose keep-alive connections answer `answersPerConnection` requests and then
   * reset on the next one, as a SIEM or its load balancer does when it closes an idle connection
   * just as the client reuses it.
   */
  async function resettingServer(answersPerConnection: number) {
    let connections = 0;
    let requests = 0;
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
      let answered = 0;
      let pending = '';
      socket.on('data', (chunk) => {
        pending += chunk.toString('latin1');
        while (pending.includes('\r\n\r\n')) {
          const head = pending.slice(0, pending.indexOf('\r\n\r\n'));
          const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
          const total = head.length + 4 + length;
          if (pending.length < total) return;
          pending = pending.slice(total);
          requests++;
          if (answered >= answersPerConnection) {
            socket.resetAndDestroy();
            return;
          }
          answered++;
          socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 13\r\nconnection: keep-alive\r\n\r\n{"ok":"yes"}\n`);
        }
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/search/jobs`,
      seen: () => ({ connections, requests }),
      close: () => {
        for (const s of sockets) s.destroy();
        server.close();
      },
    };
  }

  it('sends a request again when the pooled keep-alive socket it went out on had been closed by the SIEM', async () => {
    const server = await resettingServer(1);
    const client = new SiemHttpClient({ kind: 'splunk', target: 't' });
    try {
      const first = await client.json<{ ok: string }>({ method: 'POST', url: server.url, body: 'search=a' });
      const second = await client.json<{ ok: string }>({ method: 'POST', url: server.url, body: 'search=b' });
      expect([first.body.ok, second.body.ok]).toEqual(['yes', 'yes']);
      // The second request went out on the first connection, was reset, and was sent on a new one.
      expect(server.seen()).toEqual({ connections: 2, requests: 3 });
    } finally {
      client.close();
      server.close();
    }
  });

  it('does not send a request again when a fresh connection is reset: the SIEM may have read it', async () => {
    const server = await resettingServer(0);
    const client = new SiemHttpClient({ kind: 'splunk', target: 't' });
    try {
      const err = await client.request({ method: 'POST', url: server.url, body: 'search=a' }).then(
        () => undefined,
        (e: { failure?: string; message: string }) => e,
      );
      expect(err?.failure).toBe('unavailable');
      expect(err?.message).toMatch(/could not be reached/);
      expect(server.seen()).toEqual({ connections: 1, requests: 1 });
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
