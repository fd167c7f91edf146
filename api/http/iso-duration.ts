import { z } from 'zod';
import { isoDurationToMs } from '../../config/iso-duration';

const SECOND = 1000;
const DAY = 86_400 * SECOND;

/**
 * A request field holding an ISO 8601 duration between `min` and `max` (inclusive), so a value
 * that parses is also one every later step can use: a Temporal timer or schedule interval, a date.
 */
export function isoDurationField(example: string, bounds: { min: number; max: number }) {
  const describe = (ms: number) => (ms % DAY === 0 ? `P${ms / DAY}D` : `PT${ms / SECOND}S`);
  return z
    .string()
    .max(40)
    .refine((v) => isoDurationToMs(v) !== undefined, `an ISO 8601 duration of weeks/days/hours/minutes/seconds, e.g. ${example}`)
    .refine(
      (v) => {
        const ms = isoDurationToMs(v);
        return ms === undefined || (ms >= bounds.min && ms <= bounds.max);
      },
      `a duration from ${describe(bounds.min)} to ${describe(bounds.max)}`,
    );
}

export const DURATION = { SECOND, DAY } as const;
