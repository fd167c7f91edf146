import { openDatabase, type Database } from '../../db/client';
import { createTenant, ensureBootstrap } from '../../domain/tenants/tenant-service';
import { queryRows, seedTenant } from '../../bench/health-seed';
import { seedEvents } from '../../bench/health-events';
import { openSiemAdapters } from '../../siem/adapters';

/** bench/health.ts's bulk seeding, at a toy scale: the counts asked for, and records that hang together. */
describe('bench/health-seed', () => {
  let database: Database;
  const rows = <T>(text: string) => queryRows<T>(database.db, text);
  const count = async (text: string) => Number((await rows<{ n: string | number }>(text))[0]!.n);

  beforeAll(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: undefined });
    await database.migrate();
    await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined });
    await createTenant(database.db, { id: 'other', name: 'Other', tier: 'enterprise', environments: ['dev', 'prod'] });
    await seedTenant(database.db, 'default', { rules: 40, alerts: 5_000, runs: 300, replays: 3 });
    await seedTenant(database.db, 'other', { rules: 5, alerts: 100, runs: 10, replays: 1 });
  }, 60_000);
  afterAll(() => database.close());

  it('makes the requested rules, versions, alerts, runs and replays per tenant', async () => {
    // Rule i has 1 + [i % 4 = 0] + [i % 10 = 0] versions.
    const versions = (n: number) => Array.from({ length: n }, (_, k) => k + 1).reduce((s, i) => s + 1 + (i % 4 === 0 ? 1 : 0) + (i % 10 === 0 ? 1 : 0), 0);
    expect(versions(40)).toBe(40 + 10 + 4);
    for (const [tenant, scale] of [
      ['default', { rules: 40, versions: versions(40), alerts: 5_000, runs: 300, replays: 3 }],
      ['other', { rules: 5, versions: versions(5), alerts: 100, runs: 10, replays: 1 }],
    ] as const) {
      expect(await count(`select count(*) n from rules where tenant_id = '${tenant}'`)).toBe(scale.rules);
      expect(await count(`select count(*) n from rule_versions where tenant_id = '${tenant}'`)).toBe(scale.versions);
      expect(await count(`select count(*) n from alerts where tenant_id = '${tenant}'`)).toBe(scale.alerts);
      expect(await count(`select count(*) n from detection_runs where tenant_id = '${tenant}'`)).toBe(scale.runs);
      expect(await count(`select count(*) n from replays where tenant_id = '${tenant}'`)).toBe(scale.replays);
    }
  });

  it('deploys every rule but every 97th to local, every 3rd to splunk-prod, every 7th to elastic-staging, with rollbacks restoring the version before', async () => {
    // 40 rules, none a multiple of 97: 40 on local, 13 on splunk-prod, 5 on elastic-staging; one
    // deployment per version, plus a restoring one for each rolled-back rule (i = 20, 40) per target.
    const perTarget = await rows<{ name: string; live: string | number }>(
      `select t.name, count(*) filter (where d.status in ('active', 'demoted')) live from deployments d join targets t on t.id = d.target_id where d.tenant_id = 'default' group by t.name`,
    );
    expect(Object.fromEntries(perTarget.map((r) => [r.name, Number(r.live)]))).toEqual({ local: 40, 'splunk-prod': 13, 'elastic-staging': 5 });
    // Rolled back: i = 20 (local, elastic? no: 20 % 7 ≠ 0; splunk? 20 % 3 ≠ 0) and i = 40 (local only): two.
    expect(await count(`select count(*) n from deployments where tenant_id = 'default' and status = 'rolled_back'`)).toBe(2);
    const restored = await rows<{ version: number; latest: number }>(
      `select d.version, r.latest_version latest from deployments d join rules r using (tenant_id, rule_id) where d.tenant_id = 'default' and d.status = 'active' and d.version < r.latest_version`,
    );
    expect(restored).toHaveLength(2);
    for (const r of restored) expect(r.version).toBe(r.latest - 1);
    // Every rule version tags an ATT&CK technique and its tactic.
    expect(await count(`select count(*) n from rule_versions where not exists (select 1 from jsonb_array_elements_text(tags) t where t ~ '^attack\\.t[0-9]{4}')`)).toBe(0);
  });

  it('keeps alerts consistent: their deployment, tenant, times and dispositions', async () => {
    expect(
      await count(`select count(*) n from alerts a join deployments d on d.id = a.deployment_id
        where d.tenant_id <> a.tenant_id or d.rule_id <> a.rule_id or d.version <> a.version or d.target_id <> a.target_id`),
    ).toBe(0);
    expect(await count(`select count(*) n from alerts where event_time >= created_at or created_at > now() or created_at < now() - interval '91 days'`)).toBe(0);
    expect(await count(`select count(*) n from alerts where (status = 'closed') <> (closed_at is not null)`)).toBe(0);
    expect(await count(`select count(*) n from alerts where closed_at < acknowledged_at or acknowledged_at < created_at`)).toBe(0);
    expect(await count(`select count(*) n from alerts where disposition is not null and status not in ('closed', 'acknowledged')`)).toBe(0);
    expect(await count(`select count(*) n from alerts a join deployments d on d.id = a.deployment_id where a.status = 'suppressed' and d.noise_budget is null`)).toBe(0);
    const statuses = await rows<{ status: string }>(`select distinct status from alerts where tenant_id = 'default'`);
    expect(statuses.map((s) => s.status).sort()).toEqual(['acknowledged', 'closed', 'open', 'suppressed']);
    expect(await count(`select count(*) n from detection_runs where error is not null`)).toBeGreaterThan(0);
  });
});

