import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { seedTenant, queryRows } from '../../bench/health-seed';
import { alertsRaisedSince, workloadAndResolutionsSince } from '../../domain/health/dashboard-records';
import { createTenant, ensureBootstrap } from '../../domain/tenants/tenant-service';
import type { Actor } from '../../domain/tenants/actor';
import { createTestDatabase, readerActor } from '../support/harness';

/**
 * The alert rollups (alert_raised_rollup, alert_closed_rollup, alert_backlog) against the raw
 * aggregates they stand for: alerts are inserted, updated and deleted at random (in bulk and one by
 * one, in and out of transactions, moved across UTC days, reopened, reassigned), and after each
 * round every figure the dashboard reads through the rollups must equal the same aggregate computed
 * from the alerts alone, for windows that start mid-day, at midnight, under a day and beyond all data,
 * for a token of every environment and one limited to prod, and for each tenant.
 */

const DAY = 86_400_000;

/** A deterministic pseudo-random sequence (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The raw aggregates, one query each over the alerts, as the dashboard computed them before the rollups. */
async function rawFigures(db: Database['db'], actor: Actor, from: Date) {
  const t = `'${actor.tenantId}'`;
  const env = actor.environments === null ? 'true' : `tg.environment in (${actor.environments.map((e) => `'${e}'`).join(', ')})`;
  const f = `'${from.toISOString()}'::timestamptz`;
  const raised = await queryRows<Record<string, unknown>>(
    db,
    `select a.rule_id, a.target_id, count(*)::int as alerts, (count(*) filter (where a.status <> 'suppressed'))::int as triaged,
       (count(*) filter (where a.disposition = 'true_positive'))::int as tp, (count(*) filter (where a.disposition = 'false_positive'))::int as fp,
       (count(*) filter (where a.disposition = 'benign'))::int as benign, (count(*) filter (where a.disposition = 'duplicate'))::int as duplicate
     from alerts a join targets tg on tg.id = a.target_id where a.tenant_id = ${t} and a.created_at >= ${f} and ${env} group by 1, 2`,
  );
  const workload = await queryRows<Record<string, unknown>>(
    db,
    `select a.team, a.assignee, (count(*) filter (where a.status in ('open', 'acknowledged')))::int as open, (count(*) filter (where a.status = 'acknowledged'))::int as ack,
       (count(*) filter (where a.status = 'closed' and a.closed_at >= ${f}))::int as handled
     from alerts a join targets tg on tg.id = a.target_id
     where a.tenant_id = ${t} and (a.status in ('open', 'acknowledged') or (a.status = 'closed' and a.closed_at >= ${f})) and ${env} group by 1, 2`,
  );
  const resolutions = await queryRows<Record<string, unknown>>(
    db,
    `select a.team, rv.level, count(*)::int as alerts,
       coalesce(sum(extract(epoch from (date_trunc('milliseconds', a.closed_at) - date_trunc('milliseconds', a.created_at)))), 0)::float8 as seconds
     from alerts a join targets tg on tg.id = a.target_id left join rule_versions rv on rv.tenant_id = a.tenant_id and rv.rule_id = a.rule_id and rv.version = a.version
     where a.tenant_id = ${t} and a.status = 'closed' and a.closed_at >= ${f} and ${env} group by 1, 2`,
  );
  const key = (...parts: unknown[]) => JSON.stringify(parts);
  return {
    raised: new Map(
      raised.map((r) => [
        key(r.rule_id, r.target_id),
        { alerts: r.alerts, triaged: r.triaged, truePositive: r.tp, falsePositive: r.fp, benign: r.benign, duplicate: r.duplicate },
      ]),
    ),
    workload: new Map(workload.map((r) => [key(r.team, r.assignee), { open: r.open, acknowledged: r.ack, handled: r.handled }])),
    resolutions: new Map(resolutions.map((r) => [key(r.team, r.level), { alerts: r.alerts, seconds: Number(r.seconds) }])),
  };
}

async function rolledUpFigures(db: Database['db'], actor: Actor, from: Date) {
  const key = (...parts: unknown[]) => JSON.stringify(parts);
  const raised = await alertsRaisedSince(db, actor, from);
  const { workload, resolutions } = await workloadAndResolutionsSince(db, actor, from);
  return {
    raised: new Map(raised.map(({ ruleId, targetId, ...figures }) => [key(ruleId, targetId), figures])),
    workload: new Map(workload.map(({ team, assignee, ...figures }) => [key(team, assignee), figures])),
    resolutions: new Map(resolutions.map(({ team, level, ...figures }) => [key(team, level), figures])),
  };
}

