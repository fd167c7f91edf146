import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ReplayActivities } from '../activities/replay';
import type { ShadowSlice, ShadowState } from '../activities/shadow';
import { RunQuery, RunSignal, STATUS, FailureType } from './contracts';
import { notifyInBackground } from './notify';
import { trackSteps } from './current-step';

export type ShadowInput = {
  shadowId: string;
  tenantId: string;
  ruleId: string;
  targetName: string;
  durationMs: number;
  intervalMs: number;
  /** Evaluations per workflow run before it continues as new (history stays small on long windows). */
  continueAsNewAfter: number;
  /** The state accumulated by the runs before this one (continue-as-new); absent on the first run. */
  carried?: ShadowState;
};

export type ShadowProgress = ShadowState & { status: 'running' | 'completed' | 'failed' };

export const shadowProgressQuery = defineQuery<ShadowProgress | null>(RunQuery.shadowProgress);
/** Ends the shadow evaluation early; the slice ingested up to now is still evaluated. */
export const stopShadowSignal = defineSignal(RunSignal.stopShadow);

const activities = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '20 seconds',
    maximumAttempts: 8,
    nonRetryableErrorTypes: [FailureType.ShadowNotFound, FailureType.RuleDoesNotCompile, FailureType.UnsupportedTargetKind, FailureType.EventStoreQueryError],
  },
});

/**
 * A rule over live data: every interval it evaluates the events ingested since its cursor (starting
 * at the store's cursor when the shadow starts) and adds up what it would have raised, never writing
 * an alert. Long windows continue as new with the accumulated state, so the history stays bounded.
 */
export async function ShadowEvaluation(input: ShadowInput): Promise<Record<string, unknown> | null> {
  let state: ShadowState | null = input.carried ? { ...input.carried, workflowRuns: input.carried.workflowRuns + 1 } : null;
  let status: ShadowProgress['status'] = 'running';
  let stopRequested = false;
  setHandler(shadowProgressQuery, () => (state ? { ...state, status } : null));
  setHandler(stopShadowSignal, () => {
    stopRequested = true;
  });
  const step = trackSteps();

  let error: string | null = null;
  try {
    if (!state) {
      const { cursor } = await activities.beginShadow({ shadowId: input.shadowId });
      const started = Date.now();
      state = {
        startedAt: new Date(started).toISOString(),
        endsAt: new Date(started + input.durationMs).toISOString(),
        startCursor: cursor,
        cursor,
        evaluations: 0,
        eventsScanned: 0,
        matches: 0,
        bytesScanned: 0,
        evaluationMsTotal: 0,
        evaluationMsMax: 0,
        workflowRuns: 1,
        stoppedEarly: false,
      };
    }
    const endsAt = new Date(state.endsAt).getTime();
    let evaluationsThisRun = 0;
    for (;;) {
      const remaining = endsAt - Date.now();
      step(`evaluation ${state.evaluations + 1}: waiting for the next interval (ends ${state.endsAt})`);
      if (remaining > 0 && !stopRequested) await condition(() => stopRequested, Math.min(input.intervalMs, remaining));
      step(`evaluation ${state.evaluations + 1}: evaluating the events ingested since the last one`);
      const slice: ShadowSlice = await activities.shadowSlice({ shadowId: input.shadowId, cursor: state.cursor });
      state = {
        ...state,
        cursor: slice.cursor,
        evaluations: state.evaluations + 1,
        eventsScanned: state.eventsScanned + slice.scanned,
        matches: state.matches + slice.matched,
        bytesScanned: state.bytesScanned + slice.bytesScanned,
        evaluationMsTotal: state.evaluationMsTotal + slice.durationMs,
        evaluationMsMax: Math.max(state.evaluationMsMax, slice.durationMs),
      };
      evaluationsThisRun++;
      if (stopRequested) {
        state.stoppedEarly = Date.now() < endsAt;
        break;
      }
      if (Date.now() >= endsAt) break;
      if (workflowInfo().continueAsNewSuggested || evaluationsThisRun >= input.continueAsNewAfter) {
        await condition(allHandlersFinished);
        // A stop that arrived while waiting for handlers is honoured by the next run.
        if (stopRequested) continue;
        // Awaited inside the try: continueAsNew throws ContinueAsNew, which the catch below rethrows.
        return await continueAsNew<typeof ShadowEvaluation>({ ...input, carried: state });
      }
    }
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    error = err.cause?.message ?? err.message;
    log.warn('shadow evaluation failed', { shadowId: input.shadowId, error });
  }

  status = error ? 'failed' : 'completed';
  step(`done: ${status}`);
  // Upserted before the record is written, so a client that sees the record sees the attribute.
  upsertSearchAttributes([{ key: STATUS, value: status }]);
  const result = await activities.recordShadowResult({ shadowId: input.shadowId, status, error, state, endedAt: new Date(Date.now()).toISOString() });
  await notifyInBackground({
    tenantId: input.tenantId,
    event: 'shadow.completed',
    step: status,
    data: {
      shadow_id: input.shadowId,
      rule_id: input.ruleId,
      target: input.targetName,
      status,
      error,
      alerts: state?.matches ?? 0,
      events_scanned: state?.eventsScanned ?? 0,
      stopped_early: state?.stoppedEarly ?? false,
    },
  });
  return result;
}
