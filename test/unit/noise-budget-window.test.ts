import { budgetWindowStart } from '../../domain/detection/noise-budget-policy';
import { summarize } from '../../domain/notifications/webhook-message';

describe('the window a day’s noise budget counts in', () => {
  const at = new Date('2026-03-04T15:00:00Z');
  const demotion = { demoted_at: '2026-03-04T09:00:00Z', reason: 'noise budget exceeded', alerts: 12, budget: 10 };

  it('starts at midnight UTC without a promotion', () => {
    expect(budgetWindowStart(at, null).toISOString()).toBe('2026-03-04T00:00:00.000Z');
    expect(budgetWindowStart(at, demotion).toISOString()).toBe('2026-03-04T00:00:00.000Z');
  });

  it('starts at a promotion made that day, so the promoted rule has its whole budget again', () => {
    expect(budgetWindowStart(at, { ...demotion, promoted_at: '2026-03-04T11:30:00Z' }).toISOString()).toBe('2026-03-04T11:30:00.000Z');
  });

  it('ignores a promotion of an earlier day', () => {
    expect(budgetWindowStart(at, { ...demotion, promoted_at: '2026-03-03T23:59:00Z' }).toISOString()).toBe('2026-03-04T00:00:00.000Z');
  });
});

describe('the chat line of the noise-policy notifications', () => {
  it('says what the policy did', () => {
    const about = { rule_id: 'r-1', version: 2, target: 'local', alerts: 12, budget: 10 };
    expect(summarize('noise_budget.exceeded', { ...about, on_exceed: 'demote' })).toBe(
      ':loud_sound: Noise budget exceeded by rule `r-1` v2 on *local*: 12 alerts against a budget of 10/day (demote)',
    );
    expect(summarize('deployment.demoted', about)).toMatch(/^:arrow_down: Demoted rule `r-1` v2 on \*local\* to shadow: 12 alerts against a budget of 10\/day/);
    expect(summarize('deployment.promoted', { ...about, comment: 'tuned' })).toBe(':arrow_up: Promoted rule `r-1` v2 on *local* back to alerting — tuned');
  });
});
