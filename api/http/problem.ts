import type { SiemRequestError } from '../../siem/remote/errors';
import { z } from 'zod';
import { openapi } from './zod-openapi';
import type { FieldError, Refusal, RefusalKind } from '../../domain/errors';

/**
 * RFC 9457 problem details. Every error the API answers is one of these, written by one error
 * middleware; the `type` URI names the kind of problem so clients can branch on it.
 */
export const PROBLEM_BASE = 'https://detflow.dev/problems/';

export const ProblemSchema = openapi(
  z.object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string(),
    request_id: z.string(),
    errors: z
      .array(z.object({ pointer: z.string(), message: z.string() }))
      .optional()
      .describe('One entry per invalid field, with a JSON pointer into the request'),
  }),
  'Problem',
);
export type Problem = z.infer<typeof ProblemSchema>;

export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly status: number,
    readonly problem: string,
    readonly title: string,
    detail: string,
    readonly extras: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
  }
}

export const malformedJson = (detail: string) => new AppError(400, 'malformed-json', 'Malformed JSON body', detail);
export const unauthorized = (detail: string) =>
  new AppError(401, 'unauthorized', 'Authentication required', detail, {
    headers: { 'WWW-Authenticate': 'Bearer realm="detflow", error="invalid_token"' },
  });
export const requestAborted = () => new AppError(400, 'request-aborted', 'Request aborted', 'The client closed the request before its body arrived');
export const requestTimeout = (detail: string) => new AppError(408, 'request-timeout', 'Request timeout', detail);
export const payloadTooLarge = (detail: string) => new AppError(413, 'payload-too-large', 'Payload too large', detail);
export const unsupportedMediaType = (detail: string) => new AppError(415, 'unsupported-media-type', 'Unsupported media type', detail);
export const tooManyRequests = (detail: string, retryAfterSeconds: number) =>
  new AppError(429, 'rate-limited', 'Too many requests', detail, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });

/**
 * A remote SIEM's failure as the answer: its own refusal of the request is the client's to fix
 * (422, the vendor's message); refused credentials or a broken answer are a bad gateway (502); a
 * SIEM that is throttling, down or slow is temporary (503, with its Retry-After when it gave one).
 */
export function siemProblem(err: SiemRequestError): AppError {
  switch (err.failure) {
    case 'rejected':
      return new AppError(422, 'siem-rejected', 'Rejected by the SIEM', err.message);
    case 'auth':
    case 'forbidden':
      return new AppError(502, 'siem-credentials-refused', 'The SIEM refused the credentials', `${err.message}; check the target's credentials and their permissions`);
    case 'not_found':
      return new AppError(502, 'siem-error', 'The SIEM answered with an error', err.message);
    default:
      return new AppError(503, 'siem-unavailable', 'The SIEM is unavailable', `${err.message}; retry later`, {
        headers: { 'Retry-After': String(Math.max(1, Math.ceil((err.details.retryAfterMs ?? 5000) / 1000))) },
      });
  }
}

/** The status and title each kind of refusal answers with. */
const REFUSALS: Record<RefusalKind, { status: number; title: string }> = {
  'invalid-request': { status: 400, title: 'Invalid request' },
  'insufficient-scope': { status: 403, title: 'Insufficient scope' },
  'resource-limit': { status: 403, title: 'Resource limit exceeded' },
  'not-found': { status: 404, title: 'Not found' },
  conflict: { status: 409, title: 'Conflict' },
  'idempotency-key-reused': { status: 409, title: 'Idempotency key reused' },
  unavailable: { status: 503, title: 'Service unavailable' },
};

/** A refusal of the domain as the problem the API answers. */
export function problemOf(refusal: Refusal): AppError {
  const { status, title } = REFUSALS[refusal.kind];
  return new AppError(status, refusal.kind, title, refusal.message, {
    ...(refusal.fields ? { errors: refusal.fields } : {}),
    ...(refusal.retryAfterSeconds !== undefined ? { headers: { 'Retry-After': String(refusal.retryAfterSeconds) } } : {}),
  });
}

/** Turns zod issues into JSON pointers under the part of the request they came from. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[], root: 'body' | 'query' | 'params'): FieldError[] {
  return issues.map((issue) => {
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') message = `unknown field(s): ${issue.keys.join(', ')}`;
    const pointer = '/' + [root, ...issue.path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1'))].join('/');
    return { pointer, message };
  });
}
