import { isoDurationToMs } from '../../config/iso-duration';
import { invalidRequest } from '../errors';

/** Shadow evaluations are live; the longest one a request may start. */
const MAX_SHADOW_DAYS = 30;
const MIN_INTERVAL_MS = 1_000;

/** How long a shadow evaluation runs and how often it evaluates (ISO 8601 durations), in ms; 400 out of bounds. */
export function shadowTiming(duration: string, interval: string): { durationMs: number; intervalMs: number } {
  const durationMs = isoDurationToMs(duration)!;
  const intervalMs = isoDurationToMs(interval)!;
  if (durationMs > MAX_SHADOW_DAYS * 86_400_000)
    throw invalidRequest(`A shadow evaluation runs at most ${MAX_SHADOW_DAYS} days`, [{ pointer: '/body/duration', message: 'too long' }]);
  if (intervalMs < MIN_INTERVAL_MS) throw invalidRequest('The interval is at least PT1S', [{ pointer: '/body/interval', message: 'too short' }]);
  if (intervalMs > durationMs) throw invalidRequest('The interval may not be longer than the duration', [{ pointer: '/body/interval', message: 'longer than duration' }]);
  return { durationMs, intervalMs };
}
