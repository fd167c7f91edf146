import crypto from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { admitRun } from '../../domain/runs/run-slots';
import { replays, shadowRuns, targets } from '../../db/schema';
import { createTenant, sigmaRule, startTestService, type TestService } from '../support/harness';

/**
 * The free tier runs 2 replays or shadow evaluations at once. These tests hold its slots with long
 * shadow evaluations and check that admission is exact under concurrent requests, and that a run
 * which ended without recording (terminated in Temporal, never started) frees its slot.
 */
const RULE_ID = '5107b0de-0000-4000-8000-000000000001';
const ruleText = sigmaRule(RULE_ID, 'Slot holder');

describe('concurrent-run slots (POST /rules/shadow, /rules/replay)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.close());

  const shadow = (token: string) => svc.request('POST', '/api/v1/rules/shadow', { token, body: { rule: ruleText, target: 'local', duration: 'PT10M', interval: 'PT1M' } });
  const stopAll = async (token: string, ids: string[]) => {
    for (const id of ids) {
      const stop = await svc.request('POST', `/api/v1/shadows/${id}/stop`, { token });
      expect([200, 202]).toContain(stop.status);
      expect((await svc.request('GET', `/api/v1/shadows/${id}?wait=30`, { token })).body.status).not.toBe('running');
    }
  };

  it('admits exactly as many runs as the tier allows when requests arrive together', async () => {
    const token = await createTenant(svc, 'slots-race', 'free');
    const answers = await Promise.all(Array.from({ length: 6 }, () => shadow(token)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([202, 202, 403, 403, 403, 403]);
    for (const a of answers.filter((x) => x.status === 403)) expect(a.body.type).toBe('https://detflow.dev/problems/resource-limit');
    const rows = await svc.database.db.select().from(shadowRuns).where(eq(shadowRuns.tenantId, 'slots-race'));
    expect(rows.map((r) => r.status)).toEqual(['running', 'running']);
    await stopAll(
      token,
      answers.filter((a) => a.status === 202).map((a) => a.body.id as string),
    );
  });

  it('admits no more than the limit however long each admission takes (the tenant row is locked)', async () => {
    await createTenant(svc, 'slots-slow', 'free');
    const [local] = await svc.database.db
      .select()
      .from(targets)
      .where(and(eq(targets.tenantId, 'slots-slow'), eq(targets.name, 'local')));
    const auth = { tokenId: crypto.randomUUID(), tenantId: 'slots-slow', tier: 'free' as const, permissions: new Set<never>(), environments: null };
    // Each admission dawdles between counting and inserting, so without the lock all ten would count 0.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        admitRun(svc.database.db, svc.client, auth, async (tx) => {
          await tx.execute(sql`select pg_sleep(0.05)`);
          const id = crypto.randomUUID();
          await tx.insert(shadowRuns).values({
            id,
            tenantId: 'slots-slow',
            ruleId: RULE_ID,
            version: null,
            ruleContent: ruleText,
            targetId: local!.id,
            duration: 'PT1M',
            interval: 'PT1M',
            status: 'running',
            workflowId: `shadow/slots-slow/${id}`,
          });
        }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    // The refusal the API answers with 403 resource-limit.
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as { kind: string }).kind).toBe('resource-limit');
    const rows = await svc.database.db.select().from(shadowRuns).where(eq(shadowRuns.tenantId, 'slots-slow'));
    expect(rows).toHaveLength(2);
    await svc.database.db.delete(shadowRuns).where(eq(shadowRuns.tenantId, 'slots-slow'));
  });

  it('frees the slot of a run terminated in Temporal and reports it failed, with the reason', async () => {
    const token = await createTenant(svc, 'slots-terminated', 'free');
    const held = [await shadow(token), await shadow(token)];
    for (const h of held) expect(h.status).toBe(202);
    expect((await shadow(token)).status).toBe(403);

    // An operator terminates one run in the Temporal UI: its workflow cannot record how it ended.
    await svc.client.workflow.getHandle(held[0]!.body.workflow_id).terminate('operator cleanup');
    const [before] = await svc.database.db.select().from(shadowRuns).where(eq(shadowRuns.id, held[0]!.body.id));
    expect(before!.status).toBe('running');

    // At the limit, admission settles the terminated run and takes its slot.
    const third = await shadow(token);
    expect(third.status).toBe(202);
    const read = await svc.request('GET', `/api/v1/shadows/${held[0]!.body.id}`, { token });
    expect(read.status).toBe(200);
    expect(read.body.status).toBe('failed');
    expect(read.body.error).toContain('TERMINATED');
    expect(read.body.ended_at).not.toBeNull();
    // Stopping it now changes nothing.
    expect((await svc.request('POST', `/api/v1/shadows/${held[0]!.body.id}/stop`, { token })).status).toBe(200);
    await stopAll(token, [held[1]!.body.id, third.body.id]);
  });

  it('reads a terminated run as failed as soon as it is read, and a cancel of it answers 200', async () => {
    const token = await createTenant(svc, 'slots-read', 'free');
    const s = await shadow(token);
    expect(s.status).toBe(202);
    await svc.client.workflow.getHandle(s.body.workflow_id).terminate('gone');
    // A long poll does not sit out its wait on a run that can no longer end by itself.
    const polled = performance.now();
    const read = await svc.request('GET', `/api/v1/shadows/${s.body.id}?wait=60`, { token });
    expect(performance.now() - polled).toBeLessThan(30_000);
    expect(read.body).toMatchObject({ status: 'failed', progress: null });
    expect(read.body.error).toContain(s.body.workflow_id);

    // A replay row whose workflow was terminated: the cancel finds nothing to cancel and says how it ended.
    const replay = await svc.request('POST', '/api/v1/rules/replay', { token, body: { rule: ruleText, target: 'local', lookback: 'P1D' } });
    expect(replay.status).toBe(202);
    await svc.request('GET', `/api/v1/replays/${replay.body.id}?wait=30`, { token });
    const [local] = await svc.database.db
      .select()
      .from(targets)
      .where(and(eq(targets.tenantId, 'slots-read'), eq(targets.name, 'local')));
    const stuckId = crypto.randomUUID();
    const workflowId = `replay/slots-read/${RULE_ID}/local/${stuckId}`;
    await svc.database.db.insert(replays).values({
      id: stuckId,
      tenantId: 'slots-read',
      ruleId: RULE_ID,
      version: null,
      ruleContent: ruleText,
      targetId: local!.id,
      windowFrom: new Date(Date.now() - 86_400_000),
      windowTo: new Date(),
      chunkEvents: 100_000,
      status: 'running',
      workflowId,
      createdAt: new Date(Date.now() - 5 * 60_000),
    });
    // Never started in Temporal (the start request failed after the row was written), long ago.
    const cancel = await svc.request('POST', `/api/v1/replays/${stuckId}/cancel`, { token });
    expect(cancel.status).toBe(200);
    expect(cancel.body.status).toBe('failed');
    expect(cancel.body.error).toContain('never started');
  });

  it('leaves a running run and a just-inserted, not yet started one alone', async () => {
    const token = await createTenant(svc, 'slots-young', 'free');
    const live = await shadow(token);
    expect(live.status).toBe(202);
    const [local] = await svc.database.db
      .select()
      .from(targets)
      .where(and(eq(targets.tenantId, 'slots-young'), eq(targets.name, 'local')));
    const youngId = crypto.randomUUID();
    await svc.database.db.insert(shadowRuns).values({
      id: youngId,
      tenantId: 'slots-young',
      ruleId: RULE_ID,
      version: null,
      ruleContent: ruleText,
      targetId: local!.id,
      duration: 'PT10M',
      interval: 'PT1M',
      status: 'running',
      workflowId: `shadow/slots-young/${RULE_ID}/local/${youngId}`,
    });
    // Both slots are taken: the live run is running, and the young row's start may still be under way.
    const refused = await shadow(token);
    expect(refused.status).toBe(403);
    expect((await svc.request('GET', `/api/v1/shadows/${youngId}`, { token })).body.status).toBe('running');
    expect((await svc.request('GET', `/api/v1/shadows/${live.body.id}`, { token })).body.status).toBe('running');
    await svc.database.db.delete(shadowRuns).where(eq(shadowRuns.id, youngId));
    await stopAll(token, [live.body.id]);
  });
});
