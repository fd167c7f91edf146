import { FAKES } from '../fakes';
import type { FakeSiem } from '../fakes/fake-siem';
import { createReviewerKey, processRule, startTestService, until, type TestService } from '../support/harness';

/**
 * Every remote target kind through detflow's real workflows, against its fake vendor server on
 * loopback: fixture tests, replay, shadow, deploy with approval, a second version, drift and its
 * restore, the SIEM's own statistics in rule health, rollback, and the vendor's faults.
 */
const DAY = 86_400_000;
const COST_MODEL = { currency: 'USD', price_per_gb_scanned: 0, triage_minutes_per_alert: 5, cost_per_analyst_hour: 60 };

describe.each(Object.keys(FAKES) as Array<keyof typeof FAKES>)('%s target through the workflows', (kind) => {
  let svc: TestService;
  let fake: FakeSiem;
  let reviewer: string;
  const target = `${kind}-prod`;
  const RULE = `${{ splunk: 'a', elastic: 'b', sentinel: 'c' }[kind]}e000000-0000-4000-8000-000000000001`;
  const ruleText = (revision: number) =>
    processRule(RULE, {
      title: `Remote subject ${revision}`,
      level: 'high',
      image: revision === 1 ? '\\remote-evil.exe' : '\\remote-worse.exe',
      tags: ['attack.execution', 'attack.t1059.001'],
    });

  beforeAll(async () => {
    svc = await startTestService();
    fake = await FAKES[kind]!();
    reviewer = (await createReviewerKey(svc)).token;
    const created = await svc.request('POST', '/api/v1/settings/targets', {
      body: { name: target, kind, environment: 'prod', connection: { ...fake.connection(), ingest_lag_seconds: 0 }, cost_model: COST_MODEL },
    });
    expect(created.status).toBe(201);
    expect(Object.values(created.body.connection)).toContain('********');
    for (const r of [1, 2]) expect([200, 201]).toContain((await svc.request('POST', '/api/v1/rules', { body: { rule: ruleText(r) } })).status);
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  const deploy = async (version: number) => {
    const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE, target, version, approval_required: true } });
    expect(res.body).toMatchObject({ status: 'pending_approval' });
    const approvalId = String(res.body.links.approval).split('/').at(-1)!;
    await until('the impact summary', async () => ((await svc.request('GET', `/api/v1/approvals/${approvalId}`)).body.impact ? true : undefined), 60);
    expect((await svc.request('POST', `/api/v1/approvals/${approvalId}/decision`, { token: reviewer, body: { decision: 'approve', comment: 'ok' } })).status).toBe(200);
    return until(
      'the approved change to settle',
      async () => {
        const d = (await svc.request('GET', `/api/v1/deployments/${res.body.id}`)).body as {
          id: string;
          status: string;
          error: string | null;
          drift: Array<{ kind: string }>;
          mapping: unknown;
        };
        return ['pending_approval', 'deploying'].includes(d.status) ? undefined : d;
      },
      60,
    );
  };
  const mine = () => fake.objects().filter((o) => o.name.includes(RULE));

  it('refuses connection settings the kind cannot use, at their pointer, and never shows a credential', async () => {
    const bad = await svc.request('POST', '/api/v1/settings/targets', { body: { name: `${kind}-bad`, kind, environment: 'prod', connection: {}, cost_model: COST_MODEL } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.length).toBeGreaterThan(0);
    expect(bad.body.errors.every((e: { pointer: string }) => e.pointer.startsWith('/body/connection'))).toBe(true);
    const listed = JSON.stringify((await svc.request('GET', '/api/v1/settings/targets')).body);
    for (const [k, v] of Object.entries(fake.connection())) if (/token|password|api_key|secret/i.test(k)) expect(listed).not.toContain(String(v));
  });

  it('runs fixture tests in the SIEM itself', async () => {
    const fx = (name: string, expect: string, event: Record<string, unknown>) => JSON.stringify({ name, expect, event });
    const res = await svc.request('POST', '/api/v1/rules/test', {
      body: {
        rule_id: RULE,
        version: 1,
        target,
        fixtures: [
          fx('evil', 'match', { Image: 'C:\\x\\remote-evil.exe', CommandLine: 'remote-evil --go' }),
          fx('good', 'no_match', { Image: 'C:\\x\\good.exe', CommandLine: 'good' }),
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.tests.map((t: { name: string; matched_on_target: boolean }) => [t.name, t.matched_on_target])).toEqual([
      ['evil', true],
      ['good', false],
    ]);
    expect(res.body.passed).toBe(true);
  });

  it('replays a window through the SIEM’s search, counting per day', async () => {
    const base = Date.UTC(2026, 10, 1);
    fake.addProcessEvents([
      ...[0, 1, 2].map((h) => ({ time: new Date(base + h * 3_600_000), image: 'C:\\x\\remote-evil.exe', commandLine: 'remote-evil' })),
      { time: new Date(base + DAY + 60_000), image: 'C:\\x\\REMOTE-EVIL.EXE', commandLine: 'x' },
      { time: new Date(base + DAY + 120_000), image: 'C:\\x\\calc.exe', commandLine: 'calc' },
    ]);
    const res = await svc.request('POST', '/api/v1/rules/replay', {
      body: { rule_id: RULE, version: 1, target, from: new Date(base).toISOString(), to: new Date(base + 2 * DAY).toISOString() },
    });
    expect(res.status).toBe(202);
    const replay = (await svc.request('GET', `/api/v1/replays/${res.body.id}?wait=60`)).body;
    expect(replay.status).toBe('completed');
    expect(replay.result.alerts.total).toBe(4);
    expect(replay.result.alerts.per_day.map((d: { alerts: number }) => d.alerts)).toEqual([3, 1]);
  });

  it('shadow-runs on the SIEM’s live events by event time', async () => {
    const res = await svc.request('POST', '/api/v1/rules/shadow', { body: { rule_id: RULE, version: 1, target, duration: 'PT5M', interval: 'PT1S' } });
    expect(res.body).toMatchObject({ status: 'running' });
    await until('the first evaluation', async () => ((await svc.request('GET', `/api/v1/shadows/${res.body.id}`)).body.progress?.evaluations >= 1 ? true : undefined));
    fake.addProcessEvents([
      { time: new Date(), image: 'C:\\x\\remote-evil.exe', commandLine: 'a' },
      { time: new Date(), image: 'C:\\x\\remote-evil.exe', commandLine: 'b' },
      { time: new Date(), image: 'C:\\x\\notepad.exe', commandLine: 'c' },
    ]);
    await until('both matches', async () => ((await svc.request('GET', `/api/v1/shadows/${res.body.id}`)).body.progress?.alerts >= 2 ? true : undefined));
    expect((await svc.request('POST', `/api/v1/shadows/${res.body.id}/stop`)).status).toBe(202);
    const shadow = (await svc.request('GET', `/api/v1/shadows/${res.body.id}?wait=30`)).body;
    expect(shadow.status).toBe('completed');
    expect(shadow.result.alerts).toMatchObject({ projected_total: 2, written: 0 });
    expect(shadow.result.events_scanned).toBe(3);
  });

  it('deploys with approval exactly once, survives a 500 during the deploy, and a second version updates the same object', async () => {
    fake.fault({ times: 1, status: 500, match: /^(POST|PUT|PATCH)/ });
    const first = await deploy(1);
    expect(first.status).toBe('active');
    // The mapping the rule was compiled with is on the record.
    expect(first.mapping).toEqual({ name: expect.stringMatching(new RegExp(`^${kind}-`)), version: expect.stringMatching(/^[0-9a-f]{12}$/) });
    expect(mine()).toHaveLength(1);
    expect(mine()[0]!.enabled).toBe(true);
    expect(mine()[0]!.description).toContain(`deployment=${first.id}`);
    const writesAfterFirst = fake.writes().length;

    const second = await deploy(2);
    expect(second.status).toBe('active');
    expect(mine()).toHaveLength(1);
    expect(mine()[0]!.description).toContain(`deployment=${second.id}`);
    expect(mine()[0]!.query.toLowerCase()).toContain('remote-worse');
    expect(fake.writes().length).toBeGreaterThan(writesAfterFirst);

    const checked = await svc.request('POST', `/api/v1/settings/targets/${target}/drift-check`);
    expect(checked.status).toBe(200);
    expect(checked.body.items).toEqual([]);
  });

  it('finds an edit made in the SIEM as drift, shows it in rule health, and restores it', async () => {
    const [object] = mine();
    fake.editQuery(object!.name, `${object!.query} OR 1=1`);
    const checked = await svc.request('POST', `/api/v1/settings/targets/${target}/drift-check`);
    expect(checked.body.items).toEqual([expect.objectContaining({ kind: 'edited', object: object!.name, rule_id: RULE })]);
    fake.setEnabled(object!.name, false);
    const again = await svc.request('POST', `/api/v1/settings/targets/${target}/drift-check`);
    expect(again.body.items.map((d: { kind: string }) => d.kind).sort()).toEqual(['disabled', 'edited']);

    fake.recordAlerts(object!.name, [new Date(Date.now() - 3_600_000), new Date(Date.now() - 60_000)]);
    const health = (await svc.request('GET', `/api/v1/health/rules/${RULE}?target=${target}`)).body;
    expect(health.drift.map((d: { kind: string }) => d.kind).sort()).toEqual(['disabled', 'edited']);
    expect(health.status).not.toBe('ok');
    expect(health.siem).toEqual([expect.objectContaining({ target, kind, alerts: 2 })]);

    const live = (await svc.request('GET', `/api/v1/deployments?rule_id=${RULE}&target=${target}&status=active`)).body.items[0];
    const restored = await svc.request('POST', `/api/v1/deployments/${live.id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.drift).toEqual([]);
    expect(mine()[0]!.enabled).toBe(true);
    expect(mine()[0]!.query).toBe(object!.query);
  });

  it('keeps a stored credential only for the addresses it was given for', async () => {
    const connection = fake.connection();
    const credential = Object.keys(connection).find((k) => /^(token|password|api_key|client_secret)$/.test(k))!;
    const address = Object.keys(connection).find((k) => k.endsWith('_url') || k.endsWith('_host'))!;
    const put = (conn: Record<string, unknown>) =>
      svc.request('PUT', `/api/v1/settings/targets/${target}`, {
        body: { name: target, kind, environment: 'prod', connection: { ...conn, ingest_lag_seconds: 0 }, cost_model: COST_MODEL },
      });
    const moved = await put({ ...connection, [address]: 'https://elsewhere.example', [credential]: '********' });
    expect(moved.status).toBe(400);
    expect(moved.body.errors).toEqual([expect.objectContaining({ pointer: `/body/connection/${credential}` })]);
    // Unchanged addresses keep it; the target still reaches the SIEM.
    expect((await put({ ...connection, [credential]: '********' })).status).toBe(200);
    expect((await svc.request('POST', `/api/v1/settings/targets/${target}/drift-check`)).status).toBe(200);
    const masked = await svc.request('POST', '/api/v1/settings/targets', {
      body: { name: `${kind}-masked`, kind, environment: 'prod', connection: { ...connection, [credential]: '********' }, cost_model: COST_MODEL },
    });
    expect(masked.status).toBe(400);
  });

  it('puts a change of field mapping under live rules behind an approval, replayed; rejected, nothing changes', async () => {
    const before = (await svc.request('GET', `/api/v1/settings/targets/${target}`)).body;
    const res = await svc.request('PUT', `/api/v1/settings/targets/${target}`, {
      body: {
        name: target,
        kind,
        environment: 'prod',
        connection: { ...fake.connection(), ingest_lag_seconds: 0, field_map: 'Image=some_other_field' },
        cost_model: COST_MODEL,
      },
    });
    expect(res.status).toBe(202);
    expect(res.body.affected.map((a: any) => a.rule_id)).toContain(RULE);
    expect(res.body.affected[0].reason).toMatch(/mapping/);
    const approval = await until('the impact replayed', async () => {
      const a = (await svc.request('GET', `/api/v1/approvals/${res.body.approval_id}`)).body;
      return a.impact ? a : undefined;
    });
    expect(approval.impact).toMatchObject({ kind: 'settings', target, mapping: { after: { field_map: 'Image=some_other_field' } } });
    expect(approval.impact.rules.map((r: any) => r.rule_id)).toContain(RULE);
    // A second change waits for the first to be decided.
    const again = await svc.request('PUT', `/api/v1/settings/targets/${target}`, {
      body: { name: target, kind, environment: 'prod', connection: { ...fake.connection(), ingest_lag_seconds: 0, field_map: 'Image=a_third' }, cost_model: COST_MODEL },
    });
    expect(again.status).toBe(409);
    const rejected = await svc.request('POST', `/api/v1/approvals/${res.body.approval_id}/decision`, { token: reviewer, body: { decision: 'reject', comment: 'no' } });
    expect(rejected.status).toBe(200);
    const after = (await svc.request('GET', `/api/v1/settings/targets/${target}`)).body;
    expect(after.connection.field_map).toBe(before.connection.field_map);
    expect(after.settings_version ?? null).toBe(before.settings_version ?? null);
    const bad = await svc.request('PUT', `/api/v1/settings/targets/${target}`, {
      body: { name: target, kind, environment: 'prod', connection: { ...fake.connection(), ingest_lag_seconds: 0, field_map: 'Image' }, cost_model: COST_MODEL },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ pointer: '/body/connection/field_map' })]);
  });

  it('refuses to overwrite a rule another target deployed on the same SIEM, and leaves it out of that target’s drift', async () => {
    const other = `${kind}-staging`;
    expect(
      (
        await svc.request('POST', '/api/v1/settings/targets', {
          body: { name: other, kind, environment: 'prod', connection: { ...fake.connection(), ingest_lag_seconds: 0 }, cost_model: COST_MODEL },
        })
      ).status,
    ).toBe(201);
    const before = mine().map((o) => o.description);
    const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE, target: other, version: 1, approval_required: false } });
    expect(res.status).toBe(202);
    const done = (await svc.request('GET', `/api/v1/deployments/${res.body.id}?wait=60`)).body;
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/another detflow target/);
    expect(mine().map((o) => o.description)).toEqual(before);
    expect((await svc.request('POST', `/api/v1/settings/targets/${other}/drift-check`)).body.items).toEqual([]);
  });

  it('fails a deploy whose credentials the SIEM refuses, with the reason and without a retry storm', async () => {
    fake.expireCredentials();
    const before = fake.requests().length;
    try {
      const res = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE, target, version: 1, approval_required: false } });
      expect(res.status).toBe(202);
      const done = (await svc.request('GET', `/api/v1/deployments/${res.body.id}?wait=60`)).body;
      expect(done.status).toBe('failed');
      expect(done.error).toMatch(/401|credential|unauthori/i);
      // A permanent failure: the impact summary's searches and one deploy attempt, not a retry per second.
      expect(fake.requests().length - before).toBeLessThan(20);
    } finally {
      fake.restoreCredentials();
    }
  });

  it('puts an approved change of field mapping into effect: the live rule is redeployed on the SIEM with the new field, once', async () => {
    // A field the SIEM knows: Sentinel's query API refuses a column its table does not have.
    const field = kind === 'sentinel' ? 'InitiatingProcessFolderPath' : 'proc_image_path';
    const before = (await svc.request('GET', `/api/v1/settings/targets/${target}`)).body;
    const live = (await svc.request('GET', `/api/v1/deployments?rule_id=${RULE}&target=${target}&status=active`)).body.items[0];
    const recorded = (await svc.request('GET', `/api/v1/deployments/${live.id}`)).body.mapping;
    expect(mine()[0]!.query).not.toContain(field);
    const res = await svc.request('PUT', `/api/v1/settings/targets/${target}`, {
      body: {
        name: target,
        kind,
        environment: 'prod',
        connection: { ...fake.connection(), ingest_lag_seconds: 0, field_map: `Image=${field}` },
        cost_model: COST_MODEL,
      },
    });
    expect(res.status).toBe(202);
    await until('the impact replayed', async () => ((await svc.request('GET', `/api/v1/approvals/${res.body.approval_id}`)).body.impact ? true : undefined), 60);
    const writes = fake.writes().length;
    const approved = await svc.request('POST', `/api/v1/approvals/${res.body.approval_id}/decision`, { token: reviewer, body: { decision: 'approve', comment: 'new index' } });
    expect(approved.status).toBe(200);
    const after = await until(
      'the new settings in effect',
      async () => {
        const t = (await svc.request('GET', `/api/v1/settings/targets/${target}`)).body;
        return t.connection.field_map === `Image=${field}` && mine()[0]?.query.includes(field) ? t : undefined;
      },
      60,
    );
    expect(after.settings_version).not.toBe(before.settings_version);
    // The same object on the SIEM, rewritten: not a second rule.
    expect(mine()).toHaveLength(1);
    expect(fake.writes().length).toBeGreaterThan(writes);
    const redeployed = (await svc.request('GET', `/api/v1/deployments?rule_id=${RULE}&target=${target}&status=active`)).body.items;
    expect(redeployed).toHaveLength(1);
    const mapping = (await svc.request('GET', `/api/v1/deployments/${redeployed[0].id}`)).body.mapping;
    expect(mapping.version).not.toBe(recorded.version);
    // What runs on the SIEM is what detflow now expects there: no drift.
    expect((await svc.request('POST', `/api/v1/settings/targets/${target}/drift-check`)).body.items).toEqual([]);
  });

  it('rolls back by taking the rule off the SIEM', async () => {
    const res = await svc.request('POST', '/api/v1/rules/rollback', { body: { rule_id: RULE, target, reason: 'too noisy', remove: true } });
    expect(res.status).toBe(202);
    expect(await svc.client.workflow.getHandle(res.body.workflow_id).result()).toMatchObject({ status: 'completed' });
    expect(mine().filter((o) => o.enabled)).toEqual([]);
    expect((await svc.request('POST', `/api/v1/settings/targets/${target}/drift-check`)).body.items).toEqual([]);
  });
});
