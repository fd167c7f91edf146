import { ratio } from './health-status';

/** Alerts one deployment raised on one UTC day (suppressed ones included). */
export type DeploymentDay = { deploymentId: string; day: string; alerts: number; suppressed: number };
/** A deployment with its budget. */
export type BudgetedDeployment = { deploymentId: string; target: string; version: number; maxAlertsPerDay: number | null };

export type DeploymentBudget = {
  deploymentId: string;
  target: string;
  version: number;
  maxAlertsPerDay: number | null;
  alertsToday: number;
  /** alerts today / max_alerts_per_day; null without a budget or with a budget of 0. */
  consumptionToday: number | null;
  alerts: number;
  suppressed: number;
  daysOverBudget: number;
};

export type NoiseBudget = {
  alertsToday: number;
  alerts: number;
  /** alerts / days of the window. */
  alertsPerDay: number;
  suppressed: number;
  /** UTC days on which some deployment raised more alerts than its max_alerts_per_day. */
  daysOverBudget: number;
  perDay: Array<{ day: string; alerts: number; suppressed: number; overBudget: boolean }>;
  deployments: DeploymentBudget[];
};

/**
 * Noise-budget consumption over a window, from the alerts per deployment and UTC day. A day is over
 * budget for a deployment when it raised more alerts (suppressed ones included: they are what went
 * over) than its max_alerts_per_day.
 */
export function noiseBudgetOf(days: readonly DeploymentDay[], deployments: readonly BudgetedDeployment[], today: string, windowDays: number): NoiseBudget {
  const over = (d: DeploymentDay) => {
    const budget = deployments.find((x) => x.deploymentId === d.deploymentId)?.maxAlertsPerDay ?? null;
    return budget !== null && d.alerts > budget;
  };
  const byDay = new Map<string, { day: string; alerts: number; suppressed: number; overBudget: boolean }>();
  for (const d of days) {
    const e = byDay.get(d.day) ?? { day: d.day, alerts: 0, suppressed: 0, overBudget: false };
    e.alerts += d.alerts;
    e.suppressed += d.suppressed;
    e.overBudget ||= over(d);
    byDay.set(d.day, e);
  }
  const perDay = [...byDay.values()].sort((a, b) => a.day.localeCompare(b.day));
  const sum = (xs: readonly DeploymentDay[], f: (d: DeploymentDay) => number) => xs.reduce((s, d) => s + f(d), 0);
  const alerts = sum(days, (d) => d.alerts);
  return {
    alertsToday: sum(
      days.filter((d) => d.day === today),
      (d) => d.alerts,
    ),
    alerts,
    alertsPerDay: windowDays > 0 ? alerts / windowDays : 0,
    suppressed: sum(days, (d) => d.suppressed),
    daysOverBudget: perDay.filter((d) => d.overBudget).length,
    perDay,
    deployments: deployments.map((dep) => {
      const own = days.filter((d) => d.deploymentId === dep.deploymentId);
      const alertsToday = sum(
        own.filter((d) => d.day === today),
        (d) => d.alerts,
      );
      return {
        ...dep,
        alertsToday,
        consumptionToday: dep.maxAlertsPerDay === null ? null : ratio(alertsToday, dep.maxAlertsPerDay),
        alerts: sum(own, (d) => d.alerts),
        suppressed: sum(own, (d) => d.suppressed),
        daysOverBudget: own.filter(over).length,
      };
    }),
  };
}
