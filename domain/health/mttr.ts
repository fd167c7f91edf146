import { round } from '../runs/rounding';

/**
 * MTTR, mean time to resolve: the mean of (closed_at − created_at) over the alerts closed within the
 * window, overall, per team and per severity (the `level` of the rule version that raised the
 * alert). An alert reopened is not resolved (its closed_at is cleared); closed again, it counts from
 * its creation to that last close.
 */

/** Alerts closed in the window, by (team, level), with the sum of their resolution times. */
export type ResolutionRow = { team: string | null; level: string | null; alerts: number; seconds: number };

export type Mttr = { alerts: number; meanSeconds: number | null };
export type MttrReport = {
  overall: Mttr;
  byTeam: Array<Mttr & { team: string | null }>;
  bySeverity: Array<Mttr & { level: string | null }>;
  reason: string | null;
};

/** Sigma's levels, most severe first; a level outside them sorts after, then none. */
export const SEVERITY_ORDER = ['critical', 'high', 'medium', 'low', 'informational'] as const;

const rank = (level: string | null) => {
  const i = level === null ? -1 : (SEVERITY_ORDER as readonly string[]).indexOf(level);
  return i >= 0 ? i : level === null ? SEVERITY_ORDER.length + 1 : SEVERITY_ORDER.length;
};
const mean = (alerts: number, seconds: number): Mttr => ({ alerts, meanSeconds: alerts > 0 ? round(seconds / alerts, 3) : null });

function groupBy<K>(rows: readonly ResolutionRow[], key: (r: ResolutionRow) => K): Array<[K, Mttr]> {
  const sums = new Map<K, { alerts: number; seconds: number }>();
  for (const r of rows) {
    const s = sums.get(key(r)) ?? { alerts: 0, seconds: 0 };
    s.alerts += r.alerts;
    s.seconds += r.seconds;
    sums.set(key(r), s);
  }
  return [...sums.entries()].map(([k, s]) => [k, mean(s.alerts, s.seconds)]);
}

export function mttr(rows: readonly ResolutionRow[]): MttrReport {
  const alerts = rows.reduce((n, r) => n + r.alerts, 0);
  const seconds = rows.reduce((n, r) => n + r.seconds, 0);
  return {
    overall: mean(alerts, seconds),
    byTeam: groupBy(rows, (r) => r.team)
      .map(([team, m]) => ({ team, ...m }))
      .sort((a, b) => (a.team === b.team ? 0 : a.team === null ? 1 : b.team === null ? -1 : a.team.localeCompare(b.team))),
    bySeverity: groupBy(rows, (r) => r.level)
      .map(([level, m]) => ({ level, ...m }))
      .sort((a, b) => rank(a.level) - rank(b.level) || String(a.level).localeCompare(String(b.level))),
    reason: alerts > 0 ? null : 'no alert was closed in the window',
  };
}
