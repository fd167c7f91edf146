/**
 * Team workload: per team, and per assignee within it, the alerts waiting for someone (`open`:
 * status open or acknowledged, whenever raised — a backlog has no window) and the alerts `handled`
 * (closed within the window). Suppressed alerts are never worked and never counted. Alerts without
 * a team are the group `team: null`; without an assignee, `assignee: null`.
 */

/** One (team, assignee) group as the store counts it. */
export type WorkloadRow = { team: string | null; assignee: string | null; open: number; acknowledged: number; handled: number };

export type WorkloadFigures = { open: number; acknowledged: number; handled: number };
export type AssigneeWorkload = WorkloadFigures & { assignee: string | null };
export type TeamWorkload = WorkloadFigures & { team: string | null; assignees: AssigneeWorkload[] };
export type TeamWorkloadReport = { total: WorkloadFigures; teams: TeamWorkload[]; reason: string | null };

/** Named groups by name, the unnamed one last. */
const byName = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a.localeCompare(b));
const add = (a: WorkloadFigures, b: WorkloadFigures): WorkloadFigures => ({
  open: a.open + b.open,
  acknowledged: a.acknowledged + b.acknowledged,
  handled: a.handled + b.handled,
});
const ZERO: WorkloadFigures = { open: 0, acknowledged: 0, handled: 0 };

export function teamWorkload(rows: readonly WorkloadRow[]): TeamWorkloadReport {
  const teams = new Map<string | null, TeamWorkload>();
  for (const r of rows) {
    if (r.open + r.handled === 0) continue;
    const team = teams.get(r.team) ?? { team: r.team, ...ZERO, assignees: [] };
    const figures = { open: r.open, acknowledged: r.acknowledged, handled: r.handled };
    Object.assign(team, add(team, figures));
    const assignee = team.assignees.find((a) => a.assignee === r.assignee);
    if (assignee) Object.assign(assignee, add(assignee, figures));
    else team.assignees.push({ assignee: r.assignee, ...figures });
    teams.set(r.team, team);
  }
  const list = [...teams.values()].sort((a, b) => byName(a.team, b.team));
  for (const t of list) t.assignees.sort((a, b) => byName(a.assignee, b.assignee));
  const total = list.reduce<WorkloadFigures>((sum, t) => add(sum, t), ZERO);
  return { total, teams: list, reason: list.length ? null : 'no alert is waiting and none was closed in the window' };
}
