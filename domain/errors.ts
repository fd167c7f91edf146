/**
 * Why the business refuses a request. The domain says what is wrong in its own words; the API turns
 * a refusal into a problem+json answer (`api/http/problem.ts` maps each kind to its status), and a
 * CLI or a test can branch on `kind` without knowing HTTP.
 */
export type RefusalKind = 'invalid-request' | 'not-found' | 'conflict' | 'insufficient-scope' | 'resource-limit' | 'idempotency-key-reused' | 'unavailable';

/** One invalid part of the request, with a JSON pointer to it (`/body/rule`, `/query/limit`). */
export type FieldError = { pointer: string; message: string };

export class Refusal extends Error {
  override name = 'Refusal';
  constructor(
    readonly kind: RefusalKind,
    detail: string,
    readonly fields: FieldError[] | undefined = undefined,
    /** When trying again may succeed (`unavailable`), after how long. */
    readonly retryAfterSeconds: number | undefined = undefined,
  ) {
    super(detail);
  }
}

export const invalidRequest = (detail: string, fields?: FieldError[]) => new Refusal('invalid-request', detail, fields);
export const notFound = (detail: string) => new Refusal('not-found', detail);
export const conflict = (detail: string) => new Refusal('conflict', detail);
export const insufficientScope = (detail: string) => new Refusal('insufficient-scope', detail);
export const resourceLimit = (detail: string) => new Refusal('resource-limit', detail);
export const idempotencyKeyReused = (detail: string) => new Refusal('idempotency-key-reused', detail);
export const unavailable = (detail: string, retryAfterSeconds?: number) => new Refusal('unavailable', detail, undefined, retryAfterSeconds);
