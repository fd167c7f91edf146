import http from 'node:http';
import net from 'node:net';
import pino from 'pino';
import { startApi } from '../../api/server';
import { SecretBox } from '../../config/secret-box';
import { openSiemAdapters } from '../../siem/adapters';
import { createApiKey, request, sigmaRule, startTestService, until, type TestService } from '../support/harness';

const ev = (i: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    '@timestamp': new Date(Date.UTC(2026, 10, 20, 10, 0, i)).toISOString(),
    Image: `C:\\Windows\\System32\\proc${i}.exe`,
    CommandLine: `proc${i} --flag`,
    ...extra,
  });

describe('POST /events (local event store ingestion)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.close());

  const ingest = (body: string, query = '', contentType = 'application/x-ndjson', token?: string) =>
    svc.request('POST', `/api/v1/events${query}`, { body, headers: { 'content-type': contentType }, ...(token ? { token } : {}) });

  it('stores good lines and lists bad ones by line number, losing nothing else', async () => {
    const lines = [ev(1), '{not json', ev(2), '', '[1,2]', JSON.stringify({ Image: 'no time' }), ev(3)];
    const res = await ingest(lines.join('\n'), '?product=windows&category=process_creation');
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(3);
    expect(res.body.rejected).toBe(3);
    expect(res.body.errors.map((e: { line: number }) => e.line)).toEqual([2, 5, 6]);
    expect(res.body.errors[2].error).toMatch(/@timestamp/);
    const stats = await svc.siem.localStore.tenantStats('default');
    expect(stats).toMatchObject({ events: 3 });
  });

  it('answers 400 when every line is bad, storing nothing', async () => {
    const before = (await svc.siem.localStore.tenantStats('default')).events;
    const res = await ingest('{bad\n{"x":1}\n');
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/body/line/1', '/body/line/2']);
    expect((await svc.siem.localStore.tenantStats('default')).events).toBe(before);
  });

  it('accepts a JSON array and a timestamp field named per request, and keeps tenants apart', async () => {
    const res = await ingest(
      JSON.stringify([
        { ts: 1795600000, Image: 'a.exe' },
        { ts: '2026-11-20T11:00:00Z', Image: 'b.exe' },
      ]),
      '?timestamp_field=ts',
      'application/json',
    );
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(2);
    expect((await svc.siem.localStore.tenantStats('other-tenant')).events).toBe(0);
  });

  it('refuses an upload over the limit without storing any of it', async () => {
    const before = (await svc.siem.localStore.tenantStats('default')).events;
    const line = ev(9, { padding: 'x'.repeat(1000) });
    const big = Array.from({ length: Math.ceil((9 * 1024 * 1024) / line.length) }, () => line).join('\n');
    const res = await ingest(big);
    expect(res.status).toBe(413);
    expect((await svc.siem.localStore.tenantStats('default')).events).toBe(before);
  });

  it('checks the target, its kind, the permission and the environment', async () => {
    expect((await ingest(ev(1), '?target=nope')).status).toBe(404);
    const splunk = await svc.request('POST', '/api/v1/settings/targets', {
      body: {
        name: 'splunk',
        kind: 'splunk',
        environment: 'prod',
        connection: { management_url: 'https://splunk.example:8089', token: 'a-token' },
        cost_model: { currency: 'USD', price_per_gb_scanned: 1, triage_minutes_per_alert: 5, cost_per_analyst_hour: 60 },
      },
    });
    expect(splunk.status).toBe(201);
    expect((await ingest(ev(1), '?target=splunk')).status).toBe(400);
    const reader = await createApiKey(svc, svc.token, { name: 'reader', permissions: ['rules:read'] });
    expect((await ingest(ev(1), '', 'application/x-ndjson', reader.token)).status).toBe(403);
    const prodOnly = await createApiKey(svc, svc.token, { name: 'prod', permissions: ['events:write'], environments: ['prod'] });
    expect((await ingest(ev(1), '', 'application/x-ndjson', prodOnly.token)).status).toBe(403);
    expect((await ingest('x', '', 'text/csv')).status).toBe(415);
  });

  it('refuses events in an API process running apart from the worker (scaled topology), storing nothing, while rule tests still run there', async () => {
    // As api/main.ts opens it: an in-memory store for fixtures that must not take events.
    const siem = await openSiemAdapters({ dataDir: undefined, acceptsLocalEvents: false });
    const api = await startApi(
      {
        config: { bodyLimit: '5mb', publicUrl: undefined, ingestLimitBytes: 8 * 1024 * 1024 },
        database: svc.database,
        logger: pino({ level: 'silent' }),
        secrets: SecretBox.fromPassphrase('split-api'),
        siem,
        temporal: { client: svc.client, namespace: 'default', taskQueue: svc.taskQueue, uiUrl: undefined },
      },
      '127.0.0.1',
      0,
    );
    try {
      const before = (await svc.siem.localStore.tenantStats('default')).events;
      const res = await request(api.url, 'POST', '/api/v1/events', { token: svc.token, body: [ev(7), ev(8)].join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
      expect(res.status).toBe(409);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toMatch(/local target.*nothing was stored/);
      expect((await siem.localStore.tenantStats('default')).events).toBe(0);
      expect((await svc.siem.localStore.tenantStats('default')).events).toBe(before);
      // Rule tests need no stored events: their fixtures load into this process's own store.
      const ruleId = 'e7e57000-0000-4000-8000-000000000001';
      expect((await svc.request('POST', '/api/v1/rules', { body: { rule: sigmaRule(ruleId) } })).status).toBe(201);
      const fixture = (name: string, expect: string, image: string) => JSON.stringify({ name, expect, event: { Image: image } });
      const tested = await request(api.url, 'POST', '/api/v1/rules/test', {
        token: svc.token,
        body: { rule_id: ruleId, target: 'local', fixtures: [fixture('hit', 'match', 'C:\\x\\evil.exe'), fixture('miss', 'no_match', 'C:\\x\\good.exe')] },
      });
      expect(tested.status).toBe(200);
      expect(tested.body.passed).toBe(true);
    } finally {
      await api.close();
      await siem.close();
    }
  });
  it('refuses a line whose bytes are not UTF-8 by its number, keeping the rest; a JSON array that is not UTF-8 is a 400', async () => {
    const before = (await svc.siem.localStore.tenantStats('default')).events;
    const notUtf8 = Buffer.from([...Buffer.from('{"@timestamp":"2026-11-20T10:00:00Z","Image":"'), 0xc3, 0x28, ...Buffer.from('"}')]);
    const body = Buffer.concat([Buffer.from(`${ev(30)}\n`), notUtf8, Buffer.from(`\n${ev(31)}\n`)]);
    const res = await svc.request('POST', '/api/v1/events', { body: new Uint8Array(body), headers: { 'content-type': 'application/x-ndjson' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: 2, rejected: 1 });
    expect(res.body.errors).toEqual([{ line: 2, error: 'the line is not valid UTF-8 (JSON text must be UTF-8); it was skipped' }]);
    expect((await svc.siem.localStore.tenantStats('default')).events).toBe(before + 2);

    const array = Buffer.concat([Buffer.from('[{"@timestamp":"2026-11-20T10:00:00Z","a":"'), Buffer.from([0xff]), Buffer.from('"}]')]);
    const refused = await svc.request('POST', '/api/v1/events', { body: new Uint8Array(array), headers: { 'content-type': 'application/json' } });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(refused.body.detail).toMatch(/not valid UTF-8/);
    expect((await svc.siem.localStore.tenantStats('default')).events).toBe(before + 2);
  });

  it('refuses events holding U+0000 or an unpaired surrogate (alerts could not store them), by line, keeping the rest', async () => {
    const nul = '{"@timestamp":"2026-11-20T10:00:00Z","Image":"a\\u0000b"}';
    const escapedBackslash = '{"@timestamp":"2026-11-20T10:00:00Z","Image":"C:\\\\u0000x"}';
    const res = await ingest([ev(20), nul, escapedBackslash].join('\n'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: 2, rejected: 1 });
    expect(res.body.errors).toEqual([{ line: 2, error: 'the event contains U+0000 at /Image, which alerts (kept in PostgreSQL) cannot store' }]);

    const array = await ingest('[{"@timestamp":"2026-11-20T10:00:00Z","a":"ok"},{"@timestamp":"2026-11-20T10:00:00Z","a":"\\ud800"}]', '', 'application/json');
    expect(array.status).toBe(200);
    expect(array.body).toMatchObject({ accepted: 1, rejected: 1 });
    expect(array.body.errors[0]).toEqual({ line: 2, error: 'the event contains an unpaired UTF-16 surrogate at /a, which alerts (kept in PostgreSQL) cannot store' });

    // A number a JSON array element holds beyond a double's range is refused, not stored as null.
    const huge = await ingest('[{"@timestamp":"2026-11-20T10:00:00Z","n":{"x":[1e400]}},{"@timestamp":"2026-11-20T10:00:00Z","n":1}]', '', 'application/json');
    expect(huge.body).toMatchObject({ accepted: 1, rejected: 1 });
    expect(huge.body.errors[0]).toEqual({ line: 1, error: 'the number at /n/x/0 is beyond the range of a double; send it as a string to keep it' });
  });

  it('tells what it stored by logsource, and warns of events that no rule with a logsource will match', async () => {
    const none = { product: null, category: null, service: null };
    // Logsource read from fields of the events: some carry them, some do not.
    const fromFields = await ingest(
      [
        ev(30, { vendor: 'Windows', kind: 'process_creation' }),
        ev(31, { vendor: 'windows', kind: 'Process_Creation' }),
        ev(32, { vendor: 'linux' }),
        ev(33),
        '{bad',
        ev(34, { kind: '' }),
      ].join('\n'),
      '?product_field=vendor&category_field=kind',
    );
    expect(fromFields.status).toBe(200);
    expect(fromFields.body).toMatchObject({ accepted: 5, rejected: 1, logsources_truncated: false });
    expect(fromFields.body.logsources).toEqual([
      { product: 'windows', category: 'process_creation', service: null, events: 2 },
      { product: 'linux', category: null, service: null, events: 1 },
      { product: null, category: '', service: null, events: 1 },
      { ...none, events: 1 },
    ]);
    expect(fromFields.body.warnings).toHaveLength(1);
    expect(fromFields.body.warnings[0]).toMatchObject({ code: 'no_logsource', events: 1 });
    expect(fromFields.body.warnings[0].message).toMatch(
      /^1 event was stored with no logsource.*will ever match it\. It lacks the fields named by product_field=vendor, category_field=kind/,
    );

    // Logsource named by the query: every event has it, nothing to warn of.
    const fromQuery = await ingest([ev(35), ev(36), ev(37)].join('\n'), '?product=Windows&category=process_creation');
    expect(fromQuery.body.logsources).toEqual([{ product: 'windows', category: 'process_creation', service: null, events: 3 }]);
    expect(fromQuery.body.warnings).toEqual([]);

    // A fixed product with a category read per event: partly named, still a logsource.
    const mixed = await ingest([ev(38, { kind: 'network_connection' }), ev(39)].join('\n'), '?product=windows&category_field=kind');
    expect(mixed.body.logsources).toEqual([
      { product: 'windows', category: 'network_connection', service: null, events: 1 },
      { product: 'windows', category: null, service: null, events: 1 },
    ]);
    expect(mixed.body.warnings).toEqual([]);

    // No logsource at all.
    const bare = await ingest([ev(40), ev(41)].join('\n'));
    expect(bare.body.logsources).toEqual([{ ...none, events: 2 }]);
    expect(bare.body.warnings).toEqual([
      {
        code: 'no_logsource',
        events: 2,
        message:
          '2 events were stored with no logsource (no product, category or service), so no rule with a logsource will ever match them. Name the logsource of the batch with ?product=…&category=… (or service=…), or read it from fields of the events with ?product_field=…&category_field=… (or service_field=…).',
      },
    ]);

    // The OpenAPI document describes the new fields.
    const doc = (await svc.request('GET', '/api/v1/openapi.json')).body;
    const props = doc.components.schemas.IngestResult.properties;
    expect(Object.keys(props)).toEqual(expect.arrayContaining(['logsources', 'logsources_truncated', 'warnings']));
    expect(Object.keys(props.logsources.items.properties)).toEqual(['product', 'category', 'service', 'events']);
    expect(props.warnings.items.properties.code.enum).toEqual(['no_logsource']);
  });
});

/**
 * Ingest cannot stall the service (issue 14, item 8): one event's size is capped, a line is split
 * in time linear in its length, the event loop stays free during an upload, and a body that comes
 * too slowly is a 408 problem.
 */
describe('POST /events under a per-event cap and a body deadline', () => {
  const CAP = 64 * 1024;
  const BODY_TIMEOUT_SECONDS = 3;
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ config: { maxEventBytes: CAP, bodyTimeoutSeconds: BODY_TIMEOUT_SECONDS } });
  });
  afterAll(() => svc.close());

  const storedEvents = async () => (await svc.siem.localStore.tenantStats('default')).events;
  /** Batches the store is still reading or writing: none may be left behind by a request that ended. */
  const batchesUnderWay = () => (svc.siem.localStore as unknown as { ingesting: Set<unknown> }).ingesting.size;

  type Streamed = { status: number; headers: http.IncomingHttpHeaders; body: any };
  /** POSTs `chunks` as a chunked body, waiting `gapMs` between chunks. */
  function streamUpload(path: string, chunks: Iterable<Buffer>, gapMs: number, contentType = 'application/x-ndjson', onWritten: () => void = () => {}): Promise<Streamed> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${svc.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${svc.token}`, 'content-type': contentType } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
      });
      req.on('error', reject);
      const it = chunks[Symbol.iterator]();
      const next = () => {
        const n = it.next();
        if (n.done) req.end();
        else
          req.write(n.value, () => {
            onWritten();
            setTimeout(next, gapMs);
          });
      };
      next();
    });
  }

  it('rejects a line over DETFLOW_MAX_EVENT_KB by its line number and stores the other lines', async () => {
    const before = await storedEvents();
    const huge = ev(51, { padding: 'p'.repeat(CAP) });
    const justUnder = ev(52, { padding: 'é'.repeat(Math.floor((CAP - 200) / 2)) });
    // Streamed in 16 KiB chunks, so the long line spans several of them.
    const body = Buffer.from([ev(50), huge, justUnder, ev(53)].join('\n'));
    const chunks = Array.from({ length: Math.ceil(body.length / 16384) }, (_, i) => body.subarray(i * 16384, (i + 1) * 16384));
    const res = await streamUpload('/api/v1/events', chunks, 0);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ accepted: 3, rejected: 1 });
    expect(res.body.errors).toEqual([{ line: 2, error: `the event is larger than ${CAP} bytes, the largest one event may be (DETFLOW_MAX_EVENT_KB); it was skipped` }]);
    expect(await storedEvents()).toBe(before + 3);

    // A JSON array element over the cap is refused the same way, by its position.
    const array = await svc.request('POST', '/api/v1/events', { body: [JSON.parse(ev(54)), JSON.parse(huge)] });
    expect(array.status).toBe(200);
    expect(array.body).toMatchObject({ accepted: 1, rejected: 1 });
    expect(array.body.errors[0].line).toBe(2);

    // Only lines over the cap: nothing stored, a 400 naming the line, as for any batch of bad lines.
    const alone = await svc.request('POST', '/api/v1/events', { body: huge, headers: { 'content-type': 'application/x-ndjson' } });
    expect(alone.status).toBe(400);
    expect(alone.body.errors).toEqual([{ pointer: '/body/line/1', message: expect.stringMatching(/larger than 65536 bytes/) }]);
  });

  // Whether /readyz stays under 100 ms meanwhile is a figure of bench:ingest (measured beside an idle
  // baseline); here, without a clock: the probes are answered all along the upload, not only after it.
  it('keeps answering /readyz all through a body of several MB without a newline streamed slowly', async () => {
    const piece = Buffer.alloc(64 * 1024, 'a');
    const chunks = Array.from({ length: 96 }, () => piece); // 6 MiB, one line
    let written = 0;
    const answeredAtChunk: number[] = [];
    let uploading = true;
    const probe = (async () => {
      while (uploading) {
        const res = await fetch(`${svc.url}/readyz`);
        await res.text();
        expect(res.status).toBe(200);
        if (uploading) answeredAtChunk.push(written);
      }
    })();
    const res = await streamUpload('/api/v1/events', chunks, 5, 'application/x-ndjson', () => written++).finally(() => (uploading = false));
    await probe;
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ pointer: '/body/line/1', message: expect.stringMatching(/larger than 65536 bytes/) }]);
    expect(answeredAtChunk.length).toBeGreaterThanOrEqual(20);
    // Answered in every quarter of the upload: the long line is not held up to be handled at its end.
    const quarters = new Set(answeredAtChunk.map((n) => Math.min(3, Math.floor((n / chunks.length) * 4))));
    expect([...quarters].sort()).toEqual([0, 1, 2, 3]);
  });

  /**
   * Sends the headers and part of a body on a raw connection, then nothing more; resolves with
   * what the server wrote before closing the connection.
   */
  function stalledRequest(path: string, contentType: string, partOfBody: string): Promise<{ raw: string; closedAfterMs: number }> {
    return new Promise((resolve, reject) => {
      const url = new URL(svc.url);
      const socket = net.connect(Number(url.port), url.hostname);
      const started = Date.now();
      let raw = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (raw += d));
      socket.on('error', reject);
      socket.on('close', () => resolve({ raw, closedAfterMs: Date.now() - started }));
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${svc.token}\r\nContent-Type: ${contentType}\r\nContent-Length: 100000\r\n\r\n${partOfBody}`,
      );
    });
  }

  const parseRaw = (raw: string) => {
    const [head, body] = [raw.slice(0, raw.indexOf('\r\n\r\n')), raw.slice(raw.indexOf('\r\n\r\n') + 4)];
    return { status: Number(head.split(' ')[1]), head: head.toLowerCase(), body: JSON.parse(body) as { type: string; status: number; detail: string } };
  };

  it('answers a body that does not arrive within DETFLOW_BODY_TIMEOUT_SECONDS with a 408 problem, storing nothing, and closes the connection', async () => {
    const before = await storedEvents();
    // An event upload, and a JSON body (the parser reading it), at the same time.
    const [upload, jsonBody] = await Promise.all([
      stalledRequest('/api/v1/events', 'application/x-ndjson', `${ev(60)}\n${ev(61)}\n`),
      stalledRequest('/api/v1/rules', 'application/json', '{"rule": "'),
    ]);
    const { raw, closedAfterMs } = upload;
    const res = parseRaw(raw);
    expect(res.status).toBe(408);
    expect(res.head).toMatch(/content-type: application\/problem\+json/);
    expect(res.head).toMatch(/connection: close/);
    expect(res.body).toMatchObject({ type: 'https://detflow.dev/problems/request-timeout', status: 408 });
    expect(res.body.detail).toMatch(/did not arrive within 3 s/);
    expect(closedAfterMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_SECONDS * 1000 - 50);
    expect(closedAfterMs).toBeLessThan(BODY_TIMEOUT_SECONDS * 1000 + 5000);
    // The upload ended with the answer: nothing stored, nothing left reading.
    await until('the upload to end', async () => (batchesUnderWay() === 0 ? true : undefined), 5);
    expect(await storedEvents()).toBe(before);

    // The JSON body too: the same problem, not Node's bare 408.
    const json = parseRaw(jsonBody.raw);
    expect(json.status).toBe(408);
    expect(json.body.type).toBe('https://detflow.dev/problems/request-timeout');

    // The OpenAPI document tells of it, on routes that take a body.
    const paths = (await svc.request('GET', '/api/v1/openapi.json')).body.paths;
    expect(paths['/events'].post.responses['408'].content['application/problem+json']).toBeDefined();
    expect(paths['/alerts'].get.responses['408']).toBeUndefined();

    // The service goes on taking events.
    const ok = await svc.request('POST', '/api/v1/events', { body: ev(62), headers: { 'content-type': 'application/x-ndjson' } });
    expect(ok.status).toBe(200);
  });

  it('ends the upload of a client that goes away mid-body, storing nothing', async () => {
    const before = await storedEvents();
    const url = new URL(svc.url);
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /api/v1/events HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${svc.token}\r\nContent-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n${ev(70)}\n`,
    );
    await until('the upload to start', async () => (batchesUnderWay() > 0 ? true : undefined), 5);
    socket.destroy();
    await until('the upload to end', async () => (batchesUnderWay() === 0 ? true : undefined), 5);
    expect(await storedEvents()).toBe(before);
  });
});
