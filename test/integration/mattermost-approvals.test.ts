import { createApiKey, processRule, startTestService, type TestService, until } from '../support/harness';
import { FakeMattermost, mattermostId, type MattermostPost } from '../fakes/mattermost';

const RULE_A = 'f0000000-0000-4000-8000-0000000a77a1';
const RULE_B = 'f0000000-0000-4000-8000-0000000a77b1';
const RULE_C = 'f0000000-0000-4000-8000-0000000a77c1';
const RULE_D = 'f0000000-0000-4000-8000-0000000a77d1';
const RULE_E = 'f0000000-0000-4000-8000-0000000a77e1';
const BOB = { id: mattermostId('bob'), name: 'bob' };
const ALICE = { id: mattermostId('alice'), name: 'alice' };
const MALLORY = { id: mattermostId('mallory'), name: 'mallory' };

describe('approvals decided from Mattermost', () => {
  let svc: TestService;
  let mm: FakeMattermost;
  let alice: { id: string; token: string };
  let aliceReviewer: { id: string; token: string };
  let bob: { id: string; token: string };

  const approval = async (id: string) => (await svc.request('GET', `/api/v1/approvals/${id}`)).body;
  const submit = async (ruleId: string) => {
    const res = await svc.request('POST', '/api/v1/approvals', { token: alice.token, body: { rule_id: ruleId, targets: ['local'] } });
    expect(res.status).toBe(202);
    const post = await until('the approval notification in Mattermost', async () => mm.postFor(res.body.id));
    return { id: res.body.id as string, deploymentId: res.body.deployment_ids[0] as string, post };
  };
  const contextOf = (post: MattermostPost, actionId: string) => mm.buttons(post).find((a) => a.id === actionId).integration.context;
  const actionsUrl = () => `${svc.url}/api/v1/integrations/mattermost/default/actions`;

  beforeAll(async () => {
    svc = await startTestService();
    mm = await new FakeMattermost().start();
    alice = await createApiKey(svc, svc.token, { name: 'alice', permissions: ['admin'], principal: 'alice@example.com' });
    aliceReviewer = await createApiKey(svc, alice.token, { name: 'alice approves', permissions: ['approve', 'rules:read'] });
    bob = await createApiKey(svc, svc.token, { name: 'bob', permissions: ['approve', 'rules:read'], principal: 'bob@example.com' });
    const hook = await svc.request('PUT', '/api/v1/settings/webhook', {
      body: { url: mm.webhookUrl, secret: 'a-webhook-secret-of-some-length', events: ['approval.requested'] },
    });
    expect(hook.status).toBe(200);
    for (const id of [RULE_A, RULE_B, RULE_C, RULE_D, RULE_E]) expect((await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(id) } })).status).toBe(201);
  });
  afterAll(async () => {
    await mm?.stop();
    await svc?.close();
  });

  it('posts no buttons while no Mattermost integration is set: nobody could click them', async () => {
    const { post } = await submit(RULE_C);
    expect(post.message).toContain(RULE_C);
    expect(mm.buttons(post)).toEqual([]);
    expect(mm.refused).toEqual([]);
  });

  it('maps Mattermost users only to live approve keys and never shows the buttons’ key', async () => {
    expect((await svc.request('GET', '/api/v1/settings/integrations/mattermost')).status).toBe(404);
    const badId = await svc.request('PUT', '/api/v1/settings/integrations/mattermost', { body: { reviewers: [{ user_id: 'Bob', api_key_id: bob.id }] } });
    expect(badId.status).toBe(400);
    expect(badId.body.errors[0].pointer).toBe('/body/reviewers/0/user_id');
    const ci = await createApiKey(svc, svc.token, { name: 'ci', permissions: ['deploy'], principal: 'ci' });
    const lacking = await svc.request('PUT', '/api/v1/settings/integrations/mattermost', { body: { reviewers: [{ user_id: BOB.id, api_key_id: ci.id }] } });
    expect(lacking.status).toBe(400);
    expect(lacking.body.errors[0].pointer).toBe('/body/reviewers/0/api_key_id');
    const twice = await svc.request('PUT', '/api/v1/settings/integrations/mattermost', {
      body: {
        reviewers: [
          { user_id: BOB.id, api_key_id: bob.id },
          { user_id: BOB.id, api_key_id: aliceReviewer.id },
        ],
      },
    });
    expect(twice.status).toBe(400);
    expect(twice.body.errors[0].pointer).toBe('/body/reviewers/1');

    const put = await svc.request('PUT', '/api/v1/settings/integrations/mattermost', {
      body: {
        reviewers: [
          { user_id: BOB.id, api_key_id: bob.id },
          { user_id: ALICE.id, api_key_id: aliceReviewer.id },
        ],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ reviewers: expect.any(Array), actions_url: actionsUrl(), updated_at: expect.any(String) });
    expect(Object.keys((await svc.request('GET', '/api/v1/settings/integrations/mattermost')).body).sort()).toEqual(['actions_url', 'reviewers', 'updated_at']);
  });

  it('refuses clicks without detflow’s token, tells unmapped and self-approving users why, then takes a reviewer’s approval and updates the post', async () => {
    const { id, deploymentId, post } = await submit(RULE_A);
    expect(mm.refused).toEqual([]);
    expect(mm.buttons(post).map((b) => [b.id, b.name, b.integration.url, b.integration.context.approval_id, b.integration.context.decision])).toEqual([
      ['detflowapprove', 'Approve', actionsUrl(), id, 'approve'],
      ['detflowreject', 'Reject', actionsUrl(), id, 'reject'],
      ['detflowrequestchanges', 'Request changes', actionsUrl(), id, 'request_changes'],
    ]);
    const approve = contextOf(post, 'detflowapprove');
    const reject = contextOf(post, 'detflowreject');
    const send = (user: { id: string; name: string }, context: unknown) => FakeMattermost.send(actionsUrl(), { user_id: user.id, user_name: user.name, context });

    // Forgeries: no valid token, the reject button's token on an approve, and this token on another approval.
    const forged = await send(BOB, { ...approve, token: 'f'.repeat(64) });
    expect(forged.status).toBe(401);
    expect(forged.answer).toMatchObject({ type: 'https://detflow.dev/problems/mattermost-request-refused', detail: expect.stringMatching(/token/) });
    expect((await send(BOB, { ...approve, token: reject.token })).status).toBe(401);
    const other = await submit(RULE_B);
    expect((await send(BOB, { ...approve, approval_id: other.id })).status).toBe(401);

    const unmapped = await mm.click(post, 'detflowapprove', MALLORY);
    expect(unmapped.status).toBe(200);
    expect(unmapped.ephemeral).toMatch(/not mapped/);
    expect(unmapped.answer.refused.kind).toBe('insufficient-scope');
    expect(mm.buttons(post)).toHaveLength(3);

    const self = await mm.click(post, 'detflowapprove', ALICE);
    expect(self.ephemeral).toMatch(/alice@example\.com/);
    expect(await approval(id)).toMatchObject({ status: 'pending', decided_by: null, decision: null });
    expect((await svc.request('GET', `/api/v1/deployments/${deploymentId}`)).body.status).not.toBe('active');

    const approved = await mm.click(post, 'detflowapprove', BOB);
    expect(approved.status).toBe(200);
    expect(approved.answer.refused).toBeUndefined();
    expect(await approval(id)).toMatchObject({
      status: 'approved',
      decision: 'approve',
      decided_by: bob.id,
      decided_by_principal: 'bob@example.com',
      comment: `Decided in Mattermost by ${BOB.id} (@bob)`,
    });
    expect(post.message).toContain(RULE_A);
    expect(mm.buttons(post)).toEqual([]);
    expect(post.props.attachments![0].text).toMatch(/^\*\*Approved\*\* by bob@example\.com \(@bob\) at /);
    await until('the deployment activates', async () => ((await svc.request('GET', `/api/v1/deployments/${deploymentId}`)).body.status === 'active' ? true : undefined));

    // One decision: the same request again (a replay, or a second click) decides nothing more.
    const again = await send(BOB, reject);
    expect(again.status).toBe(200);
    expect(again.answer.refused).toMatchObject({ kind: 'conflict', detail: expect.stringMatching(/already approved/) });
    expect(await approval(id)).toMatchObject({ status: 'approved', decided_by: bob.id });

    // The audit names the Mattermost user and the key decided as.
    const audit = await svc.request('GET', '/api/v1/settings/audit?limit=100');
    const rows = audit.body.items.filter((e: any) => e.route === '/integrations/mattermost/{tenant}/actions');
    expect(rows.find((e: any) => e.principal === 'bob@example.com')).toMatchObject({ token_id: bob.id, status: 200 });
    expect(JSON.stringify(rows)).toContain(`mattermost:${BOB.id} (@bob)`);
    expect(rows.filter((e: any) => e.status === 401)).toHaveLength(3);
  });

  it('stops the posted buttons when the key is rotated or the integration removed, and maps Request changes to the API decision', async () => {
    const { id, post } = await submit(RULE_D);
    const before = contextOf(post, 'detflowrequestchanges');
    const rotated = await svc.request('PUT', '/api/v1/settings/integrations/mattermost', {
      body: { reviewers: [{ user_id: BOB.id, api_key_id: bob.id }], rotate_action_key: true },
    });
    expect(rotated.status).toBe(200);
    expect((await mm.click(post, 'detflowrequestchanges', BOB)).status).toBe(401);
    expect(await approval(id)).toMatchObject({ status: 'pending' });

    // A notification sent after the rotation carries buttons made with the new key.
    const { id: id2, post: post2 } = await submit(RULE_E);
    expect(contextOf(post2, 'detflowrequestchanges').token).not.toBe(before.token);
    const changes = await mm.click(post2, 'detflowrequestchanges', BOB);
    expect(changes.status).toBe(200);
    expect(await approval(id2)).toMatchObject({ status: 'changes_requested', decision: 'request_changes', decided_by_principal: 'bob@example.com' });
    expect(post2.props.attachments![0].text).toMatch(/^\*\*Changes requested\*\* by bob@example\.com/);

    expect((await svc.request('DELETE', '/api/v1/settings/integrations/mattermost')).status).toBe(204);
    expect((await mm.click(post, 'detflowreject', BOB)).status).toBe(401);
    expect(await approval(id)).toMatchObject({ status: 'pending' });
  });

  it('answers a body that is not a post action request with a problem', async () => {
    expect((await svc.request('PUT', '/api/v1/settings/integrations/mattermost', { body: { reviewers: [] } })).status).toBe(200);
    const text = await svc.request('POST', '/api/v1/integrations/mattermost/default/actions', { token: null, body: 'x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.headers.get('content-type')).toMatch(/problem\+json/);
    const malformed = await svc.request('POST', '/api/v1/integrations/mattermost/default/actions', {
      token: null,
      body: '{"user_id":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toMatch(/problem\+json/);
    const noContext = await svc.request('POST', '/api/v1/integrations/mattermost/default/actions', { token: null, body: { user_id: BOB.id } });
    expect(noContext.status).toBe(400);
    expect(noContext.body.errors[0].pointer).toBe('/body/context');
    const noTenant = await svc.request('POST', '/api/v1/integrations/mattermost/nosuchtenant/actions', { token: null, body: { user_id: BOB.id } });
    expect(noTenant.status).toBe(401);
  });
});
