import { poissonInterval } from '../../lib/poisson-interval';
import {
  MIN_DAY_COVERAGE,
  MIN_SAMPLE_ALERTS,
  MIN_SAMPLE_EVENTS,
  MIN_WINDOW_SECONDS,
  SEASONAL_WINDOW_SECONDS,
  projectAlertRate,
  utcDaysTouched,
} from '../../domain/runs/alert-rate-projection';
import { projectCost } from '../../domain/runs/cost-projection';
import { alertsByDay, costPerDay } from '../../domain/changes/impact-summary';
import { recordedImpact, recordedRunResult } from '../../api/runs/projection.view';

const T0 = Date.UTC(2025, 0, 6); // a Monday, 00:00 UTC
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const DAY = 86_400;

describe('alerts/day projection with its sample and interval', () => {
  it('scales the count and its exact interval to a day, and carries the sample', () => {
    const p = projectAlertRate({ events: 50_000, alerts: 40, from: at(0), to: at(2 * DAY), daysWithEvents: 2 });
    const ci = poissonInterval(40);
    expect(p.sample).toEqual({
      events: 50_000,
      alerts: 40,
      window_seconds: 2 * DAY,
      from: at(0).toISOString(),
      to: at(2 * DAY).toISOString(),
      days_with_events: 2,
      days_in_window: 2,
    });
    expect(p.alerts_per_day!.estimate).toBe(20);
    expect(p.alerts_per_day!.ci95.low).toBeCloseTo(ci.low / 2, 4);
    expect(p.alerts_per_day!.ci95.high).toBeCloseTo(ci.high / 2, 4);
    expect(p.alerts_per_day!.method).toBe('poisson-exact-garwood');
    expect(p.low_confidence).toBe(false);
    expect(p.low_confidence_reasons).toEqual([]);
  });

  it('a 40-second shadow with 50 alerts projects ~108,000/day, flagged for its short window and its few events', () => {
    const p = projectAlertRate({ events: 60, alerts: 50, from: at(0), to: at(40), daysWithEvents: null });
    expect(p.alerts_per_day!.estimate).toBe(108_000);
    expect(p.alerts_per_day!.ci95.low).toBeCloseTo((poissonInterval(50).low * DAY) / 40, 2);
    expect(p.low_confidence).toBe(true);
    expect(p.low_confidence_reasons).toHaveLength(2);
    expect(p.low_confidence_reasons[0]).toMatch(/covers 40 s, under 1 h: the daily rate multiplies it 2160×/);
    expect(p.low_confidence_reasons[1]).toMatch(new RegExp(`60 events, under ${MIN_SAMPLE_EVENTS}`));
  });

  it('0 alerts: estimate 0, upper bound 3.69 per window scaled to a day, flagged for too few alerts', () => {
    const p = projectAlertRate({ events: 10_000, alerts: 0, from: at(0), to: at(7 * DAY), daysWithEvents: 7 });
    expect(p.alerts_per_day!.estimate).toBe(0);
    expect(p.alerts_per_day!.ci95.low).toBe(0);
    expect(p.alerts_per_day!.ci95.high).toBeCloseTo(-Math.log(0.025) / 7, 4);
    expect(p.low_confidence_reasons).toEqual([expect.stringMatching(/0 alerts, under 10: the 95% interval runs from 0 to 0\.527/)]);
  });

  it('flags each thin-sample rule at its threshold and not one step past it', () => {
    const reasonsOf = (o: Partial<{ events: number; alerts: number; seconds: number; daysWithEvents: number | null }>) =>
      projectAlertRate({ events: o.events ?? 5_000, alerts: o.alerts ?? 100, from: at(0), to: at(o.seconds ?? 3 * DAY), daysWithEvents: o.daysWithEvents ?? null })
        .low_confidence_reasons;
    expect(reasonsOf({})).toEqual([]);
    expect(reasonsOf({ seconds: MIN_WINDOW_SECONDS - 1 })).toEqual([expect.stringMatching(/under 1 h/)]);
    expect(reasonsOf({ seconds: MIN_WINDOW_SECONDS })).toEqual([expect.stringMatching(/covers 1 h, under a day: daily seasonality/)]);
    expect(reasonsOf({ seconds: SEASONAL_WINDOW_SECONDS - 1 })).toEqual([expect.stringMatching(/under a day/)]);
    expect(reasonsOf({ seconds: SEASONAL_WINDOW_SECONDS })).toEqual([]);
    expect(reasonsOf({ events: MIN_SAMPLE_EVENTS - 1 })).toEqual([expect.stringMatching(/999 events, under 1000/)]);
    expect(reasonsOf({ events: MIN_SAMPLE_EVENTS })).toEqual([]);
    expect(reasonsOf({ alerts: MIN_SAMPLE_ALERTS - 1 })).toEqual([expect.stringMatching(/9 alerts, under 10/)]);
    expect(reasonsOf({ alerts: MIN_SAMPLE_ALERTS })).toEqual([]);
    // 3 days touched: 1 of 3 (0.33) is under half, 2 of 3 is not; a single-day window is never judged on coverage.
    expect(MIN_DAY_COVERAGE).toBe(0.5);
    expect(reasonsOf({ daysWithEvents: 1 })).toEqual([expect.stringMatching(/events fall on 1 of the 3 UTC days/)]);
    expect(reasonsOf({ daysWithEvents: 2 })).toEqual([]);
    expect(reasonsOf({ seconds: DAY, daysWithEvents: 1 })).toEqual([]);
  });

  it('a window of no time has no rate, and says so', () => {
    const p = projectAlertRate({ events: 0, alerts: 0, from: at(0), to: at(0), daysWithEvents: 0 });
    expect(p.alerts_per_day).toBeNull();
    expect(p.low_confidence).toBe(true);
    expect(p.low_confidence_reasons).toEqual([expect.stringMatching(/covers no time/)]);
    expect(p.sample.days_in_window).toBe(0);
  });

  it('counts the UTC days a window touches', () => {
    expect(utcDaysTouched(at(0), at(DAY))).toBe(1);
    expect(utcDaysTouched(at(DAY - 1), at(DAY + 1))).toBe(2);
    expect(utcDaysTouched(at(3_600), at(7 * DAY + 3_600))).toBe(8);
  });
});