describe('alert rollups', () => {
  let database: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ database, drop } = await createTestDatabase());
    await database.migrate();
    await ensureBootstrap(database.db, { tier: 'unlimited', token: undefined });
    await createTenant(database.db, { id: 'other', name: 'Other', tier: 'enterprise', environments: ['dev', 'staging', 'prod'] });
    await seedTenant(database.db, 'default', { rules: 40, alerts: 3_000, runs: 10, replays: 1 });
    await seedTenant(database.db, 'other', { rules: 10, alerts: 500, runs: 10, replays: 1 });
  }, 60_000);
  afterAll(async () => drop?.());

  const exec = (text: string) => database.db.execute(sql.raw(text));

  async function expectSameFigures(now: Date) {
    const midnight = new Date(Math.floor(now.getTime() / DAY) * DAY);
    const froms = [
      new Date(now.getTime() - 30 * DAY), // mid-day: a partial first day
      new Date(midnight.getTime() - 7 * DAY), // at midnight: whole days only
      new Date(now.getTime() - 6 * 3_600_000), // under a day
      new Date(now.getTime() - 400 * DAY), // before every alert
      new Date(now.getTime() + DAY), // after every alert
      // Windows crossing 8- and 64-day boundaries at every alignment the data allows.
      ...[3.5, 9.25, 17.7, 40.1, 63.9, 71.3, 129.6].map((days) => new Date(now.getTime() - days * DAY)),
      new Date(midnight.getTime() - 64 * DAY),
    ];
    let compared = 0;
    for (const actor of [readerActor('default', null), readerActor('default', ['prod']), readerActor('other', null)]) {
      for (const from of froms) {
        const raw = await rawFigures(database.db, actor, from);
        const rolled = await rolledUpFigures(database.db, actor, from);
        expect({ actor: actor.tenantId, environments: actor.environments, from, ...rolled }).toEqual({
          actor: actor.tenantId,
          environments: actor.environments,
          from,
          ...raw,
        });
        compared += raw.raised.size + raw.workload.size + raw.resolutions.size;
      }
    }
    // The comparisons were of figures, not of empty maps.
    expect(compared).toBeGreaterThan(100);
  }

  test('after the bulk seed, every figure equals the raw aggregate', async () => {
    await expectSameFigures(new Date());
  });

  test('random inserts, updates and deletes keep every figure equal to the raw aggregate', async () => {
    const rnd = random(20261126);
    const pick = (n: number) => `(select id from alerts order by md5(id::text || '${rnd()}') limit ${n})`;
    const interval = () => `${Math.floor(rnd() * 96 * 3600)} seconds`;
    const teams = ['blue', 'red', null];
    const text = (v: string | null) => (v === null ? 'null' : `'${v}'`);
    const mutations: Array<() => string> = [
      // Close, with a verdict, a team and an assignee.
      () =>
        `update alerts set status = 'closed', closed_at = least(now(), created_at + interval '${interval()}'), updated_at = now(),
           disposition = (array['true_positive', 'false_positive', 'benign', 'duplicate', null])[1 + floor(random() * 5)::int],
           team = ${text(teams[Math.floor(rnd() * 3)]!)}, assignee = 'a' || floor(random() * 4)::int where id in ${pick(1 + Math.floor(rnd() * 80))}`,
      // Reopen: the close is forgotten.
      () => `update alerts set status = 'open', closed_at = null, disposition = null where id in ${pick(1 + Math.floor(rnd() * 60))}`,
      () => `update alerts set status = 'acknowledged', acknowledged_at = now(), assignee = null where id in ${pick(1 + Math.floor(rnd() * 40))}`,
      () => `update alerts set status = 'suppressed', team = null, assignee = null where id in ${pick(1 + Math.floor(rnd() * 20))}`,
      // Nothing a rollup counts changes.
      () => `update alerts set updated_at = now() where id in ${pick(50)}`,
      // Moved across UTC days (never done by the service, but the rollups must follow).
      () => `update alerts set created_at = created_at - interval '${interval()}' where id in ${pick(30)}`,
      // A closed alert closed again later: its resolution time and day change.
      () => `update alerts set closed_at = closed_at + interval '${Math.floor(rnd() * 20 * 3600)} seconds' where status = 'closed' and id in ${pick(200)}`,
      () => `delete from alerts where id in ${pick(1 + Math.floor(rnd() * 50))}`,
      // New alerts, copies of others at new times (a bulk insert and a single one).
      () =>
        `insert into alerts (tenant_id, deployment_id, rule_id, version, target_id, event_seq, event_id, event_time, event, status, disposition, assignee, team,
           created_at, updated_at, acknowledged_at, closed_at)
         select tenant_id, deployment_id, rule_id, version, target_id, event_seq + ${1 + Math.floor(rnd() * 1e9)}, event_id, event_time, event, status, disposition,
           assignee, team, now() - interval '${interval()}', now(), acknowledged_at, case when status = 'closed' then now() end
         from alerts where id in ${pick(1 + Math.floor(rnd() * 100))}`,
      () => `update alerts set team = 'green', assignee = null, disposition = 'benign', status = 'closed', closed_at = now() where id in ${pick(1)}`,
    ];
    const now = new Date();
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 8; i++) await exec(mutations[Math.floor(rnd() * mutations.length)]!());
      // Several changes in one transaction; then one rolled back, which must leave no trace.
      await database.db.transaction(async (tx) => {
        await tx.execute(sql.raw(mutations[0]!()));
        await tx.execute(sql.raw(mutations[7]!()));
        await tx.execute(sql.raw(mutations[8]!()));
      });
      await database.db
        .transaction(async (tx) => {
          await tx.execute(sql.raw(mutations[1]!()));
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      await expectSameFigures(now);
    }
  }, 120_000);
});
