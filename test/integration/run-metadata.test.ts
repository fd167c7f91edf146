import { and, eq } from 'drizzle-orm';
import { deployments, targets } from '../../db/schema';
import { workflowIds } from '../../workflows/contracts';
import { createCiKey, processRule, startTestService, until, type TestService } from '../support/harness';

const RULE = 'e1000000-0000-4000-8000-000000000001';
const TITLE = 'Metadata subject';
// A past day, inside every tier's replay window, whatever the clock says.
const DAY = 24 * 3600 * 1000;
const FROM = new Date(Math.floor(Date.now() / DAY) * DAY - 3 * DAY).toISOString();
const TO = new Date(Math.floor(Date.now() / DAY) * DAY - 2 * DAY).toISOString();

/**
 * What an operator reads in the Temporal UI: every kind of run, started through the API (or by a
 * schedule, or by another run), carries a summary and details naming what it is about, and a run
 * waiting for a reviewer says so through its current step.
 */
describe('runs in the Temporal UI: summaries, details and current step', () => {
  let svc: TestService;
  let ci: string;
  beforeAll(async () => {
    svc = await startTestService({ detectionSchedules: 'per-deployment' });
    ci = (await createCiKey(svc)).token;
    for (const revision of [1, 2]) {
      const created = await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(RULE, { title: TITLE, level: 'low', image: `\\meta${revision}.exe` }) } });
      expect([200, 201]).toContain(created.status);
    }
  });
  afterAll(() => svc.close());

  const metadataOf = async (workflowId: string) => {
    const described = await svc.client.workflow.getHandle(workflowId).describe();
    return { summary: await described.staticSummary(), details: await described.staticDetails() };
  };
  const currentStep = (workflowId: string) => svc.client.workflow.getHandle(workflowId).query<string | null>('currentStep');
  const currentDetails = async (workflowId: string) =>
    (await svc.client.workflow.getHandle(workflowId).query<{ currentDetails?: string }>('__temporal_workflow_metadata')).currentDetails;

  it('a deploy waiting for approval says what it is, who asked and why, and that it waits for the reviewer', async () => {
    const res = await svc.request('POST', '/api/v1/approvals', {
      token: ci,
      body: { rule_id: RULE, targets: ['local'], version: 1, description: 'tighten the image match', link: 'https://git.example/pr/9' },
    });
    expect(res.status).toBe(202);
    const workflowId = res.body.workflow_id as string;
    const approvalId = res.body.id as string;
    const deploymentId = res.body.deployment_ids[0] as string;
    const { summary, details } = await metadataOf(workflowId);
    expect(summary).toBe(`Deploy (needs approval) ‘${TITLE}’ v1 → local (asked by ci: tighten the image match)`);
    expect(details).toContain(`[${RULE}](/api/v1/rules/${RULE}/versions/1)`);
    expect(details).toContain(`[${approvalId}](/api/v1/approvals/${approvalId})`);
    expect(details).toContain(`[${deploymentId}](/api/v1/deployments/${deploymentId})`);
    expect(details).toContain('| Link | https://git.example/pr/9 |');

    const waiting = await until('the run to wait for its reviewer', async () => {
      const step = await currentStep(workflowId);
      return step?.startsWith('waiting for') ? step : undefined;
    });
    expect(waiting).toBe(`waiting for a reviewer's decision on approval ${approvalId}`);
    expect(await currentDetails(workflowId)).toBe(`**Current step:** ${waiting}`);

    // Decided: the step moves on to the deploy and ends.
    expect((await svc.request('POST', `/api/v1/approvals/${approvalId}/decision`, { body: { decision: 'approve', comment: 'ok' } })).status).toBe(200);
    expect(await svc.client.workflow.getHandle(workflowId).result()).toMatchObject({ status: 'active' });
    expect(await currentStep(workflowId)).toBe('done: active');
  });

  it('a direct deploy, the notification and the detection schedule it starts, and a rollback of it all say what they are', async () => {
    const res = await svc.request('POST', '/api/v1/rules/deploy', { token: ci, body: { rule_id: RULE, target: 'local', approval_required: false, version: 2 } });
    expect(res.status).toBe(202);
    const workflowId = res.body.workflow_id as string;
    const deploymentId = res.body.id as string;
    expect((await metadataOf(workflowId)).summary).toBe(`Deploy ‘${TITLE}’ v2 → local (asked by ci)`);
    expect(await svc.client.workflow.getHandle(workflowId).result()).toMatchObject({ status: 'active' });

    const notify = await metadataOf(workflowIds.notify('default', 'deployment.succeeded', workflowId, `succeeded-${deploymentId}`));
    expect(notify.summary).toBe(`Notify deployment.succeeded about ${RULE} v2 on local`);
    expect(notify.details).toContain(`(/api/v1/deployments/${deploymentId})`);

    const schedule = await svc.client.schedule.getHandle(workflowIds.detectionSchedule('default', deploymentId)).describe();
    expect(schedule.action.type).toBe('startWorkflow');
    expect(schedule.action.staticSummary).toMatch(new RegExp(`^Detect with ${RULE} v2 on local every `));
    expect(schedule.action.staticDetails).toContain(`(/api/v1/deployments/${deploymentId})`);

    const rollback = await svc.request('POST', '/api/v1/rules/rollback', { token: ci, body: { rule_id: RULE, target: 'local', reason: 'too noisy' } });
    expect(rollback.status).toBe(202);
    const rolled = await metadataOf(rollback.body.workflow_id);
    expect(rolled.summary).toBe(`Roll back ‘${TITLE}’ v2 → v1 on local (asked by ci: too noisy)`);
    expect(rolled.details).toContain('| Reason | too noisy |');
    expect(await svc.client.workflow.getHandle(rollback.body.workflow_id).result()).toMatchObject({ status: 'completed' });
    expect(await currentStep(rollback.body.workflow_id)).toBe('done: completed');
  });

  it('replays, shadow evaluations, drift checks and restores say what they are', async () => {
    const replay = await svc.request('POST', '/api/v1/rules/replay', {
      token: ci,
      body: { rule_id: RULE, target: 'local', from: FROM, to: TO },
    });
    expect(replay.status).toBe(202);
    const replayed = await metadataOf(replay.body.workflow_id);
    expect(replayed.summary).toBe(`Replay ‘${TITLE}’ v2 on local, ${FROM} → ${TO} (asked by ci)`);
    expect(replayed.details).toContain(`(/api/v1/replays/${replay.body.id})`);
    await svc.client.workflow.getHandle(replay.body.workflow_id).result();
    expect(await currentStep(replay.body.workflow_id)).toBe('done: completed');

    const shadow = await svc.request('POST', '/api/v1/rules/shadow', { token: ci, body: { rule_id: RULE, target: 'local', duration: 'PT5M', interval: 'PT1M' } });
    expect(shadow.status).toBe(202);
    const shadowed = await metadataOf(shadow.body.workflow_id);
    expect(shadowed.summary).toBe(`Shadow-run ‘${TITLE}’ v2 on local for PT5M every PT1M (asked by ci)`);
    expect(shadowed.details).toContain(`(/api/v1/shadows/${shadow.body.id})`);
    const evaluating = await until('the shadow to wait for its first interval', async () => {
      const step = await currentStep(shadow.body.workflow_id);
      return step?.startsWith('evaluation 1:') ? step : undefined;
    });
    expect(evaluating).toMatch(/^evaluation 1: waiting for the next interval \(ends /);
    expect((await svc.request('POST', `/api/v1/shadows/${shadow.body.id}/stop`)).status).toBeLessThan(300);

    const checked = await svc.request('POST', '/api/v1/settings/targets/local/drift-check');
    expect(checked.status).toBe(200);
    // The run is found through visibility, which lags the start a little. The dev server is shared:
    // only this service's local target's checks, not another test file's.
    const [local] = await svc.database.db
      .select({ id: targets.id })
      .from(targets)
      .where(and(eq(targets.tenantId, 'default'), eq(targets.name, 'local')));
    const summary = await until('the drift check run to be listed', async () => {
      for await (const run of svc.client.workflow.list({ query: `WorkflowType = 'DriftCheck'` })) {
        if (!run.workflowId.startsWith(`drift/default/${local!.id}/`)) continue;
        const found = await (await svc.client.workflow.getHandle(run.workflowId).describe()).staticSummary();
        if (found) return found;
      }
      return undefined;
    });
    expect(summary).toBe('Drift check of local (asked by bootstrap)');

    const [live] = await svc.database.db
      .select()
      .from(deployments)
      .where(and(eq(deployments.ruleId, RULE), eq(deployments.status, 'active')));
    expect((await svc.request('POST', `/api/v1/deployments/${live!.id}/restore`)).status).toBe(200);
    const restore = await until('the restore run to be listed', async () => {
      for await (const run of svc.client.workflow.list({ query: `WorkflowType = 'RestoreDeployment'` })) {
        if (run.workflowId.startsWith(`restore/default/${live!.id}/`)) return run.workflowId;
      }
      return undefined;
    });
    expect((await metadataOf(restore)).summary).toBe(`Restore ${RULE} v1 on local as deployed (asked by bootstrap)`);
    expect(await currentStep(restore)).toMatch(/^done: (restored|nothing to restore)$/);
  });

  it('the scheduled drift check and retention pass say what they are', async () => {
    const drift = await svc.client.schedule.getHandle(workflowIds.driftSchedule).describe();
    expect(drift.action.type === 'startWorkflow' && drift.action.staticSummary).toMatch(/^Drift check of every target with something deployed \(every \d+ min\)$/);
    const retention = await svc.client.schedule.getHandle(workflowIds.retentionSchedule).describe();
    expect(retention.action.type === 'startWorkflow' && retention.action.staticSummary).toMatch(/^Apply retention/);
  });
});
