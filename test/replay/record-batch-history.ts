/**
 * Records the DetectionBatch history that `replay-histories.test.ts` replays:
 *
 *   npx tsx test/replay/record-batch-history.ts
 *
 * The service as the integration tests start it, with per-target detection schedules (decision
 * record 0084): two rules deployed on `local`, one over a noise budget of one alert, events for
 * both, then one DetectionBatch pass started directly (its schedule is paused so the pass is this
 * one). The history covers the batch activity and the noise-budget notification it sends. Kept apart
 * from record-histories.ts, whose paths assume per-deployment schedules; keeps a committed file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { deployments } from '../../db/schema';
import { workflowIds } from '../../workflows/contracts';
import globalSetup from '../support/global-setup';
import globalTeardown from '../support/global-teardown';
import { imageRule, startTestService } from '../support/harness';
import { historyToJSON } from './history-json';

const FILE = path.join(__dirname, 'histories', 'detection-batch-pass.json');

async function main(): Promise<void> {
  await globalSetup();
  try {
    const svc = await startTestService({ detectionSchedules: 'per-target' });
    try {
      const rules = [
        ['e2000000-0000-4000-8000-000000000001', 'batched.exe', undefined],
        ['e2000000-0000-4000-8000-000000000002', 'overbudget.exe', { max_alerts_per_day: 1 }],
      ] as const;
      for (const [id, image, budget] of rules) {
        if ((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(id, image) } })).status >= 300) throw new Error(`rule ${id}`);
        const res = await svc.request('POST', '/api/v1/rules/deploy', {
          body: { rule_id: id, target: 'local', approval_required: false, ...(budget ? { noise_budget: budget } : {}) },
        });
        if (res.status !== 202) throw new Error(`deploy ${id}: ${res.status} ${res.text}`);
        await svc.client.workflow.getHandle(res.body.workflow_id).result();
      }
      const [row] = await svc.database.db.select({ targetId: deployments.targetId }).from(deployments).where(eq(deployments.ruleId, rules[0][0]));
      const scheduleId = workflowIds.detectionBatchSchedule('default', row!.targetId);
      await svc.client.schedule.getHandle(scheduleId).pause('recording');
      const lines = ['batched.exe', 'overbudget.exe', 'overbudget.exe', 'other.exe'].map((image, i) =>
        JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} ${i}` }),
      );
      const ingest = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
        body: lines.join('\n'),
        headers: { 'content-type': 'application/x-ndjson' },
      });
      if (ingest.status !== 200) throw new Error(`ingest: ${ingest.status}`);
      const workflowId = `${scheduleId}-recorded`;
      const outcome = await svc.client.workflow.execute('DetectionBatch', { args: [{ tenantId: 'default', targetId: row!.targetId }], taskQueue: svc.taskQueue, workflowId });
      if (outcome.budgetExceeded.length !== 1) throw new Error(`one rule should go over its budget: ${JSON.stringify(outcome)}`);
      if (!fs.existsSync(FILE)) fs.writeFileSync(FILE, historyToJSON(await svc.client.workflow.getHandle(workflowId).fetchHistory()));
      process.stdout.write(`recorded ${FILE}\n`);
    } finally {
      await svc.close();
    }
  } finally {
    await globalTeardown();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
