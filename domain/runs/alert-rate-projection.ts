import { poissonInterval } from '../../lib/poisson-interval';
import { round } from './rounding';

const DAY_SECONDS = 86_400;

/**
 * When a projection is flagged `low_confidence` (each rule gives its own reason; see the README):
 * - the sample covers less than MIN_WINDOW_SECONDS: a daily rate extrapolated from minutes
 *   multiplies whatever burst those minutes held;
 * - it covers less than SEASONAL_WINDOW_SECONDS: daily seasonality (working hours, nightly jobs)
 *   was not seen, so the daily rate assumes every hour looks like the ones observed;
 * - it scanned fewer than MIN_SAMPLE_EVENTS events: too little of the target's traffic to stand
 *   for it;
 * - it counted fewer than MIN_SAMPLE_ALERTS alerts: the 95% interval is wider than the estimate
 *   itself is tall (at 10 alerts it runs from 0.48× to 1.84× the estimate; at 0 it has no lower
 *   bound above zero);
 * - its events fall on fewer than MIN_DAY_COVERAGE of the UTC days the window touches (when it
 *   touches 2 or more): the target's data does not reach over the window, so dividing by the
 *   window dilutes the rate.
 */
export const MIN_WINDOW_SECONDS = 3_600;
export const SEASONAL_WINDOW_SECONDS = DAY_SECONDS;
export const MIN_SAMPLE_EVENTS = 1_000;
export const MIN_SAMPLE_ALERTS = 10;
export const MIN_DAY_COVERAGE = 0.5;

/** How alerts/day intervals are computed: an exact Poisson (Garwood) interval on the count, scaled to a day. */
export const ALERT_RATE_METHOD = 'poisson-exact-garwood';

/** What a projection rests on: the events it scanned, the alerts it counted, over which span of time. */
export type ProjectionSample = {
  events: number;
  alerts: number;
  window_seconds: number;
  from: string;
  to: string;
  /** UTC days of the window with at least one event, of the days it touches; null where not known (shadow). */
  days_with_events: number | null;
  days_in_window: number;
};

export type AlertsPerDay = { estimate: number; ci95: { low: number; high: number }; method: typeof ALERT_RATE_METHOD };

/** A projection of alerts/day with its sample, its 95% interval, and whether the sample is too thin to trust. */
export type AlertRateProjection = {
  sample: ProjectionSample;
  /** null when the sample covers no time at all (nothing to divide by). */
  alerts_per_day: AlertsPerDay | null;
  low_confidence: boolean;
  low_confidence_reasons: string[];
};

/** UTC days that [from, to) touches (a window ending at midnight does not touch the next day). */
export function utcDaysTouched(from: Date, to: Date): number {
  if (to.getTime() <= from.getTime()) return 0;
  const first = Math.floor(from.getTime() / (DAY_SECONDS * 1000));
  const last = Math.floor((to.getTime() - 1) / (DAY_SECONDS * 1000));
  return last - first + 1;
}

/** A span of seconds in words: 40 s, 12.5 min, 3.2 h, 2.1 days. */
function span(seconds: number): string {
  if (seconds < 60) return `${round(seconds, 1)} s`;
  if (seconds < 3_600) return `${round(seconds / 60, 1)} min`;
  if (seconds < DAY_SECONDS) return `${round(seconds / 3_600, 1)} h`;
  return `${round(seconds / DAY_SECONDS, 1)} days`;
}

/**
 * alerts/day = alerts × 86,400 / window seconds; its 95% interval is the exact Poisson interval of
 * the count (lower χ²(0.025; 2k)/2, upper χ²(0.975; 2k + 2)/2) scaled the same way, so 0 alerts
 * over a window still bounds the rate above by 3.69 per window. Flags thin samples (see the
 * constants above), each with its reason.
 */
export function projectAlertRate(input: { events: number; alerts: number; from: Date; to: Date; daysWithEvents: number | null }): AlertRateProjection {
  const windowSeconds = Math.max(0, (input.to.getTime() - input.from.getTime()) / 1000);
  const daysInWindow = utcDaysTouched(input.from, input.to);
  const sample: ProjectionSample = {
    events: input.events,
    alerts: input.alerts,
    window_seconds: round(windowSeconds, 3),
    from: input.from.toISOString(),
    to: input.to.toISOString(),
    days_with_events: input.daysWithEvents,
    days_in_window: daysInWindow,
  };
  const reasons: string[] = [];
  if (windowSeconds === 0) {
    return { sample, alerts_per_day: null, low_confidence: true, low_confidence_reasons: ['the sample covers no time: there is no rate to project'] };
  }
  const perDay = DAY_SECONDS / windowSeconds;
  const interval = poissonInterval(input.alerts);
  const alertsPerDay: AlertsPerDay = {
    estimate: round(input.alerts * perDay),
    ci95: { low: round(interval.low * perDay), high: round(interval.high * perDay) },
    method: ALERT_RATE_METHOD,
  };
  if (windowSeconds < MIN_WINDOW_SECONDS)
    reasons.push(`the sample covers ${span(windowSeconds)}, under ${span(MIN_WINDOW_SECONDS)}: the daily rate multiplies it ${Math.round(perDay)}×`);
  else if (windowSeconds < SEASONAL_WINDOW_SECONDS)
    reasons.push(`the sample covers ${span(windowSeconds)}, under a day: daily seasonality (working hours, nightly jobs) is not seen`);
  if (input.events < MIN_SAMPLE_EVENTS) reasons.push(`the sample has ${input.events} events, under ${MIN_SAMPLE_EVENTS}`);
  if (input.alerts < MIN_SAMPLE_ALERTS)
    reasons.push(
      `the sample has ${input.alerts} alerts, under ${MIN_SAMPLE_ALERTS}: the 95% interval runs from ${alertsPerDay.ci95.low} to ${alertsPerDay.ci95.high} per day`,
    );
  if (input.daysWithEvents !== null && daysInWindow >= 2 && input.daysWithEvents / daysInWindow < MIN_DAY_COVERAGE)
    reasons.push(`events fall on ${input.daysWithEvents} of the ${daysInWindow} UTC days of the window: the target's data may not reach over it, which dilutes the rate`);
  return { sample, alerts_per_day: alertsPerDay, low_confidence: reasons.length > 0, low_confidence_reasons: reasons };
}
