import { isUtf8 } from 'node:buffer';
import { ServiceError, isGrpcServiceError } from '@temporalio/client';
import type { ErrorRequestHandler, NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Database } from '../../db/client';
import { identify } from '../auth/authenticate';
import { FailureThrottle } from '../auth/failure-throttle';
import { redactTokens, refuseTokenInQuery } from '../auth/token-hygiene';
import { type Actor } from '../../domain/tenants/actor';
import type { TokenCache } from '../auth/token-cache';
import { auditSubject } from '../audit/audit-recorder';
import { limitState, utcDay } from '../limits/rate-limit';
import type { RequestCounter } from '../limits/request-counter';
import { isSiemRequestError } from '../../siem/remote/errors';
import { isDatabaseBusy, isDatabaseUnavailable } from '../../db/unavailable';
import {
  AppError,
  PROBLEM_BASE,
  problemOf,
  siemProblem,
  malformedJson,
  payloadTooLarge,
  requestAborted,
  tooManyRequests,
  unauthorized,
  unsupportedMediaType,
  type Problem,
} from './problem';
import { Refusal, invalidRequest, notFound, unavailable } from '../../domain/errors';

declare module 'express-serve-static-core' {
  interface Request {
    auth?: Actor;
  }
}

/**
 * Identifies the caller and counts the request against its daily limit, before anything else runs.
 * Requests that cannot be attributed to a tenant (no token, bad token) count against a bucket for
 * their client address with the Free tier's limit, so guessing tokens is rate limited too; failed
 * authentications are also throttled per address over a short window (FailureThrottle). A token in
 * the query string is refused before anything reads the query.
 */
export function identifyAndLimit(
  database: Database,
  tokens: TokenCache,
  throttle: FailureThrottle,
  counter: RequestCounter,
  now: () => Date,
  options: { requireAuth: boolean },
) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const at = now();
    const address = req.ip ?? 'unknown';
    const identity = await identify(database, tokens, req, at, (hash) => throttle.refusal(address, hash, at));
    const subject = auditSubject(res);
    subject.tokenPrefix = identity.prefix;
    if (identity.ok) {
      subject.tokenId = identity.auth.tokenId;
      subject.tenantId = identity.auth.tenantId;
      subject.principal = identity.auth.principal;
      throttle.succeeded(address, identity.tokenHash);
    } else {
      subject.authFailure = identity.failure;
      // A revoked or expired token was real: its use is shown to its tenant (the request still
      // counts against the address, as it is not authenticated).
      if (identity.owner) {
        subject.tokenId = identity.owner.tokenId;
        subject.tenantId = identity.owner.tenantId;
      }
      if (identity.failure === 'unknown' || identity.failure === 'revoked' || identity.failure === 'expired') throttle.failed(address, at);
    }
    const [bucket, tier] = identity.ok ? [`tenant:${identity.auth.tenantId}`, identity.auth.tier] : [`anon:${address}`, 'free' as const];
    const state = limitState(tier, await counter.increment(bucket, utcDay(at)), at);
    res.setHeader('X-RateLimit-Limit', String(state.limit));
    res.setHeader('X-RateLimit-Remaining', String(state.remaining));
    res.setHeader('X-RateLimit-Reset', String(state.reset));
    if (state.exceeded) {
      const retryAfter = Math.max(1, state.reset - Math.floor(at.getTime() / 1000));
      throw tooManyRequests(`The daily request limit of ${state.limit} is reached; it resets at ${new Date(state.reset * 1000).toISOString()}`, retryAfter);
    }
    refuseTokenInQuery(req);
    if (identity.ok) req.auth = identity.auth;
    else if (options.requireAuth && identity.failure === 'throttled') {
      throw tooManyRequests(
        `Too many failed authentications from ${address} (at most ${FailureThrottle.MAX_FAILURES} per ${FailureThrottle.WINDOW_MS / 1000} s); tokens not yet used from this address are checked again in ${identity.retryAfter} s`,
        identity.retryAfter!,
      );
    } else if (options.requireAuth) throw unauthorized(identity.reason);
    next();
  };
}

