import { log, proxyActivities } from '@temporalio/workflow';
import type { DriftActivities, TargetDriftOutcome } from '../activities/drift';
import { notifyInBackground } from './notify';
import { trackSteps } from './current-step';

const { listDriftTargets, checkTargetDrift } = proxyActivities<DriftActivities>({
  startToCloseTimeout: '5 minutes',
  // A SIEM that throttles or is down is retried (after its Retry-After); one that refuses the
  // credentials fails at once (SiemRefused is non-retryable) and the next scheduled check tries again.
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 4 },
});

// A check someone waits for through the API: two attempts, then the answer (a 503 saying why).
const interactive = proxyActivities<DriftActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '10 seconds', maximumAttempts: 2 },
});

export type DriftCheckInput = {
  /** One target (a check asked for through the API); every target with something deployed when absent (the schedule). */
  targetId?: string;
};

export type DriftCheckOutcome = { checked: TargetDriftOutcome[]; failed: Array<{ targetId: string; error: string }> };

/**
 * Compares each target with what detflow deployed there and notifies `deployment.drifted` once per
 * departure, when a check first finds it. A target that cannot be checked is reported and skipped:
 * one unreachable SIEM does not hide the drift of the others.
 */
export async function DriftCheck(input: DriftCheckInput = {}): Promise<DriftCheckOutcome> {
  const targets = input.targetId ? [{ targetId: input.targetId }] : await listDriftTargets();
  const outcome: DriftCheckOutcome = { checked: [], failed: [] };
  const step = trackSteps();
  for (const [i, { targetId }] of targets.entries()) {
    step(`checking target ${targetId} (${i + 1} of ${targets.length})`);
    let result: TargetDriftOutcome;
    try {
      result = await (input.targetId ? interactive.checkTargetDrift : checkTargetDrift)({ targetId });
    } catch (err) {
      if (input.targetId) throw err;
      log.warn('drift check of a target failed', { targetId, error: (err as Error).message });
      outcome.failed.push({ targetId, error: (err as Error).message });
      continue;
    }
    outcome.checked.push(result);
    for (const d of result.found) {
      await notifyInBackground({
        tenantId: result.tenantId,
        event: 'deployment.drifted',
        step: `drift-${d.id}`,
        data: { target: result.target, object: d.object, kind: d.kind, rule_id: d.rule_id, deployment_id: d.deployment_id, detail: d.detail },
      });
    }
  }
  step(`done: ${outcome.checked.length} checked, ${outcome.failed.length} failed`);
  return outcome;
}
