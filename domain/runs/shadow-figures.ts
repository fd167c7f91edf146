import { projectAlertRate } from './alert-rate-projection';
import { projectCost, type CostModel } from './cost-projection';
import { round } from './rounding';

/** What a shadow evaluation has accumulated; carried across continue-as-new. */
export type ShadowState = {
  startedAt: string;
  endsAt: string;
  /** Store cursor when the shadow started: events committed after it are the shadow's. */
  startCursor: number;
  cursor: number;
  evaluations: number;
  eventsScanned: number;
  /** Matches: the alerts the rule would have raised. None is written. */
  matches: number;
  bytesScanned: number;
  evaluationMsTotal: number;
  evaluationMsMax: number;
  /** Workflow runs so far (1 + continue-as-new count). */
  workflowRuns: number;
  stoppedEarly: boolean;
};

const DAY_MS = 86_400_000;

/**
 * The final figures of a shadow evaluation from its accumulated state (see the README), with the
 * sample its projection rests on (the events ingested while it observed), the 95% interval on
 * alerts/day and whether the sample is too thin to trust (see projectAlertRate).
 */
export function shadowFigures(state: ShadowState, endedAt: string, costModel: CostModel) {
  const observedMs = Math.max(0, new Date(endedAt).getTime() - new Date(state.startedAt).getTime());
  const observedDays = observedMs / DAY_MS;
  const started = new Date(state.startedAt);
  // The shadow counts by ingestion, not by event time: which UTC days its events fall on is not known.
  const projection = projectAlertRate({
    events: state.eventsScanned,
    alerts: state.matches,
    from: started,
    to: new Date(started.getTime() + observedMs),
    daysWithEvents: null,
  });
  return {
    started_at: state.startedAt,
    ended_at: endedAt,
    observed_seconds: round(observedMs / 1000, 3),
    stopped_early: state.stoppedEarly,
    evaluations: state.evaluations,
    workflow_runs: state.workflowRuns,
    cursor: { from: state.startCursor, to: state.cursor },
    events_scanned: state.eventsScanned,
    bytes_scanned: state.bytesScanned,
    alerts: {
      projected_total: state.matches,
      projected_per_day: observedDays > 0 ? round(state.matches / observedDays) : 0,
      written: 0,
    },
    latency: {
      total_ms: round(state.evaluationMsTotal, 3),
      mean_evaluation_ms: state.evaluations ? round(state.evaluationMsTotal / state.evaluations, 3) : 0,
      max_evaluation_ms: round(state.evaluationMsMax, 3),
    },
    cost: projectCost(costModel, state.bytesScanned, state.matches, observedMs, projection.alerts_per_day),
    ...projection,
  };
}
