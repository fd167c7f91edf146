import { and, eq } from 'drizzle-orm';
import { alerts, deployments, detectionRuns, ruleVersions } from '../../db/schema';
import { workflowIds } from '../../workflows/contracts';
import type { BatchOutcome } from '../../activities/detection';
import { createTenant, imageRule, pauseSchedule, startTestService, type TestService } from '../support/harness';

/**
 * Scheduled detection per tenant and local target (decision record 0084): one Schedule per
 * group, no per-deployment schedule; one DetectionBatch run evaluates every live deployment of its
 * group, each with its own run record, and a rule whose query fails is recorded and stops no other.
 * The group's schedule is paused and its workflow started by the test, so each pass is the test's.
 * A five-minute interval fires on the wall clock's five-minute marks, so a scheduled pass may run
 * before the pause: the test waits for it and counts only the run records its own passes made.
 */
let seq = 0;
const event = (image: string) => JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} ${++seq}` });

describe('DetectionBatch', () => {
  let svc: TestService;
  let other: string;
  beforeAll(async () => {
    svc = await startTestService({ detectionSchedules: 'per-target' });
    other = await createTenant(svc, 'batch-other');
  });
  afterAll(() => svc.close());

  const ingest = async (token: string, lines: string[]) => {
    const res = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      token,
      body: lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(res.body.accepted).toBe(lines.length);
  };
  async function deploy(token: string, id: string, image: string): Promise<{ id: string; targetId: string }> {
    expect((await svc.request('POST', '/api/v1/rules', { token, body: { rule: imageRule(id, image) } })).status).toBeLessThan(300);
    const res = await svc.request('POST', '/api/v1/rules/deploy', { token, body: { rule_id: id, target: 'local', approval_required: false } });
    expect(res.status).toBe(202);
    expect(await svc.client.workflow.getHandle(res.body.workflow_id).result()).toMatchObject({ status: 'active' });
    const [row] = await svc.database.db.select({ targetId: deployments.targetId }).from(deployments).where(eq(deployments.id, res.body.id));
    return { id: res.body.id, targetId: row!.targetId };
  }
  let pass = 0;
  const runBatch = (tenantId: string, targetId: string): Promise<BatchOutcome> =>
    svc.client.workflow.execute('DetectionBatch', {
      args: [{ tenantId, targetId }],
      taskQueue: svc.taskQueue,
      workflowId: `${workflowIds.detectionBatchSchedule(tenantId, targetId)}-test-${++pass}`,
    });
  const alertCount = async (deploymentId: string) => (await svc.database.db.select().from(alerts).where(eq(alerts.deploymentId, deploymentId))).length;
  /** Run records made before the schedules were paused (a scheduled pass that fired first). */
  const before = new Set<string>();
  const runsOf = async (deploymentId: string) =>
    (await svc.database.db.select().from(detectionRuns).where(eq(detectionRuns.deploymentId, deploymentId))).filter((r) => !before.has(r.id));

  it('runs every live rule of the tenant and target once per pass, each with its own run record; a failing rule stops no other; another tenant is separate', async () => {
    const a = await deploy(svc.token, 'b0000000-0000-4000-8000-00000000000a', 'alpha.exe');
    const b = await deploy(svc.token, 'b0000000-0000-4000-8000-00000000000b', 'beta.exe');
    const broken = await deploy(svc.token, 'b0000000-0000-4000-8000-00000000000c', 'gamma.exe');
    const theirs = await deploy(other, 'b0000000-0000-4000-8000-00000000000d', 'alpha.exe');

    // One schedule per tenant and target, none per deployment.
    const ours = svc.client.schedule.getHandle(workflowIds.detectionBatchSchedule('default', a.targetId));
    const their = svc.client.schedule.getHandle(workflowIds.detectionBatchSchedule('batch-other', theirs.targetId));
    for (const s of [ours, their]) {
      const described = await s.describe();
      expect(described.action).toMatchObject({ workflowType: 'DetectionBatch' });
      // A pass the schedule started before the pause finishes before the test's own, and is not counted.
      await pauseSchedule(svc.client, s.scheduleId, 'the test runs each pass itself');
    }
    for (const r of await svc.database.db.select({ id: detectionRuns.id }).from(detectionRuns)) before.add(r.id);
    expect(ours.scheduleId).not.toBe(their.scheduleId);
    await expect(svc.client.schedule.getHandle(workflowIds.detectionSchedule('default', a.id)).describe()).rejects.toThrow();

    // The third rule's query now fails on the store (RE2 refuses the repetition), as a rule whose query breaks at run time.
    const failing = imageRule('b0000000-0000-4000-8000-00000000000c', 'gamma.exe').replace(
      '  condition: selection',
      "  filter:\n    CommandLine|re: 'x{2000}'\n  condition: selection and not filter",
    );
    await svc.database.db
      .update(ruleVersions)
      .set({ content: failing })
      .where(and(eq(ruleVersions.tenantId, 'default'), eq(ruleVersions.ruleId, 'b0000000-0000-4000-8000-00000000000c')));

    await ingest(svc.token, [event('alpha.exe'), event('beta.exe'), event('alpha.exe'), event('gamma.exe'), event('other.exe')]);
    await ingest(other, [event('alpha.exe')]);

    const first = await runBatch('default', a.targetId);
    expect(first).toMatchObject({ rules: 3, completed: 2, failed: 1, raised: 3 });
    expect(first.failures.map((f) => f.deploymentId)).toEqual([broken.id]);
    // The two rules that compile were evaluated over one read of the new events (0086); the broken one ran alone and failed.
    expect(first.sharedScan).toEqual({ evaluated: 2 });
    expect(await alertCount(a.id)).toBe(2);
    expect(await alertCount(b.id)).toBe(1);
    expect(await alertCount(broken.id)).toBe(0);
    // Per-rule run records: one each, the broken one's with its error.
    expect((await runsOf(a.id)).map((r) => [r.alertsRaised, r.error])).toEqual([[2, null]]);
    expect((await runsOf(b.id)).map((r) => [r.alertsRaised, r.error])).toEqual([[1, null]]);
    // The broken rule's failure is its own (a rule that no longer compiles leaves no run record, as with its own schedule).
    expect(first.failures[0]!.error).toMatch(/cannot run on local/);
    expect((await runsOf(broken.id)).filter((r) => r.error === null)).toHaveLength(0);
    // The other tenant's rule was not part of this pass.
    expect(await alertCount(theirs.id)).toBe(0);
    expect(await runsOf(theirs.id)).toHaveLength(0);

    // A second pass with nothing new raises nothing again; the other tenant's pass raises its own alert.
    const second = await runBatch('default', a.targetId);
    expect(second).toMatchObject({ rules: 3, raised: 0, sharedScan: { evaluated: 2 } });
    expect(await alertCount(a.id)).toBe(2);
    expect(await runsOf(a.id)).toHaveLength(2);
    expect(await runBatch('batch-other', theirs.targetId)).toMatchObject({ rules: 1, completed: 1, raised: 1 });
    expect(await alertCount(theirs.id)).toBe(1);
    expect(await alertCount(a.id)).toBe(2);
  });
});
