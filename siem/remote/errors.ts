import type { TargetKind } from '../adapter';

/**
 * What went wrong with a call to a remote SIEM, in the terms callers act on:
 * - `auth`: the credentials were refused (401, or a refused token request): retrying cannot help.
 * - `forbidden`: the credentials lack a permission (403): retrying cannot help.
 * - `rejected`: the SIEM refused the request as invalid (400, 409, 422): its message says why.
 * - `not_found`: the object or endpoint does not exist (404).
 * - `throttled`: 429, or 503 with Retry-After: retry after `retryAfterMs`.
 * - `unavailable`: 5xx or a dropped connection: retry with backoff.
 * - `timeout`: no answer in time: retry with backoff.
 */
export type SiemFailure = 'auth' | 'forbidden' | 'rejected' | 'not_found' | 'throttled' | 'unavailable' | 'timeout';

const RETRYABLE: ReadonlySet<SiemFailure> = new Set(['throttled', 'unavailable', 'timeout']);

/**
 * A failed call to a remote SIEM. Its message names the target, the method and the path (never a
 * query string, header or body, which may carry credentials) and the vendor's own message.
 */
export class SiemRequestError extends Error {
  override readonly name = 'SiemRequestError';
  constructor(
    readonly kind: TargetKind,
    readonly failure: SiemFailure,
    message: string,
    readonly details: {
      readonly status?: number;
      /** How long the SIEM asked us to wait (Retry-After), in milliseconds. */
      readonly retryAfterMs?: number;
      /** The vendor's message, as it gave it (credentials redacted). */
      readonly vendorMessage?: string;
    } = {},
  ) {
    super(message);
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.failure);
  }
}

export function isSiemRequestError(err: unknown): err is SiemRequestError {
  return err instanceof SiemRequestError;
}

/** The failure an HTTP status means. */
export function failureOfStatus(status: number, retryAfter: boolean): SiemFailure {
  if (status === 401) return 'auth';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 429) return 'throttled';
  if (status === 503 && retryAfter) return 'throttled';
  if (status === 408 || status === 504) return 'timeout';
  if (status >= 500) return 'unavailable';
  return 'rejected';
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date = new Date()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // An HTTP date names its weekday and GMT (RFC 9110 §5.6.7); anything else (`1.5`, `-1`) would
  // be read by Date.parse as some year long past, i.e. "retry now".
  if (!/^[A-Za-z]{3,9},? .*GMT$|^[A-Za-z]{3} [A-Za-z]{3} +\d/.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}
