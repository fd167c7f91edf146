import { createApiKey, processRule, startTestService, type TestService, until } from '../support/harness';
import { FakeSlack } from '../fakes/slack';

const SIGNING_SECRET = 'slack-signing-secret-0123456789';
const TEAM = 'T0DETFLOW';
const RULE_A = 'f0000000-0000-4000-8000-00000000a51a';
const RULE_B = 'f0000000-0000-4000-8000-00000000a51b';
const RULE_C = 'f0000000-0000-4000-8000-00000000a51c';

describe('approvals decided from Slack', () => {
  let svc: TestService;
  let slack: FakeSlack;
  let alice: { id: string; token: string };
  let aliceReviewer: { id: string; token: string };
  let bob: { id: string; token: string };
  let interactionsUrl: string;

  const approval = async (id: string) => (await svc.request('GET', `/api/v1/approvals/${id}`)).body;
  const reviewers = (extra: Array<{ team_id: string; user_id: string; api_key_id: string }> = []) => [
    { team_id: TEAM, user_id: 'UBOB', api_key_id: bob.id },
    { team_id: TEAM, user_id: 'UALICE', api_key_id: aliceReviewer.id },
    ...extra,
  ];
  const submit = async (ruleId: string) => {
    const res = await svc.request('POST', '/api/v1/approvals', { token: alice.token, body: { rule_id: ruleId, targets: ['local'] } });
    expect(res.status).toBe(202);
    const message = await until('the approval notification in Slack', async () => slack.messages().find((m) => m.data?.approval_id === res.body.id));
    return { id: res.body.id as string, deploymentId: res.body.deployment_ids[0] as string, message };
  };

  beforeAll(async () => {
    svc = await startTestService();
    slack = await new FakeSlack(SIGNING_SECRET).start();
    alice = await createApiKey(svc, svc.token, { name: 'alice', permissions: ['admin'], principal: 'alice@example.com' });
    aliceReviewer = await createApiKey(svc, alice.token, { name: 'alice approves', permissions: ['approve', 'rules:read'] });
    bob = await createApiKey(svc, svc.token, { name: 'bob', permissions: ['approve', 'rules:read'], principal: 'bob@example.com' });
    const hook = await svc.request('PUT', '/api/v1/settings/webhook', {
      body: { url: slack.webhookUrl, secret: 'a-webhook-secret-of-some-length', events: ['approval.requested'] },
    });
    expect(hook.status).toBe(200);
    for (const id of [RULE_A, RULE_B, RULE_C]) expect((await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(id) } })).status).toBe(201);
  });
  afterAll(async () => {
    await slack?.stop();
    await svc?.close();
  });

  it('sends no buttons while no Slack app is configured: nobody could click them', async () => {
    const { message } = await submit(RULE_C);
    expect(message.text).toContain(RULE_C);
    expect(message.blocks.some((b: any) => b.type === 'actions')).toBe(false);
  });

  it('keeps the signing secret write-only and maps Slack users only to live approve keys', async () => {
    expect((await svc.request('GET', '/api/v1/settings/integrations/slack')).status).toBe(404);
    const noSecret = await svc.request('PUT', '/api/v1/settings/integrations/slack', { body: { reviewers: [] } });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.errors[0].pointer).toBe('/body/signing_secret');
    const notReviewer = await createApiKey(svc, svc.token, { name: 'ci', permissions: ['deploy'], principal: 'ci' });
    const lacking = await svc.request('PUT', '/api/v1/settings/integrations/slack', {
      body: { signing_secret: SIGNING_SECRET, reviewers: [{ team_id: TEAM, user_id: 'UCI', api_key_id: notReviewer.id }] },
    });
    expect(lacking.status).toBe(400);
    expect(lacking.body.errors[0].pointer).toBe('/body/reviewers/0/api_key_id');
    expect(
      (
        await svc.request('PUT', '/api/v1/settings/integrations/slack', {
          body: { signing_secret: SIGNING_SECRET, reviewers: [{ team_id: 'bad id', user_id: 'U1', api_key_id: bob.id }] },
        })
      ).status,
    ).toBe(400);
    const put = await svc.request('PUT', '/api/v1/settings/integrations/slack', { body: { signing_secret: SIGNING_SECRET, reviewers: reviewers() } });
    expect(put.status).toBe(200);
    expect(put.text).not.toContain(SIGNING_SECRET);
    expect(put.body).toMatchObject({ signing_secret_set: true, interactions_url: expect.stringMatching(/\/api\/v1\/integrations\/slack\/default\/interactions$/) });
    interactionsUrl = `${svc.url}/api/v1/integrations/slack/default/interactions`;
    // The secret set before is kept when omitted.
    expect((await svc.request('PUT', '/api/v1/settings/integrations/slack', { body: { reviewers: reviewers() } })).status).toBe(200);
  });

  it('refuses forged, stale, unmapped and self-approving clicks with nothing decided, then takes a reviewer’s approval and updates the message', async () => {
    const { id, deploymentId, message } = await submit(RULE_A);
    const buttons = message.blocks.find((b: any) => b.type === 'actions');
    expect(buttons.elements.map((e: any) => [e.action_id, e.value])).toEqual([
      ['detflow.approve', id],
      ['detflow.reject', id],
      ['detflow.request_changes', id],
    ]);
    const approve = { message, actionId: 'detflow.approve', teamId: TEAM };

    const forged = await slack.click(interactionsUrl, { ...approve, userId: 'UBOB', secret: 'not-the-signing-secret-at-all' });
    expect(forged.status).toBe(401);
    expect(forged.answer).toMatchObject({ type: 'https://detflow.dev/problems/slack-request-refused', detail: expect.stringMatching(/X-Slack-Signature does not match/) });

    const stale = await slack.click(interactionsUrl, { ...approve, userId: 'UBOB', at: new Date(Date.now() - 6 * 60_000) });
    expect(stale.status).toBe(401);
    expect(stale.answer.detail).toMatch(/5 minutes/);

    const unmapped = await slack.click(interactionsUrl, { ...approve, userId: 'UMALLORY' });
    expect(unmapped.status).toBe(403);
    expect(unmapped.answer.detail).toMatch(/not mapped/);
    expect(slack.answersTo(unmapped.responseUrl)).toEqual([expect.objectContaining({ response_type: 'ephemeral', replace_original: false })]);

    // A body changed after signing (the user swapped for a mapped one) is a forgery too.
    const tampered = await FakeSlack.send(interactionsUrl, unmapped.rawBody.replaceAll('UMALLORY', 'UBOB'), unmapped.headers);
    expect(tampered.status).toBe(401);
    expect(tampered.answer.detail).toMatch(/X-Slack-Signature does not match/);

    const self = await slack.click(interactionsUrl, { ...approve, userId: 'UALICE' });
    expect(self.status).toBe(403);
    expect(self.answer.detail).toMatch(/alice@example\.com/);
    expect(slack.answersTo(self.responseUrl)[0].text).toMatch(/refused/);

    expect(await approval(id)).toMatchObject({ status: 'pending', decided_by: null, decision: null });
    expect((await svc.request('GET', `/api/v1/deployments/${deploymentId}`)).body.status).not.toBe('active');

    const approved = await slack.click(interactionsUrl, { ...approve, userId: 'UBOB' });
    expect(approved.status).toBe(200);
    expect(await approval(id)).toMatchObject({
      status: 'approved',
      decision: 'approve',
      decided_by: bob.id,
      decided_by_principal: 'bob@example.com',
      comment: `Decided in Slack by ${TEAM}/UBOB`,
    });
    const [update] = slack.answersTo(approved.responseUrl);
    expect(update.replace_original).toBe(true);
    expect(JSON.stringify(update.blocks)).toContain('Approved* by bob@example.com (<@UBOB>)');
    expect(update.blocks.some((b: any) => b.type === 'actions')).toBe(false);
    await until('the deployment activates', async () => ((await svc.request('GET', `/api/v1/deployments/${deploymentId}`)).body.status === 'active' ? true : undefined));

    // One decision: another reviewer's later click is refused.
    const second = await slack.click(interactionsUrl, { message, actionId: 'detflow.reject', teamId: TEAM, userId: 'UBOB' });
    expect(second.status).toBe(409);
    expect(await approval(id)).toMatchObject({ status: 'approved', decided_by: bob.id });

    // The audit names the Slack user and the person decided as.
    const audit = await svc.request('GET', '/api/v1/settings/audit?limit=50');
    const row = audit.body.items.find((e: any) => e.route === '/integrations/slack/{tenant}/interactions' && e.status === 200);
    expect(row).toMatchObject({ token_id: bob.id, principal: 'bob@example.com' });
    expect(JSON.stringify(row)).toContain(`slack:${TEAM}/UBOB`);
  });

  it('refuses a replayed callback even once its user is mapped, and maps Request changes to the API decision', async () => {
    const { id, message } = await submit(RULE_B);
    const carol = await createApiKey(svc, svc.token, { name: 'carol', permissions: ['approve', 'rules:read'], principal: 'carol@example.com' });
    const first = await slack.click(interactionsUrl, { message, actionId: 'detflow.approve', teamId: TEAM, userId: 'UCAROL' });
    expect(first.status).toBe(403);
    // Carol is mapped now: the very same signed callback, sent again, must still decide nothing.
    expect(
      (await svc.request('PUT', '/api/v1/settings/integrations/slack', { body: { reviewers: reviewers([{ team_id: TEAM, user_id: 'UCAROL', api_key_id: carol.id }]) } }))
        .status,
    ).toBe(200);
    const replayed = await FakeSlack.send(interactionsUrl, first.rawBody, first.headers);
    expect(replayed.status).toBe(401);
    expect(replayed.answer.detail).toMatch(/replay/);
    expect(await approval(id)).toMatchObject({ status: 'pending', decided_by: null });

    // A mapped user whose key was revoked since decides nothing.
    const dave = await createApiKey(svc, svc.token, { name: 'dave', permissions: ['approve'], principal: 'dave@example.com' });
    const mapped = reviewers([
      { team_id: TEAM, user_id: 'UCAROL', api_key_id: carol.id },
      { team_id: TEAM, user_id: 'UDAVE', api_key_id: dave.id },
    ]);
    expect((await svc.request('PUT', '/api/v1/settings/integrations/slack', { body: { reviewers: mapped } })).status).toBe(200);
    expect((await svc.request('DELETE', `/api/v1/settings/api-keys/${dave.id}`)).status).toBe(200);
    const revoked = await slack.click(interactionsUrl, { message, actionId: 'detflow.approve', teamId: TEAM, userId: 'UDAVE' });
    expect(revoked.status).toBe(403);
    expect(revoked.answer.detail).toMatch(/revoked/);
    expect(await approval(id)).toMatchObject({ status: 'pending', decided_by: null });

    const changes = await slack.click(interactionsUrl, { message, actionId: 'detflow.request_changes', teamId: TEAM, userId: 'UCAROL' });
    expect(changes.status).toBe(200);
    expect(await approval(id)).toMatchObject({ status: 'changes_requested', decision: 'request_changes', decided_by_principal: 'carol@example.com' });
    expect(JSON.stringify(slack.answersTo(changes.responseUrl)[0].blocks)).toContain('Changes requested* by carol@example.com');
  });

  it('answers a body that is not a Slack callback with a problem', async () => {
    const json = await svc.request('POST', '/api/v1/integrations/slack/default/interactions', { token: null, body: { payload: {} } });
    expect(json.status).toBe(415);
    expect(json.headers.get('content-type')).toMatch(/problem\+json/);
    const unsigned = await svc.request('POST', '/api/v1/integrations/slack/default/interactions', {
      token: null,
      body: 'payload=%7B%7D',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(unsigned.status).toBe(401);
    const noApp = await svc.request('POST', '/api/v1/integrations/slack/nosuchtenant/interactions', {
      token: null,
      body: 'payload=%7B%7D',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': '1', 'x-slack-signature': 'v0=00' },
    });
    expect(noApp.status).toBe(401);
  });
});
