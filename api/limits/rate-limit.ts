import type { Tier } from '../../config/env';

/** Requests per UTC day. `null` is the Unlimited tier. */
export const DAILY_REQUEST_LIMITS: Record<Tier, number | null> = {
  free: 10_000,
  professional: 100_000,
  enterprise: 1_000_000,
  unlimited: null,
};

/**
 * What Unlimited reports: a limit and remaining count of 2^31-1, the largest value every client
 * parses as an integer, so clients that back off on a low `Remaining` never do.
 */
export const UNLIMITED_REPORTED = 2_147_483_647;

export type RateLimitState = {
  limit: number;
  remaining: number;
  /** Unix epoch seconds of the next reset (the next UTC midnight). */
  reset: number;
  exceeded: boolean;
};

export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

export function nextUtcMidnight(now: Date): number {
  return Math.floor(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) / 1000);
}

/** The limit headers' values and the verdict for a bucket that has seen `count` requests today. */
export function limitState(tier: Tier, count: number, now: Date): RateLimitState {
  const reset = nextUtcMidnight(now);
  const limit = DAILY_REQUEST_LIMITS[tier];
  if (limit === null) return { limit: UNLIMITED_REPORTED, remaining: UNLIMITED_REPORTED, reset, exceeded: false };
  return { limit, remaining: Math.max(0, limit - count), reset, exceeded: count > limit };
}
