import { ApplicationFailure } from '@temporalio/activity';
import { isSiemRequestError } from '../siem/remote/errors';
import { FailureType } from '../workflows/contracts';

/** How long to wait before retrying a throttled or unavailable SIEM that did not say (Retry-After). */
const DEFAULT_SIEM_RETRY_MS = 5_000;
/** The longest Retry-After honoured; a SIEM asking for more is retried after this, and again. */
const MAX_SIEM_RETRY_MS = 10 * 60_000;

/**
 * A remote SIEM's failure as Temporal sees it. Refused credentials and refused requests are
 * permanent (no retry storm against a SIEM that will refuse every attempt); throttling honours the
 * SIEM's Retry-After as the next retry's delay; outages and timeouts retry with the policy's backoff.
 */
export function siemFailure(err: unknown): unknown {
  if (!isSiemRequestError(err)) return err;
  if (!err.retryable) return ApplicationFailure.create({ message: err.message, type: FailureType.SiemRefused, nonRetryable: true, cause: err });
  const retryAfter = err.details.retryAfterMs;
  return ApplicationFailure.create({
    message: err.message,
    type: 'SiemUnavailable',
    nonRetryable: false,
    cause: err,
    ...(err.failure === 'throttled' ? { nextRetryDelay: Math.min(MAX_SIEM_RETRY_MS, Math.max(1, retryAfter ?? DEFAULT_SIEM_RETRY_MS)) } : {}),
  });
}

type AsyncFunctions = Record<string, (...args: never[]) => Promise<unknown>>;

/** Every activity of `activities` with remote SIEM failures translated by `siemFailure`. */
export function withSiemFailures<T extends AsyncFunctions>(activities: T): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [
      name,
      async (...args: never[]) => {
        try {
          return await fn(...args);
        } catch (err) {
          throw siemFailure(err);
        }
      },
    ]),
  ) as T;
}
