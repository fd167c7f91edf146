import { startTestService, type TestService } from '../support/harness';

describe('event retention per tenant', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.close());

  it('deletes each tenant’s events older than its retention, daily, and nothing newer', async () => {
    const patched = await svc.request('PATCH', '/api/v1/settings/tenants/default', { body: { retention_days: 3 } });
    expect(patched.status).toBe(200);
    expect(patched.body.retention_days).toBe(3);
    const day = 86_400_000;
    const at = (daysAgo: number) => new Date(Date.now() - daysAgo * day).toISOString();
    const lines = [at(10), at(5), at(2), at(0.5)].map((t, i) => JSON.stringify({ '@timestamp': t, Image: `p${i}.exe` }));
    expect((await svc.request('POST', '/api/v1/events', { body: lines.join('\n'), headers: { 'content-type': 'application/x-ndjson' } })).body.accepted).toBe(4);

    // The daily schedule runs this workflow; run it now.
    const result = await svc.client.workflow.execute('ApplyRetention', { taskQueue: svc.taskQueue, workflowId: `retention/test-${Date.now()}`, args: [] });
    expect(result).toEqual(expect.arrayContaining([expect.objectContaining({ tenant_id: 'default', retention_days: 3, deleted: 2 })]));
    const stats = await svc.siem.localStore.tenantStats('default');
    expect(stats.events).toBe(2);
    expect(stats.firstEventTime!.getTime()).toBeGreaterThan(Date.now() - 3 * day);
    expect((await svc.client.schedule.getHandle('retention/daily').describe()).action).toMatchObject({ workflowType: 'ApplyRetention' });
  });

  it('refuses a retention outside 1..3650 days', async () => {
    expect((await svc.request('PATCH', '/api/v1/settings/tenants/default', { body: { retention_days: 0 } })).status).toBe(400);
  });
});