export function requireJsonBody(req: Request): void {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    throw unsupportedMediaType(`The body must be application/json, not ${req.headers['content-type'] ?? 'unspecified'}`);
  }
}

/**
 * The JSON parser's `verify` hook: a UTF-8 body must be UTF-8. The parser would otherwise decode
 * stray bytes as U+FFFD and store text the client never sent.
 */
export function requireUtf8(_req: unknown, _res: unknown, body: Buffer, encoding: string): void {
  if (/^utf-?8$/i.test(encoding) && !isUtf8(body)) {
    throw Object.assign(new Error('The body is not valid UTF-8, which JSON text must be'), { status: 400 });
  }
}

/** 405 with `Allow` for a known path called with a method it does not have; unknown paths fall through to 404. */
/** The methods of the most literal documented path matching `path` (`/rules/deploy` over `/rules/{id}`), as the document reads. */
export function allowedMethods(routes: Array<{ method: string; path: string }>) {
  const byPath = new Map<string, { pattern: RegExp; methods: string[]; params: number }>();
  for (const r of routes) {
    const entry = byPath.get(r.path) ?? { pattern: new RegExp(`^${r.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`), methods: [], params: (r.path.match(/\{/g) ?? []).length };
    entry.methods.push(r.method.toUpperCase());
    byPath.set(r.path, entry);
  }
  return (path: string): { methods: string[]; params: number } => {
    const matching = [...byPath.values()].filter((e) => e.pattern.test(path));
    const fewestParams = Math.min(...matching.map((e) => e.params));
    return { methods: matching.filter((e) => e.params === fewestParams).flatMap((e) => e.methods), params: fewestParams };
  };
}

function notAllowed(req: Request, allowed: string[]): AppError {
  return new AppError(405, 'method-not-allowed', 'Method not allowed', `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`, {
    headers: { Allow: allowed.join(', ') },
  });
}

export function methodNotAllowed(routes: Array<{ method: string; path: string }>) {
  const allowedOn = allowedMethods(routes);
  return (req: Request, _res: Response, next: NextFunction) => {
    const { methods } = allowedOn(req.path);
    if (methods.length === 0) return next();
    throw notAllowed(req, methods);
  };
}

/**
 * For a route with path parameters: when a more literal documented path matches the request
 * (`GET /rules/lint` reaching `GET /rules/{id}`), that path decides, so a method it lacks is a 405
 * with its Allow header rather than "no rule named lint".
 */
export function literalPathFirst(routes: Array<{ method: string; path: string }>) {
  const allowedOn = allowedMethods(routes);
  return (req: Request, spec: { path: string }): void => {
    const params = (spec.path.match(/\{/g) ?? []).length;
    if (params === 0) return;
    const literal = allowedOn(req.path);
    if (literal.params < params && !literal.methods.includes(req.method.toUpperCase())) throw notAllowed(req, literal.methods);
  };
}

export const unmatchedRoute = (req: Request) => {
  throw notFound(`No endpoint ${req.method} ${req.path}`);
};

type BodyParserError = Error & { type?: string; status?: number; limit?: number; body?: unknown };

function isJsonText(body: unknown): body is string {
  if (typeof body !== 'string') return false;
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

function describeJsonText(body: string): string {
  const value: unknown = JSON.parse(body);
  return value === null ? 'null' : typeof value === 'string' ? 'a string' : `a ${typeof value}`;
}

/** gRPC status codes of a Temporal server that is down, overloaded or too slow to answer: DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNAVAILABLE. */
const TEMPORAL_UNAVAILABLE = new Set([4, 8, 14]);

/** About a restart of PostgreSQL or a failover: long enough not to hammer it, short enough for CI. */
const DATABASE_RETRY_AFTER_SECONDS = 5;
/** A burst that filled the pool: it drains in seconds. */
const DATABASE_BUSY_RETRY_AFTER_SECONDS = 2;

function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (err instanceof Refusal) return problemOf(err);
  if (isSiemRequestError(err)) return siemProblem(err);
  // Temporal not answering is a temporary condition of ours, not a bug: 503 and when to retry.
  const grpc = err instanceof ServiceError ? err.cause : err;
  if (isGrpcServiceError(grpc) && TEMPORAL_UNAVAILABLE.has(grpc.code)) {
    return problemOf(unavailable(`The workflow service did not answer in time (${grpc.details || grpc.message}); retry later`, 5));
  }
  // So is a pool whose connections were all in use for the whole wait: the service is overloaded.
  if (isDatabaseBusy(err)) {
    return problemOf(
      unavailable('Every database connection stayed in use while this request waited for one (the service is overloaded); retry later', DATABASE_BUSY_RETRY_AFTER_SECONDS),
    );
  }
  // So is a database that refuses connections or dropped one (restarting, failing over, away).
  if (isDatabaseUnavailable(err)) {
    return new AppError(
      503,
      'database-unavailable',
      'Database unavailable',
      'The database cannot be reached at the moment; retry later, with the same Idempotency-Key for a change',
      {
        headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      },
    );
  }
  const e = err as BodyParserError;
  switch (e?.type) {
    case 'entity.parse.failed':
      // Strict parsing refuses a top-level `null`, number or string although it is JSON: say what is wanted.
      if (isJsonText(e.body))
        return problemOf(invalidRequest(`The body must be a JSON object; it is ${describeJsonText(e.body)}`, [{ pointer: '/body', message: 'must be an object' }]));
      return malformedJson(`The body is not valid JSON: ${e.message}`);
    case 'entity.verify.failed':
      return malformedJson(e.message);
    case 'entity.too.large':
      return payloadTooLarge(`The body is larger than the limit of ${e.limit} bytes`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return unsupportedMediaType(e.message);
    case 'request.aborted':
      return requestAborted();
  }
  // A path that is not valid percent-encoding ("/rules/%ZZ"): the router cannot decode it.
  if (err instanceof URIError) return problemOf(invalidRequest(`The request path is not valid percent-encoded UTF-8: ${err.message}`));
  // Other client errors the parsers and router mark with a 4xx status (a body that does not
  // decompress, say): the client's to fix, never a 500.
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new AppError(
      e.status === 413 ? 413 : 400,
      e.status === 413 ? 'payload-too-large' : 'invalid-request',
      e.status === 413 ? 'Payload too large' : 'Invalid request',
      e.message,
    );
  }
  return undefined;
}

export function sendProblem(req: Request, res: Response, err: AppError): void {
  const body: Problem = {
    type: PROBLEM_BASE + err.problem,
    title: err.title,
    status: err.status,
    detail: err.message,
    instance: req.originalUrl.split('?')[0]!,
    request_id: String(req.id),
    ...(err.extras.errors ? { errors: err.extras.errors } : {}),
  };
  for (const [name, value] of Object.entries(err.extras.headers ?? {})) res.setHeader(name, value);
  // Answering before the body was read (401 before parsing, 413 mid-upload): the rest of the body
  // would stall a kept-alive connection, so this one closes after the answer.
  if (!req.complete) res.setHeader('Connection', 'close');
  res.status(err.status).type('application/problem+json').send(JSON.stringify(body));
}

/** The one place errors become responses: known ones as their problem, anything else as a 500. */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    let appError = toAppError(err);
    if (!appError) {
      logger.error({ err, requestId: req.id, method: req.method, path: redactTokens(req.path) }, 'unhandled error');
      appError = new AppError(500, 'internal', 'Internal error', `An unexpected error occurred; quote request id ${String(req.id)} when reporting it`);
    }
    if (res.headersSent) {
      // An answer already complete (a 408 the body deadline gave while a handler still read the
      // body) stays as it was; one cut short by the error is cut off.
      if (!res.writableEnded) res.destroy();
      return;
    }
    sendProblem(req, res, appError);
  };
}
