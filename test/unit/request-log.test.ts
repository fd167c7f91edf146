import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { requestLog } from '../../api/http/request-log';

describe('request log', () => {
  const lines: Array<Record<string, any>> = [];
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
    const app = express();
    app.use(requestLog(pino({ level: 'info' }, sink)));
    app.get('/ok', (_req, res) => void res.json({ ok: true }));
    app.get('/boom', (_req, res) => void res.status(500).end());
    app.get('/later', (_req, res) => void res.status(501).end());
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const settle = () => new Promise((r) => setTimeout(r, 20));

  it('writes one line per request with its id, and never the headers', async () => {
    const res = await fetch(`${url}/ok?x=1`, { headers: { authorization: 'Bearer dfw_secret', 'x-request-id': 'ci-run-42' } });
    expect(res.headers.get('x-request-id')).toBe('ci-run-42');
    await settle();
    const line = lines.find((l) => l.req?.id === 'ci-run-42')!;
    expect(line).toMatchObject({ level: 30, msg: 'request completed', req: { id: 'ci-run-42', method: 'GET', url: '/ok?x=1' }, res: { statusCode: 200 } });
    expect(line.req.remoteAddress).toMatch(/127\.0\.0\.1/);
    expect(line.responseTime).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(line)).not.toContain('dfw_secret');
  });

  it('makes up an id when the given one is not well formed', async () => {
    const res = await fetch(`${url}/ok`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs 5xx as errors, except the 501 of endpoints not built yet', async () => {
    const boom = await fetch(`${url}/boom`);
    const later = await fetch(`${url}/later`);
    await settle();
    expect(lines.find((l) => l.req?.id === boom.headers.get('x-request-id'))).toMatchObject({ level: 50, msg: 'request errored', res: { statusCode: 500 } });
    expect(lines.find((l) => l.req?.id === later.headers.get('x-request-id'))).toMatchObject({ level: 30, res: { statusCode: 501 } });
  });
});
