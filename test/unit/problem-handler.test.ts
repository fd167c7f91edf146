import type http from 'node:http';
import net from 'node:net';
import express from 'express';
import pino from 'pino';
import { ServiceError } from '@temporalio/client';
import { problemHandler } from '../../api/http/pipeline';
import { openDatabase } from '../../db/client';
import { isDatabaseBusy, isDatabaseUnavailable, markDatabaseBusy, markDatabaseUnreachable } from '../../db/unavailable';

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

/** An error as node-postgres makes them: a SQLSTATE or a socket code on the error, or wrapped by the ORM as its cause. */
function pgError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code ? { code } : {});
}

describe('problemHandler: the database away', () => {
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
    ['refusing connections', markDatabaseUnreachable(pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))],
    ['shut down by its administrator (57P01)', pgError('terminating connection due to administrator command', '57P01')],
    ['starting up (57P03)', pgError('the database system is starting up', '57P03')],
    ['a connection exception (08006)', pgError('connection failure', '08006')],
    ['gone mid-query', pgError('Connection terminated unexpectedly')],
    ['wrapped by the ORM', new Error('Failed query: select 1', { cause: markDatabaseUnreachable(pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')) })],
  ])('answers 503 database-unavailable with Retry-After when it is %s', async (_what, err) => {
    thrown.err = err;
    const res = await fetch(`${base}/x`);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(((await res.json()) as { type: string }).type).toMatch(/\/database-unavailable$/);
  });

  it('answers 503 unavailable, not database-unavailable, when the pool stayed busy for the whole wait', async () => {
    thrown.err = new Error('Failed query: select 1', { cause: markDatabaseBusy(pgError('timeout exceeded when trying to connect')) });
    const res = await fetch(`${base}/x`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('2');
    const body = (await res.json()) as { type: string; detail: string };
    expect(body.type).toMatch(/\/unavailable$/);
    expect(body.detail).toMatch(/overloaded/);
  });

  it.each([
    ['a unique violation (23505)', pgError('duplicate key value violates unique constraint', '23505')],
    ['a syntax error (42601)', pgError('syntax error at or near "selec"', '42601')],
    ['a query cancelled by statement timeout (57014)', pgError('canceling statement due to statement timeout', '57014')],
    [
      'another peer refusing a connection (a webhook receiver, not the database)',
      new TypeError('fetch failed', { cause: pgError('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED') }),
    ],
  ])('keeps %s a 500: not the database connection', async (_what, err) => {
    thrown.err = err;
    expect((await fetch(`${base}/x`)).status).toBe(500);
  });
});

describe('the PostgreSQL pool', () => {
  it('marks a refused connection as the database unreachable, for pool.query and for a transaction alike', async () => {
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    const database = await openDatabase({ kind: 'postgres', url: 'postgres://nobody@127.0.0.1:9/none' });
    try {
      const ping = await database.ping().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((ping as { code?: string }).code).toBe('ECONNREFUSED');
      expect(isDatabaseUnavailable(ping)).toBe(true);
      const tx = await database.db
        .transaction(async () => undefined)
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(isDatabaseUnavailable(tx)).toBe(true);
    } finally {
      await database.close();
    }
  });

  it('gives up on a server that accepts and never answers after 1.5 s, as unreachable, long before the pool wait', async () => {
    const silent = net.createServer(() => undefined);
    silent.listen(0, '127.0.0.1');
    await new Promise((r) => silent.once('listening', r));
    const { port } = silent.address() as net.AddressInfo;
    const database = await openDatabase({ kind: 'postgres', url: `postgres://nobody@127.0.0.1:${port}/none`, poolWaitMs: 30_000 });
    try {
      const started = Date.now();
      const err = await database.ping().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(isDatabaseUnavailable(err)).toBe(true);
      expect(isDatabaseBusy(err)).toBe(false);
    } finally {
      await database.close();
      silent.close();
    }
  });
});
