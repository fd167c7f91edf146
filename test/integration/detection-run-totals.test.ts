import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { seedTenant, queryRows } from '../../bench/health-seed';
import { lifetimeVolumes } from '../../domain/health/noise-saved';
import { createTenant, ensureBootstrap } from '../../domain/tenants/tenant-service';
import { createTestDatabase } from '../support/harness';

/**
 * detection_run_totals against the raw sums of `detection_runs` it stands for: runs are inserted
 * (in bulk and one by one), updated (moved to another deployment, switched to shadow, failed) and
 * deleted at random, in and out of transactions, some rolled back; after each round every
 * deployment's totals must equal the sums over its runs, and a deployment left with no run must
 * hold only zeros. The service only inserts runs; the others keep the trigger honest.
 */

/** A deterministic pseudo-random sequence (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Totals = { tenant_id: string; runs: number; failed_runs: number; alerts_raised: number; alerts_suppressed: number; shadow_matches: number };

describe('detection run totals', () => {
  let database: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ database, drop } = await createTestDatabase());
    await database.migrate();
    await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined });
    await createTenant(database.db, { id: 'other', name: 'Other', tier: 'enterprise', environments: ['dev', 'staging', 'prod'] });
    await seedTenant(database.db, 'default', { rules: 20, alerts: 100, runs: 2_000, replays: 1 });
    await seedTenant(database.db, 'other', { rules: 5, alerts: 50, runs: 300, replays: 1 });
  }, 60_000);
  afterAll(async () => drop?.());

  const exec = (text: string) => database.db.execute(sql.raw(text));

  async function expectTotalsEqualRuns() {
    const raw = await queryRows<Totals & { deployment_id: string }>(
      database.db,
      `select deployment_id, min(tenant_id) as tenant_id, count(*)::int as runs, (count(*) filter (where error is not null))::int as failed_runs,
         sum(alerts_raised)::float8 as alerts_raised, sum(alerts_suppressed)::float8 as alerts_suppressed,
         coalesce(sum(matches) filter (where mode = 'shadow'), 0)::float8 as shadow_matches
       from detection_runs group by 1`,
    );
    const kept = await queryRows<Totals & { deployment_id: string }>(
      database.db,
      `select deployment_id, tenant_id, runs, failed_runs, alerts_raised::float8 as alerts_raised, alerts_suppressed::float8 as alerts_suppressed,
         shadow_matches::float8 as shadow_matches from detection_run_totals`,
    );
    const byId = (rows: Array<Totals & { deployment_id: string }>) => new Map(rows.map(({ deployment_id, ...t }) => [deployment_id, t]));
    const emptied = kept.filter((k) => k.runs === 0);
    for (const e of emptied) expect(e).toEqual({ ...e, failed_runs: 0, alerts_raised: 0, alerts_suppressed: 0, shadow_matches: 0 });
    expect(byId(kept.filter((k) => k.runs !== 0))).toEqual(byId(raw));
    // The comparison was of figures, not of empty maps: both tenants, shadow runs and failed runs among them.
    expect(new Set(raw.map((r) => r.tenant_id))).toEqual(new Set(['default', 'other']));
    expect(raw.length).toBeGreaterThan(10);
    return raw;
  }

  test('the runs recorded before the table existed are counted by the migration, and each seeded run by the trigger', async () => {
    const raw = await expectTotalsEqualRuns();
    expect(raw.some((r) => r.failed_runs > 0)).toBe(true);
  });

  test('random inserts, updates and deletes keep every total equal to the sums over the runs', async () => {
    const rnd = random(20261128);
    const pick = (n: number) => `(select id from detection_runs order by md5(id::text || '${rnd()}') limit ${n})`;
    const mutations: Array<() => string> = [
      // Copies of runs at new times: a bulk insert and a single one.
      () =>
        `insert into detection_runs (tenant_id, deployment_id, rule_id, started_at, duration_ms, events_scanned, matches, alerts_raised, alerts_suppressed, mode, cursor_from, cursor_to, error)
         select tenant_id, deployment_id, rule_id, now(), duration_ms, events_scanned, matches, alerts_raised, alerts_suppressed, mode, cursor_from, cursor_to, error
         from detection_runs where id in ${pick(1 + Math.floor(rnd() * 200))}`,
      () =>
        `insert into detection_runs (tenant_id, deployment_id, rule_id, started_at, duration_ms, events_scanned, matches, alerts_raised, alerts_suppressed, mode, cursor_from, cursor_to, error)
         select tenant_id, deployment_id, rule_id, now(), 10, 100, 7, 0, 0, 'shadow', 0, 100, null from detection_runs where id in ${pick(1)}`,
      // Demoted: its matches now count as shadow matches.
      () => `update detection_runs set mode = 'shadow', alerts_raised = 0, alerts_suppressed = 0 where id in ${pick(1 + Math.floor(rnd() * 40))}`,
      () => `update detection_runs set error = 'query failed', matches = 0, alerts_raised = 0, alerts_suppressed = 0 where id in ${pick(1 + Math.floor(rnd() * 20))}`,
      // Moved to another deployment of the same tenant (never done by the service, but the totals must follow).
      () =>
        `update detection_runs r set deployment_id = (select d.id from deployments d where d.tenant_id = r.tenant_id order by md5(d.id::text || '${rnd()}') limit 1)
         where r.id in ${pick(1 + Math.floor(rnd() * 30))}`,
      // Nothing a total counts changes.
      () => `update detection_runs set duration_ms = duration_ms + 1 where id in ${pick(50)}`,
      () => `delete from detection_runs where id in ${pick(1 + Math.floor(rnd() * 80))}`,
      // Every run of one deployment: its totals fall to zero.
      () => `delete from detection_runs where deployment_id = (select deployment_id from detection_runs where id in ${pick(1)})`,
    ];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 8; i++) await exec(mutations[Math.floor(rnd() * mutations.length)]!());
      await database.db.transaction(async (tx) => {
        await tx.execute(sql.raw(mutations[0]!()));
        await tx.execute(sql.raw(mutations[2]!()));
        await tx.execute(sql.raw(mutations[6]!()));
      });
      await database.db
        .transaction(async (tx) => {
          await tx.execute(sql.raw(mutations[0]!()));
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      await expectTotalsEqualRuns();
    }
    const raw = await expectTotalsEqualRuns();
    expect(raw.some((r) => r.shadow_matches > 0)).toBe(true);
  }, 120_000);

  test('the lifetime volumes ROI reads are the totals of the tenant asked, never another tenant’s', async () => {
    const rows = await queryRows<{ deployment_id: string; tenant_id: string; raised: number; suppressed: number; shadow: number }>(
      database.db,
      `select deployment_id, min(tenant_id) as tenant_id, sum(alerts_raised)::float8 as raised, sum(alerts_suppressed)::float8 as suppressed,
         coalesce(sum(matches) filter (where mode = 'shadow'), 0)::float8 as shadow from detection_runs group by 1`,
    );
    const mine = rows.filter((r) => r.tenant_id === 'default');
    const theirs = rows.filter((r) => r.tenant_id === 'other');
    const volumes = await lifetimeVolumes(
      database.db,
      'default',
      [...mine, ...theirs].map((r) => r.deployment_id),
    );
    expect(volumes).toEqual(new Map(mine.map((r) => [r.deployment_id, { raised: r.raised, suppressed: r.suppressed, shadowMatches: r.shadow }])));
  });
});
