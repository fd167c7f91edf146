import { asc, eq } from 'drizzle-orm';
import { deployments, settingsVersions } from '../../db/schema';
import { createReviewerKey, until, startTestService, type TestService } from '../support/harness';

const RULE_ID = 'b7a1c0de-0000-4000-8000-00000000e8a1';
// Written after SigmaHQ's placeholder rules (rules-placeholder/, `|expand` with `%admins%`): a
// logon by one of the organisation's administrators to a machine outside their own list.
const RULE = `title: Administrator logon from an unlisted host
id: ${RULE_ID}
status: test
level: medium
logsource:
  product: windows
  category: process_creation
detection:
  selection:
    User|expand: '%admins%'
  filter:
    Computer|expand|startswith: '%admin_hosts%'
  condition: selection and not filter
`;

const fx = (name: string, expect: string, event: Record<string, unknown>) => JSON.stringify({ name, expect, event });

describe('placeholder values in target and environment settings', () => {
  let svc: TestService;
  let environment: string;
  beforeAll(async () => {
    svc = await startTestService();
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: RULE } })).status).toBe(201);
    environment = (await svc.request('GET', '/api/v1/settings/targets/local')).body.environment;
    const day = 86_400_000;
    const lines = [
      { User: 'alice', Computer: 'ws-9' },
      { User: 'alice', Computer: 'adm-1' },
      { User: 'root', Computer: 'ws-3' },
      { User: 'bob', Computer: 'ws-1' },
    ].map((e, i) => JSON.stringify({ '@timestamp': new Date(Date.now() - (i + 1) * day).toISOString(), Image: 'C:\\x\\cmd.exe', ...e }));
    const ingested = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(ingested.text).toContain('"accepted":4');
  });
  afterAll(() => svc.close());

  const lint = () => svc.request('POST', '/api/v1/rules/lint', { body: { rule: RULE, target: 'local' } });
  const test = () =>
    svc.request('POST', '/api/v1/rules/test', {
      body: {
        rule_id: RULE_ID,
        target: 'local',
        fixtures: [fx('root off-list', 'match', { User: 'root', Computer: 'ws-3' }), fx('alice on her host', 'no_match', { User: 'alice', Computer: 'adm-1' })],
      },
    });
  const replay = async () => {
    const now = Date.now();
    const res = await svc.request('POST', '/api/v1/rules/replay', {
      body: { rule_id: RULE_ID, target: 'local', from: new Date(now - 10 * 86_400_000).toISOString(), to: new Date(now).toISOString() },
    });
    if (res.status !== 202) return res;
    return svc.request('GET', `/api/v1/replays/${res.body.id}?wait=30`);
  };

  it('names each missing value and where to set it; test, replay and deploy refuse the rule', async () => {
    const linted = await lint();
    const missing = linted.body.findings.filter((f: any) => f.code === 'placeholder_missing');
    expect(missing.map((f: any) => f.message.match(/%(\w+)%/)[1])).toEqual(['admins', 'admin_hosts']);
    expect(missing[0].message).toContain('PUT /api/v1/settings/targets/local/placeholders');
    expect(missing[0].message).toContain(`PUT /api/v1/settings/environments/${environment}/placeholders`);
    expect(linted.body.valid).toBe(false);

    for (const res of [
      await test(),
      await replay(),
      await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE_ID, target: 'local', approval_required: false } }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.detail).toMatch(/placeholders %admins%, %admin_hosts% with no value on target local/);
    }
  });

  it('resolves environment defaults in lint, test and replay; the target own values win', async () => {
    const env = await svc.request('PUT', `/api/v1/settings/environments/${environment}/placeholders`, {
      body: { placeholders: { admins: ['alice', 'root'], admin_hosts: ['adm-'] } },
    });
    expect(env.status).toBe(200);
    expect(env.body.version).toBe(2);
    const shown = (await svc.request('GET', '/api/v1/settings/targets/local/placeholders')).body;
    expect(shown).toMatchObject({ placeholders: {}, resolved: { admins: ['alice', 'root'], admin_hosts: ['adm-'] }, version: 2 });

    const linted = await lint();
    expect(linted.body.findings.filter((f: any) => f.code === 'placeholder_missing')).toEqual([]);
    expect(linted.body.query).toContain("'root'");
    const tested = await test();
    expect(tested.status).toBe(200);
    expect(tested.body.summary).toEqual({ total: 2, passed: 2, failed: 0 });
    // alice on ws-9 and root on ws-3 are admins off their hosts; alice on adm-1 and bob are not.
    expect((await replay()).body.result.alerts.total).toBe(2);

    // The target's own list replaces the environment's for that name: now only root is an admin.
    const own = await svc.request('PUT', '/api/v1/settings/targets/local/placeholders', { body: { placeholders: { admins: ['root'] } } });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ version: 3, resolved: { admins: ['root'], admin_hosts: ['adm-'] }, environment_defaults: { admins: ['alice', 'root'] } });
    expect((await replay()).body.result.alerts.total).toBe(1);
    // Each version is on record, with who asked for it.
    const history = await svc.database.db.select().from(settingsVersions).orderBy(asc(settingsVersions.createdAt));
    expect(history.map((h) => [h.subject, h.name, h.version, h.status])).toEqual([
      ['environment', environment, 2, 'current'],
      ['target', 'local', 2, 'superseded'],
      ['target', 'local', 3, 'current'],
    ]);
    expect(history.every((h) => h.requestedByPrincipal !== null)).toBe(true);
  });

  it('puts a value change under a live rule behind an approval that replays it; rejected nothing changes, approved it is redeployed', async () => {
    const reviewer = (await createReviewerKey(svc)).token;
    const deployed = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: RULE_ID, target: 'local', approval_required: false } });
    expect(deployed.status).toBe(202);
    await until('the rule live', async () => ((await svc.request('GET', `/api/v1/deployments/${deployed.body.id}`)).body.status === 'active' ? true : undefined));
    const propose = () => svc.request('PUT', '/api/v1/settings/targets/local/placeholders', { body: { placeholders: { admins: ['root', 'alice'] } } });
    const waitImpact = (id: string) =>
      until('the impact replayed', async () => {
        const a = (await svc.request('GET', `/api/v1/approvals/${id}`)).body;
        return a.impact ? a : undefined;
      });
    const decide = (id: string, decision: string) => svc.request('POST', `/api/v1/approvals/${id}/decision`, { token: reviewer, body: { decision, comment: decision } });

    const first = await propose();
    expect(first.status).toBe(202);
    expect(first.body.affected).toEqual([expect.objectContaining({ rule_id: RULE_ID, reason: 'uses %admins%' })]);
    const impact = (await waitImpact(first.body.approval_id)).impact;
    // Replayed with the values in force (root only: 1 alert) and the proposed ones (alice too: 2).
    expect(impact.rules).toEqual([expect.objectContaining({ rule_id: RULE_ID, matched_before: 1, matched_after: 2 })]);
    // The requester may not decide it (four-eyes, as for a rule change).
    expect((await svc.request('POST', `/api/v1/approvals/${first.body.approval_id}/decision`, { body: { decision: 'approve' } })).status).toBe(403);
    expect((await decide(first.body.approval_id, 'reject')).status).toBe(200);
    await until('the proposal ended', async () => {
      const [row] = await svc.database.db.select().from(settingsVersions).where(eq(settingsVersions.approvalId, first.body.approval_id));
      return row?.status === 'rejected' ? row : undefined;
    });
    expect((await svc.request('GET', '/api/v1/settings/targets/local/placeholders')).body).toMatchObject({ version: 3, resolved: { admins: ['root'] } });

    const second = await propose();
    expect(second.status).toBe(202);
    await waitImpact(second.body.approval_id);
    expect((await decide(second.body.approval_id, 'approve')).status).toBe(200);
    const applied = await until('the version current', async () => {
      const p = (await svc.request('GET', '/api/v1/settings/targets/local/placeholders')).body;
      return p.version === second.body.proposed_version ? p : undefined;
    });
    expect(applied.resolved.admins).toEqual(['root', 'alice']);
    // The run ends once the affected rule is on the target again, with the version recorded.
    const run = await svc.client.workflow.getHandle((await svc.request('GET', `/api/v1/approvals/${second.body.approval_id}`)).body.workflow_id).result();
    expect(run).toMatchObject({ status: 'applied', redeployed: [deployed.body.id] });
    const [d] = await svc.database.db.select().from(deployments).where(eq(deployments.id, deployed.body.id));
    expect(d!.settingsVersion).toBe(second.body.proposed_version);
    // The live rule now matches per the new values: the replay counts alice too.
    expect((await replay()).body.result.alerts.total).toBe(2);
  });
});
