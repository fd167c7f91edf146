/**
 * The noise budget of a deployment: at most `max_alerts_per_day` open alerts per UTC day. Alerts
 * beyond it are stored as suppressed; the run that first goes over it reports the crossing, and
 * under `on_exceed: demote` demotes the deployment to shadow. Pure: the caller reads the day's
 * figures, stores the alerts and applies the verdict.
 */

/** What going over the budget does besides suppressing (`rollback` is acted on by the detection workflow). */
export type OnExceedPolicy = 'suppress' | 'demote' | 'rollback';

/** Why and when a deployment was demoted, as it is stored with the deployment. */
export type DemotionRecord = { demoted_at: string; reason: string; alerts: number; budget: number };

/** The alerts of one run against the day's budget, once stored. */
export type BudgetVerdict = {
  /** Open alerts of the day, this run's included. */
  alertsToday: number;
  /** True on the run whose suppressions are the day's first: the crossing is reported once a day. */
  budgetExceededNow: boolean;
  /** The demotion to apply now (`on_exceed: demote` on the crossing run), else null. */
  demotion: DemotionRecord | null;
};

function startOfUtcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

/**
 * Where today's budget starts counting: midnight UTC, or the promotion when a person promoted a
 * demoted deployment later that day: the promotion gives the rule the whole budget again.
 */
export function budgetWindowStart(at: Date, demotion: { readonly demoted_at: string; readonly promoted_at?: string } | null): Date {
  const day = startOfUtcDay(at);
  const promoted = demotion?.promoted_at ? new Date(demotion.promoted_at) : null;
  return promoted && promoted > day ? promoted : day;
}

/**
 * How many of a run's new alerts may still be open, given the open alerts of the day so far; the
 * ones after them are suppressed. Unbounded without a budget.
 */
export function alertsAllowedToOpen(budget: number | null, alertsToday: number): number {
  return budget === null ? Infinity : Math.max(0, budget - alertsToday);
}

/**
 * The verdict on a run's stored alerts. `suppressedEarlierToday` comes from the day's earlier run
 * records, which triage never changes (a suppressed alert closed by a person is no longer
 * `suppressed`, and must not make a later run look like the first).
 */
export function budgetVerdict(run: {
  budget: number | null;
  onExceed: OnExceedPolicy;
  /** Open alerts of the day before this run. */
  alertsBefore: number;
  raised: number;
  suppressed: number;
  suppressedEarlierToday: number;
  at: Date;
}): BudgetVerdict {
  const budgetExceededNow = run.suppressed > 0 && run.suppressedEarlierToday === 0;
  const alerts = run.alertsBefore + run.raised + run.suppressed;
  const demotion =
    budgetExceededNow && run.onExceed === 'demote'
      ? { demoted_at: run.at.toISOString(), reason: `noise budget exceeded: ${alerts} alerts against ${run.budget}/day`, alerts, budget: run.budget ?? 0 }
      : null;
  return { alertsToday: run.alertsBefore + run.raised, budgetExceededNow, demotion };
}
