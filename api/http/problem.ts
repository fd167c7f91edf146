import { z } from 'zod';
import { openapi } from './zod-openapi';

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
export type FieldError = { pointer: string; message: string };

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

export const badRequest = (detail: string, errors?: FieldError[]) =>
  new AppError(400, 'invalid-request', 'Invalid request', detail, errors ? { errors } : {});
export const malformedJson = (detail: string) => new AppError(400, 'malformed-json', 'Malformed JSON body', detail);
export const unauthorized = (detail: string) =>
  new AppError(401, 'unauthorized', 'Authentication required', detail, {
    headers: { 'WWW-Authenticate': 'Bearer realm="detflow", error="invalid_token"' },
  });
export const insufficientScope = (detail: string) => new AppError(403, 'insufficient-scope', 'Insufficient scope', detail);
export const resourceLimit = (detail: string) => new AppError(403, 'resource-limit', 'Resource limit exceeded', detail);
export const notFound = (detail: string) => new AppError(404, 'not-found', 'Not found', detail);
export const conflict = (detail: string) => new AppError(409, 'conflict', 'Conflict', detail);
export const payloadTooLarge = (detail: string) => new AppError(413, 'payload-too-large', 'Payload too large', detail);
export const unsupportedMediaType = (detail: string) =>
  new AppError(415, 'unsupported-media-type', 'Unsupported media type', detail);
export const tooManyRequests = (detail: string, retryAfterSeconds: number) =>
  new AppError(429, 'rate-limited', 'Too many requests', detail, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
export const notImplemented = (detail: string) => new AppError(501, 'not-implemented', 'Not implemented yet', detail);
export const serviceUnavailable = (detail: string, retryAfterSeconds?: number) =>
  new AppError(503, 'unavailable', 'Service unavailable', detail, retryAfterSeconds === undefined ? {} : { headers: { 'Retry-After': String(retryAfterSeconds) } });

/** Turns zod issues into JSON pointers under the part of the request they came from. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[], root: 'body' | 'query' | 'params'): FieldError[] {
  return issues.map((issue) => {
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') message = `unknown field(s): ${issue.keys.join(', ')}`;
    const pointer = '/' + [root, ...issue.path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1'))].join('/');
    return { pointer, message };
  });
}
