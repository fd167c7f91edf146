import type { Deadline } from './deadline';

/** Answers that say "not now" rather than "no": the service restarting, a proxy without an upstream, the rate limit. */
export const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** The first pause after a failure, and the longest: a restarted service is noticed within seconds. */
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;

/**
 * The pause before retry `attempt` (0-based): exponential, capped, with "equal jitter" (half fixed,
 * half random), so the CI jobs of a fleet that lost the service at once do not come back in step,
 * and none retries in a tight loop.
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.min(attempt, 20));
  return ceiling / 2 + random() * (ceiling / 2);
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now: number = Date.now()): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Retrying while a command waits: until `deadline`, telling the person reading the CI log once when
 * the service went away and once when it came back (`say` writes to stderr).
 */
export class RetryPolicy {
  private downSince: number | undefined;
  constructor(
    readonly deadline: Deadline,
    private readonly say: (line: string) => void,
    private readonly base: string,
  ) {}

  /** A request failed transiently; said once per outage, however many requests fail meanwhile. */
  failed(reason: string, delayMs: number): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.say(`detflow: ${this.base} ${reason}; retrying for up to ${Math.ceil(this.deadline.remainingMs / 1000)} s (--timeout), next in ${(delayMs / 1000).toFixed(1)} s\n`);
  }

  /** A request got an answer: the outage, if there was one, is over. */
  answered(): void {
    if (this.downSince === undefined) return;
    this.say(`detflow: ${this.base} answers again after ${Math.round((Date.now() - this.downSince) / 1000)} s; waiting goes on\n`);
    this.downSince = undefined;
  }
}
