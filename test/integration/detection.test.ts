import { eq } from 'drizzle-orm';
import { detectionRuns } from '../../db/schema';
import { detectEverySecond, imageRule, startTestService, type TestService, until } from '../support/harness';

let seq = 0;
const event = (image: string) =>
  JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} run ${++seq}`, Computer: 'host-1' });

describe('scheduled detection on the local target', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    await detectEverySecond(svc);
  });
  afterAll(() => svc.close());

  const ingest = (lines: string[]) =>
    svc.request('POST', '/api/v1/events?product=windows&category=process_creation', { body: lines.join('\n'), headers: { 'content-type': 'application/x-ndjson' } });

  async function deploy(id: string, image: string, budget?: number, revision = 1) {
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(id, image, revision) } })).status).toBeLessThan(300);
    const res = await svc.request('POST', '/api/v1/rules/deploy', {
      body: { rule_id: id, target: 'local', approval_required: false, ...(budget !== undefined ? { noise_budget: { max_alerts_per_day: budget } } : {}) },
    });
    expect(res.status).toBe(202);
    expect(await svc.client.workflow.getHandle(res.body.workflow_id).result()).toMatchObject({ status: 'active' });
    return res.body.id as string;
  }

  const alertsOf = async (deploymentId: string) => (await svc.request('GET', `/api/v1/alerts?deployment_id=${deploymentId}&limit=500`)).body.items as any[];

  it('raises one alert per matching event, only for events after the deployment, each once', async () => {
    expect((await ingest([event('evil.exe')])).status).toBe(200); // before the deployment: not alerted
    const deploymentId = await deploy('d0000000-0000-4000-8000-000000000001', 'evil.exe');
    expect((await ingest([event('evil.exe'), event('good.exe'), event('evil.exe'), event('EVIL.EXE')])).body.accepted).toBe(4);
    const first = await until('3 alerts', async () => {
      const items = await alertsOf(deploymentId);
      return items.length >= 3 ? items : undefined;
    });
    expect(first).toHaveLength(3);
    expect(first.every((a) => a.status === 'open' && a.rule_id === 'd0000000-0000-4000-8000-000000000001' && a.target === 'local')).toBe(true);
    expect(first.map((a) => a.event.Image)).toEqual(expect.arrayContaining(['C:\\Tools\\evil.exe', 'C:\\Tools\\EVIL.EXE']));

    // A worker restart in the middle of the schedule raises nothing twice.
    await svc.restartWorker();
    expect((await ingest([event('evil.exe')])).status).toBe(200);
    await until('4 alerts', async () => ((await alertsOf(deploymentId)).length >= 4 ? true : undefined));
    await new Promise((r) => setTimeout(r, 2500)); // more runs happen; nothing new to raise
    const all = await alertsOf(deploymentId);
    expect(all).toHaveLength(4);
    expect(new Set(all.map((a) => a.event_id)).size).toBe(4);

    const runs = await svc.database.db.select().from(detectionRuns).where(eq(detectionRuns.deploymentId, deploymentId));
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.reduce((n, r) => n + r.alertsRaised, 0)).toBe(4);
    expect(runs.every((r) => r.error === null)).toBe(true);
  });

  it('suppresses and counts alerts beyond the noise budget', async () => {
    const deploymentId = await deploy('d0000000-0000-4000-8000-000000000002', 'noisy.exe', 2);
    expect((await ingest(Array.from({ length: 5 }, () => event('noisy.exe')))).body.accepted).toBe(5);
    const items = await until('5 alerts', async () => {
      const list = await alertsOf(deploymentId);
      return list.length >= 5 ? list : undefined;
    });
    expect(items.filter((a) => a.status === 'open')).toHaveLength(2);
    expect(items.filter((a) => a.status === 'suppressed')).toHaveLength(3);
    const runs = await svc.database.db.select().from(detectionRuns).where(eq(detectionRuns.deploymentId, deploymentId));
    expect(runs.reduce((n, r) => n + r.alertsSuppressed, 0)).toBe(3);
  });

  it('carries the detection cursor over to a new version: no event is alerted twice or missed', async () => {
    const id = 'd0000000-0000-4000-8000-000000000003';
    const v1 = await deploy(id, 'tool.exe');
    expect((await ingest([event('tool.exe')])).status).toBe(200);
    await until('v1 alert', async () => ((await alertsOf(v1)).length === 1 ? true : undefined));
    const v2 = await deploy(id, 'tool.exe', undefined, 2);
    expect((await svc.request('GET', `/api/v1/deployments/${v2}`)).body.version).toBe(2);
    expect((await svc.request('GET', `/api/v1/deployments/${v1}`)).body.status).toBe('superseded');
    expect((await ingest([event('tool.exe')])).status).toBe(200);
    await until('v2 alert', async () => ((await alertsOf(v2)).length === 1 ? true : undefined));
    expect(await alertsOf(v1)).toHaveLength(1);
  });

  it('triages an alert: assignee, team, disposition closes it', async () => {
    const [alert] = (await svc.request('GET', '/api/v1/alerts?status=open&limit=1')).body.items;
    const res = await svc.request('PATCH', `/api/v1/alerts/${alert.id}`, { body: { assignee: 'ana', team: 'soc-tier1', disposition: 'false_positive' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ assignee: 'ana', team: 'soc-tier1', disposition: 'false_positive', status: 'closed' });
    expect(res.body.closed_at).toEqual(expect.any(String));
    expect((await svc.request('GET', '/api/v1/alerts?disposition=false_positive')).body.items.map((a: any) => a.id)).toEqual([alert.id]);
    expect((await svc.request('PATCH', `/api/v1/alerts/${alert.id}`, { body: { disposition: 'maybe' } })).status).toBe(400);
    expect((await svc.request('PATCH', '/api/v1/alerts/00000000-0000-4000-8000-000000000000', { body: { team: 'x' } })).status).toBe(404);
  });
});
