import { log, proxyActivities } from '@temporalio/workflow';
import type { BatchOutcome, DetectionActivities } from '../activities/detection';
import { notifyInBackground } from './notify';
import { trackSteps } from './current-step';
import { afterBudgetExceeded } from './detection-run';

const { runDetectionBatch } = proxyActivities<DetectionActivities>({
  // A pass over a thousand rules takes minutes; the heartbeat after each rule tells a lost worker apart.
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * One scheduled-detection pass of every live deployment of a tenant on a local target (started by
 * the group's Temporal Schedule, decision record 0084). The activity runs each deployment as
 * DetectionRun's activity does (its run record, cursor, noise budget); a rule that fails is
 * recorded as its failed run and does not fail the pass. The follow-ups the per-deployment run
 * does are done here for the few rules that need them: the health notification, and on the run
 * that went over the noise budget the notification, demotion notice or Rollback run.
 */
export async function DetectionBatch(input: { tenantId: string; targetId: string }): Promise<BatchOutcome> {
  const step = trackSteps();
  step('running the detection query of every live rule');
  const outcome = await runDetectionBatch.executeWithOptions({ summary: `Detection queries of every live rule of ${input.tenantId}` }, [input]);
  for (const f of outcome.failures) log.warn('detection run of a rule failed', { ...f });
  for (const c of outcome.healthCrossings) {
    const id = typeof c.data['deployment_id'] === 'string' ? c.data['deployment_id'] : 'unknown';
    await notifyInBackground({ tenantId: c.tenantId, event: 'rule.health_degraded', step: `rule-health-${id}`, data: c.data });
  }
  for (const b of outcome.budgetExceeded) await afterBudgetExceeded(b.deploymentId, b.outcome, `-${b.deploymentId}`);
  step(
    `done: ${outcome.rules} rules run (${outcome.failed} failed), ${outcome.raised} alerts raised, ${outcome.suppressed} suppressed` +
      (outcome.budgetExceeded.length > 0 ? `, ${outcome.budgetExceeded.length} over their noise budget` : ''),
  );
  return outcome;
}
