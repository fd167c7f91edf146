import { cursorAfterRun, detectionModeOf } from '../../domain/detection/detection-run';
import { alertsAllowedToOpen, budgetVerdict, budgetWindowStart } from '../../domain/detection/noise-budget-policy';

const at = new Date('2026-03-04T15:00:00Z');

describe('the alerts a run may still open', () => {
  it('is unbounded without a budget', () => {
    expect(alertsAllowedToOpen(null, 1_000)).toBe(Infinity);
  });

  it("is what is left of the day's budget, never less than none", () => {
    expect(alertsAllowedToOpen(10, 0)).toBe(10);
    expect(alertsAllowedToOpen(10, 7)).toBe(3);
    expect(alertsAllowedToOpen(10, 10)).toBe(0);
    expect(alertsAllowedToOpen(10, 12)).toBe(0);
    expect(alertsAllowedToOpen(0, 0)).toBe(0);
  });
});

describe("the verdict on a run's alerts", () => {
  const run = { budget: 10, onExceed: 'suppress' as const, alertsBefore: 8, raised: 2, suppressed: 3, suppressedEarlierToday: 0, at };

  it('reports the crossing on the run whose suppressions are the first of the day', () => {
    expect(budgetVerdict(run)).toEqual({ alertsToday: 10, budgetExceededNow: true, demotion: null });
  });

  it('reports it once a day: not again once an earlier run suppressed, nor without suppressions', () => {
    expect(budgetVerdict({ ...run, suppressedEarlierToday: 4 }).budgetExceededNow).toBe(false);
    expect(budgetVerdict({ ...run, raised: 1, suppressed: 0 })).toEqual({ alertsToday: 9, budgetExceededNow: false, demotion: null });
  });

  it('demotes on the crossing under on_exceed: demote, with the alerts of the day that went over', () => {
    expect(budgetVerdict({ ...run, onExceed: 'demote' }).demotion).toEqual({
      demoted_at: '2026-03-04T15:00:00.000Z',
      reason: 'noise budget exceeded: 13 alerts against 10/day',
      alerts: 13,
      budget: 10,
    });
    expect(budgetVerdict({ ...run, onExceed: 'demote', suppressedEarlierToday: 1 }).demotion).toBeNull();
    expect(budgetVerdict({ ...run, onExceed: 'rollback' }).demotion).toBeNull(); // the workflow rolls back
  });
});

describe('the budget window', () => {
  it('starts at midnight UTC, or at a promotion made later that day', () => {
    expect(budgetWindowStart(at, null).toISOString()).toBe('2026-03-04T00:00:00.000Z');
    const demoted_at = '2026-03-03T09:00:00Z';
    expect(budgetWindowStart(at, { demoted_at }).toISOString()).toBe('2026-03-04T00:00:00.000Z');
    expect(budgetWindowStart(at, { demoted_at, promoted_at: '2026-03-04T11:30:00Z' }).toISOString()).toBe('2026-03-04T11:30:00.000Z');
    expect(budgetWindowStart(at, { demoted_at, promoted_at: '2026-03-03T23:59:00Z' }).toISOString()).toBe('2026-03-04T00:00:00.000Z');
  });
});

describe('a detection run', () => {
  it('alerts for an active deployment, counts in shadow for a demoted one, and leaves every other alone', () => {
    expect(detectionModeOf('active')).toBe('alert');
    expect(detectionModeOf('demoted')).toBe('shadow');
    for (const status of ['pending', 'superseded', 'rolled_back', 'failed']) expect(detectionModeOf(status)).toBeNull();
  });

  it('moves the cursor to the end of the evaluation, or to the last match handled when there were more', () => {
    expect(cursorAfterRun({ cursor: 50, truncated: false, events: [{ seq: 12 }] })).toBe(50);
    expect(cursorAfterRun({ cursor: 50, truncated: true, events: [{ seq: 12 }, { seq: 20 }] })).toBe(20);
    expect(cursorAfterRun({ cursor: 50, truncated: true, events: [] })).toBe(50);
  });
});
