/** How healthy a figure is, worst last; `unknown` (the target cannot tell) and `no_data` (nothing to judge) are not graded. */
export type Grade = 'ok' | 'degraded' | 'failing';
export type HealthStatus = Grade | 'unknown' | 'no_data';

const ORDER: readonly Grade[] = ['ok', 'degraded', 'failing'];

/** The worst grade among `statuses`, ignoring ungraded ones; undefined when none is graded. */
export function worstGrade(statuses: readonly HealthStatus[]): Grade | undefined {
  let worst: Grade | undefined;
  for (const s of statuses) {
    if (s !== 'ok' && s !== 'degraded' && s !== 'failing') continue;
    if (worst === undefined || ORDER.indexOf(s) > ORDER.indexOf(worst)) worst = s;
  }
  return worst;
}

/** A ratio, or null when the denominator is zero: never NaN, never Infinity. */
export function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : numerator / denominator;
}
