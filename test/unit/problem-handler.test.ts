import type http from 'node:http';
import express from 'express';
import pino from 'pino';
import { ServiceError } from '@temporalio/client';
import { problemHandler } from '../../api/http/pipeline';

/** A gRPC error as @grpc/grpc-js makes them: a code, details and metadata. */
function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
}

describe('problemHandler: Temporal not answering', () => {
  let server: http.Server;
  let base: string;
  const thrown: { err?: unknown } = {};
  beforeAll(async () => {
    const app = express();
    app.get('/x', () => {
      throw thrown.err;
    });
    app.use(problemHandler(pino({ level: 'silent' })));
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it.each([
    ['unavailable', new ServiceError('Failed to start workflow', { cause: grpcError(14, 'connection refused') })],
    ['deadline exceeded, bare', grpcError(4, 'Deadline exceeded')],
    ['resource exhausted', grpcError(8, 'namespace rate limit exceeded')],
  ])('answers 503 problem+json with Retry-After when it is %s', async (_what, err) => {
    thrown.err = err;
    const res = await fetch(`${base}/x`);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(((await res.json()) as { type: string }).type).toMatch(/unavailable$/);
  });

  it('keeps other gRPC failures as 500s', async () => {
    thrown.err = grpcError(3, 'invalid argument');
    expect((await fetch(`${base}/x`)).status).toBe(500);
  });
});
