import fs from 'node:fs';
import path from 'node:path';
import { cliEnv, runCli, startCli, startCliTestBed, stopCliTestBed } from '../support/cli';
import { createReviewerKey, processRule, type TestService } from '../support/harness';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A CI job waits on `detflow deploy --wait` while the service is redeployed: the API stops (its
 * open long-poll is cut, as a load balancer or a SIGTERM drain cuts it) and the worker restarts,
 * then both come back on the same address. The job must ride through it and end as the change does.
 */
describe('detflow deploy --wait across a restart of the service (the real binary)', () => {
  let svc: TestService;
  let dir: string;
  let requester: Record<string, string>;
  let reviewer: Record<string, string>;
  let reviewerKeyId: string;

  beforeAll(async () => {
    ({ svc, dir, env: requester } = await startCliTestBed('detflow-cli-restart-'));
    const key = await createReviewerKey(svc);
    reviewer = cliEnv(svc, key.token);
    reviewerKeyId = key.id;
  });
  afterAll(() => stopCliTestBed({ svc, dir }));

  const activeVersions = async (ruleId: string) =>
    ((await svc.request('GET', `/api/v1/deployments?rule_id=${ruleId}&target=local&status=active`)).body.items as Array<{ version: number }>).map((d) => d.version);

  it('keeps waiting while the service restarts, then exits 0 once a reviewer approved and the rule is live', async () => {
    const id = 'c2000000-0000-4000-8000-000000000001';
    const file = path.join(dir, 'restart.yml');
    fs.writeFileSync(file, processRule(id, { title: 'Restart subject', image: '\\restart.exe' }));
    const waiting = startCli(['deploy', file, '--target', 'local', '--wait', '--timeout', '120'], { env: requester, cwd: dir, timeoutMs: 150_000 });
    const [, approvalId] = await waiting.output(/^approval {2}([0-9a-f-]{36}) waits for a reviewer: /m);
    // The job is now in its long-poll on the deployment, held by the service while the approval is pending.
    await pause(1000);

    await svc.apiDown();
    await svc.restartWorker();
    // Down long enough for the job to find the address refusing connections, not only its request cut.
    await pause(2500);
    await svc.apiUp();

    const approved = await runCli(['approve', approvalId!, '--comment', 'after the restart'], { env: reviewer, cwd: dir });
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);

    const done = await waiting.exited;
    expect(done.code).toBe(0);
    expect(done.stdout.trimEnd().split('\n').at(-1)).toBe(`active    ${id} v1 is live on local, approved by ${reviewerKeyId}: after the restart`);
    // One line when the service went away, one when it was back; nothing else on stderr.
    const notices = done.stderr.trimEnd().split('\n');
    expect(notices).toHaveLength(2);
    expect(notices[0]).toMatch(new RegExp(`^detflow: ${svc.url} is unreachable \\(.+\\); retrying for up to \\d+ s \\(--timeout\\), next in \\d+\\.\\d s$`));
    expect(notices[1]).toMatch(new RegExp(`^detflow: ${svc.url} answers again after \\d+ s; waiting goes on$`));
    expect(await activeVersions(id)).toEqual([1]);
    expect((await svc.request('GET', `/api/v1/approvals?rule_id=${id}`)).body.items).toHaveLength(1);
  });

  it('sees at once, when the service is back, a decision taken while it was away', async () => {
    const id = 'c2000000-0000-4000-8000-000000000003';
    const file = path.join(dir, 'decided-meanwhile.yml');
    fs.writeFileSync(file, processRule(id, { title: 'Decided while the job could not ask', image: '\\meanwhile.exe' }));
    const waiting = startCli(['deploy', file, '--target', 'local', '--wait', '--timeout', '120'], { env: requester, cwd: dir, timeoutMs: 150_000 });
    const [, approvalId] = await waiting.output(/^approval {2}([0-9a-f-]{36}) waits for a reviewer: /m);
    await pause(1000);
    await svc.apiDown();
    // Long enough for the job's pauses between attempts to have grown to seconds.
    await pause(8000);
    await svc.apiUp();
    // Decided and deployed within the job's pause: its next request finds the rule live.
    expect((await svc.request('POST', `/api/v1/approvals/${approvalId}/decision`, { token: reviewer.DETFLOW_TOKEN, body: { decision: 'approve' } })).status).toBe(200);
    const back = Date.now();
    const done = await waiting.exited;
    expect(done.code).toBe(0);
    // Not held for a long-poll on a status that had already changed (60 s).
    expect(Date.now() - back).toBeLessThan(20_000);
    expect(done.stdout.trimEnd().split('\n').at(-1)).toBe(`active    ${id} v1 is live on local, approved by ${reviewerKeyId}`);
  });

  it('sends a submission again, with its Idempotency-Key, when the service was down as the job started', async () => {
    const id = 'c2000000-0000-4000-8000-000000000002';
    expect((await svc.request('POST', '/api/v1/rules', { body: { rule: processRule(id, { title: 'Submitted during a restart', image: '\\late.exe' }) } })).status).toBe(201);
    await svc.apiDown();
    const waiting = startCli(['deploy', id, '--target', 'local', '--no-approval', '--wait', '--timeout', '60'], { env: requester, cwd: dir, timeoutMs: 90_000 });
    await pause(2000);
    await svc.apiUp();

    const done = await waiting.exited;
    expect(done.code).toBe(0);
    expect(done.stdout.trimEnd().split('\n').at(-1)).toBe(`active    ${id} v1 is live on local`);
    expect(done.stderr).toMatch(/is unreachable \(.*ECONNREFUSED.*\)/);
    const all = (await svc.request('GET', `/api/v1/deployments?rule_id=${id}`)).body.items;
    expect(all).toHaveLength(1);
  });

  it('gives up with exit 2 when the service stays away past --timeout', async () => {
    await svc.apiDown();
    try {
      const started = Date.now();
      const r = await runCli(['rollback', 'c2000000-0000-4000-8000-000000000001', '--target', 'local', '--reason', 'x', '--wait', '--timeout', '3'], {
        env: requester,
        cwd: dir,
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/is unreachable/);
      expect(r.stderr).toMatch(/still so when the --timeout of 3 s ran out\n$/);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await svc.apiUp();
    }
  });
});