describe('bench/health-events', () => {
  it("writes each tenant's events to its target, over the days asked, with promoted columns equal to the JSON", async () => {
    const siem = await openSiemAdapters({ dataDir: undefined });
    try {
      const now = new Date('2026-03-10T12:00:00Z');
      const total = await seedEvents(
        siem.localStore,
        [
          { tenantId: 'default', targetId: 'target-a', events: 2_000 },
          { tenantId: 'other', targetId: 'target-b', events: 300 },
        ],
        { days: 7, now },
      );
      expect(total).toBe(2_300);
      const read = (text: string) => siem.localStore.read(async (con) => (await con.runAndReadAll(text)).getRowObjectsJson());
      const perTenant = await read(
        `select tenant_id, target_id, count(*) n, min(event_time) oldest, max(event_time) newest, count(distinct seq) seqs from events group by all order by all`,
      );
      // Evenly spread from 7 days before a minute ago (11:59) up to one step before it: 7 days / 2,000 =
      // 302.4 s, so 11:53:57.6; 7 days / 300 = 2,016 s, so 11:25:24.
      expect(perTenant.map(({ newest, ...r }) => r)).toEqual([
        { tenant_id: 'default', target_id: 'target-a', n: '2000', oldest: '2026-03-03 11:59:00', seqs: '2000' },
        { tenant_id: 'other', target_id: 'target-b', n: '300', oldest: '2026-03-03 11:59:00', seqs: '300' },
      ]);
      expect(perTenant.map((r) => r.newest)).toEqual(['2026-03-10 11:53:57.6', '2026-03-10 11:25:24']);
      const fields = ['Image', 'CommandLine', 'User', 'Computer', 'TargetObject', 'DestinationIp', 'DestinationPort', 'EventID', 'TargetUserName', 'LogonType'];
      const mismatched = await read(
        `select count(*) n from events where not json_valid(raw) or ${fields.map((f) => `"${f}" is distinct from json_extract_string(raw, '$.${f}')`).join(' or ')}`,
      );
      expect(mismatched).toEqual([{ n: '0' }]);
      // No cloudtrail events: rules over it have no data. Some Windows process creations lack a command line.
      expect(await read(`select count(*) n from events where ls_product = 'aws'`)).toEqual([{ n: '0' }]);
      const [pc] = await read(`select count(*) n, count("CommandLine") cmd from events where ls_product = 'windows' and ls_category = 'process_creation'`);
      expect(Number(pc!.cmd)).toBeLessThan(Number(pc!.n));
      expect(Number(pc!.cmd)).toBeGreaterThan(Number(pc!.n) * 0.8);
      expect(await read(`select sum(events) n from event_hours`)).toEqual([{ n: '2300' }]);
    } finally {
      await siem.close();
    }
  });
});
