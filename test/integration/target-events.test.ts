import { eq } from 'drizzle-orm';
import { detectionRuns } from '../../db/schema';
import { createApiKey, imageRule, startTestService, type TestService, until } from '../support/harness';

const RULE_ID = '7a19e700-0000-4000-8000-000000000001';
const COST_MODEL = { currency: 'USD', price_per_gb_scanned: 0, triage_minutes_per_alert: 5, cost_per_analyst_hour: 60 };

let n = 0;
/** A process event a minute in the past (inside any replay window ending now); `tag` names where it was sent. */
const event = (image: string, tag: string) =>
  JSON.stringify({ '@timestamp': new Date(Date.now() - 60_000).toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} ${tag} ${++n}`, Computer: tag });

/**
 * Events belong to the target they were sent to (issue 17, finding 4): a `dev`-only token's events
 * reach neither a `prod` deployment's detection nor a replay or shadow on the `prod` target.
 */
describe('events are stored per target', () => {
  let svc: TestService;
  let devToken: string;

  beforeAll(async () => {
    svc = await startTestService();
    for (const [name, environment] of [
      ['dev-siem', 'dev'],
      ['prod-siem', 'prod'],
    ] as const) {
      const res = await svc.request('POST', '/api/v1/settings/targets', {
        body: { name, kind: 'local', environment, connection: {}, cost_model: COST_MODEL, detection_interval: 'PT1S' },
      });
      expect(res.status).toBe(201);
    }
    devToken = (await createApiKey(svc, svc.token, { name: 'dev-shipper', permissions: ['events:write'], environments: ['dev'] })).token;
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(RULE_ID, 'leaky.exe') } })).status).toBe(201);
  });
  afterAll(() => svc.close());

  const ingest = async (target: string, lines: string[], token?: string) => {
    const res = await svc.request('POST', `/api/v1/events?target=${target}&product=windows&category=process_creation`, {
      body: lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
      ...(token ? { token } : {}),
    });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(lines.length);
  };

  async function deploy(target: string): Promise<string> {
    const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE_ID, target, approval_required: false } });
    expect(res.status).toBe(202);
    expect(await svc.client.workflow.getHandle(res.body.workflow_id).result()).toMatchObject({ status: 'active' });
    return res.body.id as string;
  }
  const alertsOf = async (deploymentId: string) => (await svc.request('GET', `/api/v1/alerts?deployment_id=${deploymentId}&limit=500`)).body.items as any[];

  it("raises alerts on a target only for that target's own events", async () => {
    const prod = await deploy('prod-siem');
    const dev = await deploy('dev-siem');
    // The dev-only token sends matching events to dev; prod gets two of its own.
    await ingest('dev-siem', [event('leaky.exe', 'dev'), event('leaky.exe', 'dev'), event('leaky.exe', 'dev'), event('other.exe', 'dev')], devToken);
    await ingest('prod-siem', [event('leaky.exe', 'prod'), event('other.exe', 'prod'), event('leaky.exe', 'prod')]);

    await until('the dev and prod alerts', async () => ((await alertsOf(dev)).length >= 3 && (await alertsOf(prod)).length >= 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 2500)); // more detection runs: nothing else to raise
    const prodAlerts = await alertsOf(prod);
    expect(prodAlerts).toHaveLength(2);
    expect(prodAlerts.every((a) => a.event.Computer === 'prod' && a.target === 'prod-siem')).toBe(true);
    const devAlerts = await alertsOf(dev);
    expect(devAlerts).toHaveLength(3);
    expect(devAlerts.every((a) => a.event.Computer === 'dev' && a.target === 'dev-siem')).toBe(true);
    // What the prod deployment evaluated at all: prod's three events, none of dev's four.
    const prodRuns = await svc.database.db.select().from(detectionRuns).where(eq(detectionRuns.deploymentId, prod));
    expect(prodRuns.reduce((s, r) => s + r.eventsScanned, 0)).toBe(3);
  });

  it("replays a target's own events only", async () => {
    const replay = async (target: string) => {
      const res = await svc.request('POST', '/api/v1/rules/replay', { body: { rule_id: RULE_ID, target, lookback: 'PT1H' } });
      expect(res.status).toBe(202);
      const done = (await svc.request('GET', `/api/v1/replays/${res.body.id}?wait=30`)).body;
      expect(done.status).toBe('completed');
      return done.result;
    };
    expect(await replay('dev-siem')).toMatchObject({ events_scanned: 4, alerts: { total: 3 } });
    expect(await replay('prod-siem')).toMatchObject({ events_scanned: 3, alerts: { total: 2 } });
    // The built-in target got nothing.
    expect(await replay('local')).toMatchObject({ events_scanned: 0, alerts: { total: 0 } });
  });

  it("shadows a target's own new events only", async () => {
    const shadow = async (target: string) => {
      const res = await svc.request('POST', '/api/v1/rules/shadow', { body: { rule_id: RULE_ID, target, duration: 'PT5M', interval: 'PT1S' } });
      expect(res.status).toBe(202);
      await until(`the first evaluation on ${target}`, async () =>
        (await svc.request('GET', `/api/v1/shadows/${res.body.id}`)).body.progress?.evaluations >= 1 ? true : undefined,
      );
      return res.body.id as string;
    };
    const onDev = await shadow('dev-siem');
    const onProd = await shadow('prod-siem');
    await ingest('dev-siem', [event('leaky.exe', 'dev'), event('other.exe', 'dev')], devToken);
    await ingest('prod-siem', [event('leaky.exe', 'prod'), event('leaky.exe', 'prod'), event('leaky.exe', 'prod')]);
    const finish = async (id: string, scanned: number) => {
      await until(`shadow ${id} to see its events`, async () =>
        (await svc.request('GET', `/api/v1/shadows/${id}`)).body.progress?.events_scanned >= scanned ? true : undefined,
      );
      expect((await svc.request('POST', `/api/v1/shadows/${id}/stop`)).status).toBe(202);
      const done = (await svc.request('GET', `/api/v1/shadows/${id}?wait=30`)).body;
      expect(done.status).toBe('completed');
      return done.result;
    };
    expect(await finish(onDev, 2)).toMatchObject({ events_scanned: 2, alerts: { projected_total: 1 } });
    expect(await finish(onProd, 3)).toMatchObject({ events_scanned: 3, alerts: { projected_total: 3 } });
  });
});
