import type { Tier } from '../../config/env';
import { type Actor } from './actor';
import { resourceLimit } from '../errors';

/** What one tenant may hold or run at once, by tier; exceeding one is 403 `resource-limit`. */
export type ResourceLimits = {
  ruleSizeBytes: number;
  rules: number | null;
  activeDeployments: number | null;
  concurrentRuns: number | null;
  replayWindowDays: number;
  fixturesPerTest: number;
};

const KiB = 1024;
export const TIER_RESOURCE_LIMITS: Record<Tier, ResourceLimits> = {
  free: { ruleSizeBytes: 64 * KiB, rules: 100, activeDeployments: 25, concurrentRuns: 2, replayWindowDays: 7, fixturesPerTest: 50 },
  professional: { ruleSizeBytes: 256 * KiB, rules: 1_000, activeDeployments: 250, concurrentRuns: 5, replayWindowDays: 30, fixturesPerTest: 200 },
  enterprise: { ruleSizeBytes: 1024 * KiB, rules: 10_000, activeDeployments: 2_500, concurrentRuns: 20, replayWindowDays: 90, fixturesPerTest: 1_000 },
  unlimited: { ruleSizeBytes: 4 * 1024 * KiB, rules: null, activeDeployments: null, concurrentRuns: null, replayWindowDays: 365, fixturesPerTest: 5_000 },
};

export function limitsOf(auth: Pick<Actor, 'tier'>): ResourceLimits {
  return TIER_RESOURCE_LIMITS[auth.tier];
}

export function checkRuleSize(auth: Actor, text: string): void {
  const size = Buffer.byteLength(text, 'utf8');
  const max = limitsOf(auth).ruleSizeBytes;
  if (size > max) throw resourceLimit(`The rule is ${size} bytes; the ${auth.tier} tier allows rules up to ${max} bytes`);
}