describe('cost intervals', () => {
  const model = { currency: 'EUR', price_per_gb_scanned: 1000, triage_minutes_per_alert: 10, cost_per_analyst_hour: 60 };

  it('per month moves only with triage: scanning is measured', () => {
    const p = projectAlertRate({ events: 5_000, alerts: 30, from: at(0), to: at(3 * DAY), daysWithEvents: 3 });
    const cost = projectCost(model, 2e6, 30, 3 * DAY * 1000, p.alerts_per_day);
    const scanPerMonth = ((2e6 / 1e9) * 1000 * 30) / 3; // 20
    const triagePerAlert = (10 / 60) * 60; // 10
    expect(cost.per_month).toBeCloseTo(scanPerMonth + 10 * 30 * triagePerAlert, 4);
    expect(cost.per_month_ci95!.low).toBeCloseTo(scanPerMonth + p.alerts_per_day!.ci95.low * 30 * triagePerAlert, 3);
    expect(cost.per_month_ci95!.high).toBeCloseTo(scanPerMonth + p.alerts_per_day!.ci95.high * 30 * triagePerAlert, 3);
    expect(projectCost(model, 2e6, 30, 3 * DAY * 1000).per_month_ci95).toBeNull();
  });

  it('an impact target’s cost per day carries the same interval', () => {
    const p = projectAlertRate({ events: 5_000, alerts: 70, from: at(0), to: at(7 * DAY), daysWithEvents: 7 });
    const c = costPerDay(model, 1e6, 10, p.alerts_per_day);
    expect(c.total_ci95!.low).toBeCloseTo(1 + p.alerts_per_day!.ci95.low * 10, 2);
    expect(c.total_ci95!.high).toBeCloseTo(1 + p.alerts_per_day!.ci95.high * 10, 2);
  });
});

describe('records stored before projections carried their sample', () => {
  it('answer the new fields as null and keep every old one', () => {
    const old = { events_scanned: 5, alerts: { total: 1 }, cost: { per_month: 3 } };
    expect(recordedRunResult(old)).toEqual({
      events_scanned: 5,
      alerts: { total: 1 },
      cost: { per_month: 3, per_month_ci95: null },
      sample: null,
      alerts_per_day: null,
      low_confidence: null,
      low_confidence_reasons: null,
    });
    expect(recordedRunResult(null)).toBeNull();
    const impact = recordedImpact({ projected_alerts_per_day: 2, targets: [{ target: 'local', cost_per_day: { total: 1 }, current: null }] });
    expect(impact).toMatchObject({ alerts_per_day: null, low_confidence: null, projected_alerts_per_day: 2 });
    expect((impact!.targets as unknown[])[0]).toEqual({
      target: 'local',
      cost_per_day: { total: 1, total_ci95: null },
      current: null,
      per_day: null,
      sample: null,
      alerts_per_day: null,
      low_confidence: null,
      low_confidence_reasons: null,
    });
  });

  it('count a replay per UTC day over every day its window touches, days without events at zero', () => {
    const window = { from: new Date('2026-03-01T12:00:00Z'), to: new Date('2026-03-04T06:00:00Z') };
    const counted = [
      { day: '2026-03-03', scanned: 40, matched: 4 },
      { day: '2026-03-01', scanned: 10, matched: 1 },
      { day: '2026-03-03', scanned: 5, matched: 2 },
    ];
    expect(alertsByDay(window, counted)).toEqual([
      { day: '2026-03-01', alerts: 1 },
      { day: '2026-03-02', alerts: 0 },
      { day: '2026-03-03', alerts: 6 },
      { day: '2026-03-04', alerts: 0 },
    ]);
  });

  it('leave new records as they are', () => {
    const p = projectAlertRate({ events: 5_000, alerts: 30, from: at(0), to: at(3 * DAY), daysWithEvents: 3 });
    const fresh = { ...p, cost: { per_month: 3, per_month_ci95: { low: 1, high: 5 } } };
    expect(recordedRunResult(fresh)).toEqual(fresh);
  });
});
