import { ScheduleNotFoundError } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDeploymentActivities } from '../../activities/deployments';
import { createDetectionActivities } from '../../activities/detection';
import { createScheduleActivities } from '../../activities/schedules';
import { workflowIds } from '../../workflows/contracts';
import { imageRule, pauseSchedule, startTestService, type TestService, until } from '../support/harness';

/**
 * Activities run again after their first attempt took effect (a worker died before reporting, an
 * attempt timed out), and race other runs on the same rows. These call them directly, as a retry
 * or a late attempt would, against the real database and Temporal.
 */
const RULE_ID = 'ac71e000-0000-4000-8000-000000000001';

describe('activities repeated or late', () => {
  let svc: TestService;
  let v1: string;
  let v2: string;
  beforeAll(async () => {
    svc = await startTestService({ detectionSchedules: 'per-deployment' });
    const deploy = async (revision: number) => {
      expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(RULE_ID, `retried${revision}.exe`, revision) } })).status).toBe(201);
      const started = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE_ID, target: 'local', approval_required: false } });
      expect(started.status).toBe(202);
      expect((await svc.request('GET', `/api/v1/deployments/${started.body.id}?wait=30`)).body.status).toBe('active');
      // The run sets up the detection schedule after activation: finished, so the next deploy's
      // removal of this version's schedule cannot race its creation.
      await svc.client.workflow.getHandle(started.body.workflow_id).result();
      return started.body.id as string;
    };
    v1 = await deploy(1);
    v2 = await deploy(2);
  });
  afterAll(() => svc.close());

  const temporal = () => ({ client: svc.client, taskQueue: svc.taskQueue });
  const deployment = async (id: string) => (await svc.request('GET', `/api/v1/deployments/${id}`)).body;

  it('activation run again after it committed still names the version it superseded', async () => {
    expect((await deployment(v1)).status).toBe('superseded');
    const again = await createDeploymentActivities({ db: svc.database.db, siem: svc.siem }).activateDeployment({ deploymentId: v2 });
    expect(again.superseded).toEqual([v1]);
    expect((await deployment(v2)).status).toBe('active');
  });

  it('a late `failed` never ends a live deployment', async () => {
    await createDeploymentActivities({ db: svc.database.db, siem: svc.siem }).setDeploymentStatus({ deploymentId: v2, status: 'failed', error: 'schedule setup failed' });
    expect(await deployment(v2)).toMatchObject({ status: 'active', error: null });
  });

  it('sets up no schedule for a deployment superseded since, and a leaked one removes itself at its next run', async () => {
    const schedules = createScheduleActivities({ db: svc.database.db, temporal: temporal(), mode: 'per-deployment' });
    expect(await schedules.ensureDetectionSchedule({ deploymentId: v1 })).toBeNull();
    const id = workflowIds.detectionSchedule('default', v1);
    await expect(svc.client.schedule.getHandle(id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);

    // A schedule that leaked (its removal was lost): paused, so only the run below acts on it.
    await svc.client.schedule.create({
      scheduleId: id,
      spec: { intervals: [{ every: '1 hour' }] },
      action: { type: 'startWorkflow', workflowType: 'DetectionRun', args: [{ deploymentId: v1 }], taskQueue: svc.taskQueue, workflowId: id },
      state: { paused: true },
    });
    const outcome = await createDetectionActivities({ db: svc.database.db, siem: svc.siem, temporal: temporal() }).runDetection({ deploymentId: v1 });
    expect(outcome.skipped).toBe('deployment is superseded');
    await expect(svc.client.schedule.getHandle(id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    // The live version's schedule is untouched.
    const live = svc.client.schedule.getHandle(workflowIds.detectionSchedule('default', v2));
    await until('the live version’s schedule', async () =>
      live.describe().then(
        () => true,
        () => undefined,
      ),
    );
  });
  it('a detection run retried after it committed returns what it did, so its budget crossing is still acted on', async () => {
    const ruleId = 'ac71e000-0000-4000-8000-000000000002';
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(ruleId, 'noisy.exe') } })).status).toBe(201);
    const started = await svc.request('POST', '/api/v1/rules/deploy', {
      body: { rule_id: ruleId, target: 'local', approval_required: false, noise_budget: { max_alerts_per_day: 1, on_exceed: 'demote' } },
    });
    expect(started.status).toBe(202);
    expect((await svc.request('GET', `/api/v1/deployments/${started.body.id}?wait=30`)).body.status).toBe('active');
    // Only the calls below detect: the deployment's own schedule is paused.
    const schedule = svc.client.schedule.getHandle(workflowIds.detectionSchedule('default', started.body.id));
    // Set up just after activation: pause it once it exists (and let a pass it started end).
    await until('the detection schedule', async () =>
      pauseSchedule(svc.client, schedule.scheduleId, 'test drives detection').then(
        () => true,
        () => undefined,
      ),
    );
    const lines = [1, 2, 3].map((i) => JSON.stringify({ '@timestamp': new Date().toISOString(), Image: 'C:\\x\\noisy.exe', CommandLine: `noisy ${i}` }));
    expect(
      (await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', { body: lines.join('\n'), headers: { 'content-type': 'application/x-ndjson' } }))
        .body.accepted,
    ).toBe(3);

    const detection = createDetectionActivities({ db: svc.database.db, siem: svc.siem, temporal: temporal() });
    // Two attempts of one activity execution: the first committed, then its worker died before reporting.
    const attempt = (n: number) =>
      new MockActivityEnvironment({ activityId: '1', attempt: n, workflowExecution: { workflowId: `detect/default/${started.body.id}`, runId: 'run-1' } });
    const first = await attempt(1).run(detection.runDetection, { deploymentId: started.body.id });
    expect(first).toMatchObject({ raised: 1, suppressed: 2, budgetExceededNow: true, demoted: true });
    const retried = await attempt(2).run(detection.runDetection, { deploymentId: started.body.id });
    expect(retried).toEqual(first);
    // Another execution (the next scheduled run) evaluates afresh: demoted, in shadow, nothing new.
    const next = await new MockActivityEnvironment({ activityId: '1', workflowExecution: { workflowId: `detect/default/${started.body.id}`, runId: 'run-2' } }).run(
      detection.runDetection,
      { deploymentId: started.body.id },
    );
    expect(next).toMatchObject({ mode: 'shadow', scanned: 0, budgetExceededNow: false });
    const runs = (await svc.request('GET', `/api/v1/deployments/${started.body.id}`)).body;
    expect(runs.status).toBe('demoted');
  });
  it('a removal finds nothing to remove once the version it meant is no longer live, and a repeated one is a no-op', async () => {
    const activities = createDeploymentActivities({ db: svc.database.db, siem: svc.siem });
    await expect(activities.retireDeployment({ deploymentId: v1, reason: 'rolled back: too late' })).rejects.toThrow(/no longer live .* it is superseded/);
    expect((await deployment(v1)).status).toBe('superseded');
    const reason = 'rolled back: retired twice';
    await activities.retireDeployment({ deploymentId: v2, reason });
    await activities.retireDeployment({ deploymentId: v2, reason });
    expect(await deployment(v2)).toMatchObject({ status: 'rolled_back', error: reason });
  });
  it('reports the day’s budget crossing once, even after people triage the suppressed alerts', async () => {
    const ruleId = 'ac71e000-0000-4000-8000-000000000003';
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(ruleId, 'triaged.exe') } })).status).toBe(201);
    const started = await svc.request('POST', '/api/v1/rules/deploy', {
      body: { rule_id: ruleId, target: 'local', approval_required: false, noise_budget: { max_alerts_per_day: 1 } },
    });
    expect((await svc.request('GET', `/api/v1/deployments/${started.body.id}?wait=30`)).body.status).toBe('active');
    const schedule = svc.client.schedule.getHandle(workflowIds.detectionSchedule('default', started.body.id));
    await until('the detection schedule', async () =>
      pauseSchedule(svc.client, schedule.scheduleId, 'test drives detection').then(
        () => true,
        () => undefined,
      ),
    );
    const ingest = async (n: number) => {
      const lines = Array.from({ length: n }, (_, i) =>
        JSON.stringify({ '@timestamp': new Date().toISOString(), Image: 'C:\\x\\triaged.exe', CommandLine: `triaged ${Math.random()} ${i}` }),
      );
      expect(
        (
          await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
            body: lines.join('\n'),
            headers: { 'content-type': 'application/x-ndjson' },
          })
        ).body.accepted,
      ).toBe(n);
    };
    const detection = createDetectionActivities({ db: svc.database.db, siem: svc.siem, temporal: temporal() });
    const run = (n: number) =>
      new MockActivityEnvironment({ activityId: '1', workflowExecution: { workflowId: `detect/default/${started.body.id}`, runId: `triage-${n}` } }).run(
        detection.runDetection,
        { deploymentId: started.body.id },
      );

    await ingest(3);
    expect(await run(1)).toMatchObject({ raised: 1, suppressed: 2, budgetExceededNow: true });
    // Every suppressed alert triaged: none reads `suppressed` any more.
    const suppressed = (await svc.request('GET', `/api/v1/alerts?deployment_id=${started.body.id}&status=suppressed`)).body.items as Array<{ id: string }>;
    expect(suppressed).toHaveLength(2);
    for (const a of suppressed) expect((await svc.request('PATCH', `/api/v1/alerts/${a.id}`, { body: { status: 'closed', disposition: 'false_positive' } })).status).toBe(200);
    await ingest(2);
    expect(await run(2)).toMatchObject({ raised: 0, suppressed: 2, budgetExceededNow: false });
  });
});
