import type { NextFunction, Request, Response } from 'express';
import { sendProblem } from './pipeline';
import { requestTimeout, type AppError } from './problem';

/** How long a request body may take to arrive by default (DETFLOW_BODY_TIMEOUT_SECONDS). */
export const DEFAULT_BODY_TIMEOUT_SECONDS = 300;

/** Each request with a body under way: aborted, with the 408 as its reason, when its deadline passes. */
const deadlines = new WeakMap<Request, AbortSignal>();

/** Aborted (its reason the 408 AppError) when the request's body did not arrive in time; undefined for a request without a body. */
export function bodyDeadline(req: Request): AbortSignal | undefined {
  return deadlines.get(req);
}

function hasBody(req: Request): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/**
 * A request body must have arrived within `seconds` of the request's headers. Past that, the
 * request is answered 408 problem+json (`request-timeout`) at once and its connection is closed
 * after the answer; whatever reads the body stops: an event upload through `bodyDeadline(req)`,
 * the JSON parser as the request is destroyed. Node's own request timeout, which writes a bare
 * 408 without a body, is set to fire after this one (api/server.ts).
 */
export function bodyDeadlines(seconds: number) {
  const ms = seconds * 1000;
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req) || req.complete) return next();
    const controller = new AbortController();
    deadlines.set(req, controller.signal);
    const timer = setTimeout(() => {
      if (req.complete || res.headersSent) return;
      const err: AppError = requestTimeout(
        `The request body did not arrive within ${seconds} s (DETFLOW_BODY_TIMEOUT_SECONDS); nothing of it was used. Send it faster, or in smaller requests`,
      );
      controller.abort(err);
      // The answer goes out now; the readers of the body stop when the request is destroyed (the
      // connection closes after the answer, and a body reader waiting on it would wait for ever).
      res.once('close', () => req.destroy());
      sendProblem(req, res, err);
    }, ms);
    timer.unref();
    res.once('close', () => clearTimeout(timer));
    next();
  };
}
