import { ScheduleNotFoundError } from '@temporalio/client';
import { createDeploymentActivities } from '../../activities/deployments';
import { createDetectionActivities } from '../../activities/detection';
import { createScheduleActivities, detectionScheduleId } from '../../activities/schedules';
import { imageRule, startTestService, type TestService } from '../support/harness';

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
    svc = await startTestService();
    const deploy = async (revision: number) => {
      expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(RULE_ID, `retried${revision}.exe`, revision) } })).status).toBe(201);
      const started = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE_ID, target: 'local', approval_required: false } });
      expect(started.status).toBe(202);
      expect((await svc.request('GET', `/api/v1/deployments/${started.body.id}?wait=30`)).body.status).toBe('active');
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
    const schedules = createScheduleActivities({ db: svc.database.db, temporal: temporal() });
    expect(await schedules.ensureDetectionSchedule({ deploymentId: v1 })).toBeNull();
    const id = detectionScheduleId('default', v1);
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
    expect((await svc.client.schedule.getHandle(detectionScheduleId('default', v2)).describe()).scheduleId).toBe(detectionScheduleId('default', v2));
  });
});
