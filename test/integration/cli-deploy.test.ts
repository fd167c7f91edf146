import fs from 'node:fs';
import path from 'node:path';
import { cliEnv, runCli, startCli, startCliTestBed, stopCliTestBed, type CliEnv } from '../support/cli';
import { createReviewerKey, processRule, type TestService } from '../support/harness';

/** A rule whose selection names the revision, so each revision is a new version in the registry. */
const rule = (id: string, revision: number) => processRule(id, { title: `CLI deploy subject (revision ${revision})`, level: 'medium', image: `\\cli-deploy-${revision}.exe` });

const cli = (args: string[], env: CliEnv, cwd: string) => runCli(args, { env, cwd });
/** The binary left running in the background, as a CI job waiting for a reviewer. */
const background = (args: string[], env: CliEnv, cwd: string) => startCli(args, { env, cwd, timeoutMs: 50_000 });

describe('detflow deploy, approve/reject, rollback (the real binary against the real service)', () => {
  let svc: TestService;
  let dir: string;
  let requester: Record<string, string>;
  let reviewer: Record<string, string>;
  let reviewerKeyId: string;
  const write = (id: string, revision: number) => {
    const file = path.join(dir, `${id}-r${revision}.yml`);
    fs.writeFileSync(file, rule(id, revision));
    return file;
  };
  const activeVersions = async (ruleId: string) =>
    ((await svc.request('GET', `/api/v1/deployments?rule_id=${ruleId}&target=local&status=active`)).body.items as Array<{ version: number }>).map((d) => d.version);

  beforeAll(async () => {
    // The bootstrap token requests changes; a reviewer needs a token of its own, as the service refuses self-approval.
    ({ svc, dir, env: requester } = await startCliTestBed('detflow-cli-deploy-'));
    const key = await createReviewerKey(svc);
    reviewer = cliEnv(svc, key.token);
    reviewerKeyId = key.id;
  });
  afterAll(() => stopCliTestBed({ svc, dir }));

  it('pushes a rule file and deploys it with --no-approval: exit 0 once the rule is live', async () => {
    const id = 'c1000000-0000-4000-8000-000000000001';
    const file = write(id, 1);
    const r = await cli(['deploy', file, '--target', 'local', '--no-approval', '--wait'], requester, dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`stored    ${file} → ${id} v1`);
    expect(lines[1]).toMatch(new RegExp(`^deploy    ${id} v1 → local: deploying \\(deployment [0-9a-f-]{36}\\)$`));
    expect(lines.at(-1)).toBe(`active    ${id} v1 is live on local`);
    // No approval was asked for, so none is announced.
    expect(r.stdout).not.toContain('approval');
    expect(await activeVersions(id)).toEqual([1]);
  });

  it('waits for a reviewer by default: self-approval exits 2, the reviewer approves, the waiting deploy exits 0, a second decision exits 1', async () => {
    const id = 'c1000000-0000-4000-8000-000000000002';
    const file = write(id, 1);
    // No approval flag: a deploy asks for a reviewer's decision unless told --no-approval.
    const waiting = background(['deploy', file, '--target', 'local', '--budget', '50', '--wait', '--timeout', '45'], requester, dir);
    const [, approvalId, link] = await waiting.output(/^approval  ([0-9a-f-]{36}) waits for a reviewer: (\S+)$/m);
    // The link is the service's address for the approval, so a reviewer can open it from the CI log.
    expect(link).toBe(`${svc.url}/api/v1/approvals/${approvalId}`);
    await expect(waiting.output(new RegExp(`decide with: detflow approve ${approvalId} `))).resolves.toBeDefined();

    const own = await cli(['approve', approvalId!], requester, dir);
    expect(own.code).toBe(2);
    expect(own.stderr).toContain(`Cannot approve ${approvalId}: The token that requested a change may not decide it`);
    // The refused attempt changed nothing: the approval still waits.
    expect((await svc.request('GET', `/api/v1/approvals/${approvalId}`)).body.status).toBe('pending');

    const approved = await cli(['approve', approvalId!, '--comment', 'reviewed the diff'], reviewer, dir);
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toBe(`approved ${approvalId}: ${id} v1 → local (reviewed the diff)\n`);

    const done = await waiting.exited;
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`deploy    ${id} v1 → local: pending_approval`);
    // The wait went through the decision (the service holds the request while the approval is pending) and says so.
    expect(done.stdout).toContain(`approved  ${approvalId} by ${reviewerKeyId} (reviewed the diff): deploying\n`);
    expect(done.stdout.trimEnd().split('\n').at(-1)).toBe(`active    ${id} v1 is live on local, approved by ${reviewerKeyId}: reviewed the diff`);
    expect(await activeVersions(id)).toEqual([1]);
    // The budget reached the service with the deployment.
    const [live] = (await svc.request('GET', `/api/v1/deployments?rule_id=${id}&status=active`)).body.items;
    expect(live.noise_budget).toEqual({ max_alerts_per_day: 50 });

    const again = await cli(['reject', approvalId!, '--comment', 'too late'], reviewer, dir);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe(`not decided ${approvalId}: This approval is already approved\n`);
  });

  it('a re-run deploy job asks for no second approval, and a deploy of the live version changes nothing', async () => {
    const id = 'c1000000-0000-4000-8000-000000000009';
    const file = write(id, 1);
    const first = await cli(['deploy', file, '--target', 'local'], requester, dir);
    expect(first.code).toBe(0);
    const [, approvalId] = /^approval {2}([0-9a-f-]{36}) waits for a reviewer/m.exec(first.stdout)!;

    // The same job again (a retried pipeline): the same file, rule, version and target.
    const again = await cli(['deploy', file, '--target', 'local'], requester, dir);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`unchanged ${file} → ${id} v1\n`);
    expect(again.stdout).toContain(
      `reuses    approval ${approvalId}: an equal change (same rule, version, target and budget) already waited for it; no second approval was requested\n`,
    );
    expect(again.stdout).toContain(`approval  ${approvalId} waits for a reviewer: ${svc.url}/api/v1/approvals/${approvalId}\n`);
    expect((await svc.request('GET', `/api/v1/approvals?rule_id=${id}`)).body.items.map((a: { id: string }) => a.id)).toEqual([approvalId]);

    expect((await cli(['approve', approvalId!], reviewer, dir)).code).toBe(0);
    const [deployment] = (await svc.request('GET', `/api/v1/deployments?rule_id=${id}`)).body.items;
    expect((await svc.request('GET', `/api/v1/deployments/${deployment.id}?wait=30`)).body.status).toBe('active');

    // Once live, the job has nothing to do: exit 0, no approval, no run.
    const live = await cli(['deploy', file, '--target', 'local', '--wait', '--timeout', '30'], requester, dir);
    expect(live.stderr).toBe('');
    expect(live.code).toBe(0);
    expect(live.stdout.trimEnd().split('\n').at(-1)).toBe(`unchanged ${id} v1 is already live on local (deployment ${deployment.id}): nothing to deploy`);
    const json = await cli(['deploy', id, '--target', 'local', '--format', 'json'], requester, dir);
    expect(JSON.parse(json.stdout)).toMatchObject({ live: true, unchanged: true, approval: null, deployment: { id: deployment.id, status: 'active' } });
    expect((await svc.request('GET', `/api/v1/approvals?rule_id=${id}`)).body.items).toHaveLength(1);
    expect((await svc.request('GET', `/api/v1/deployments?rule_id=${id}`)).body.items).toHaveLength(1);
  });

  it('exits 1 from the waiting deploy when the reviewer rejects, saying who and why', async () => {
    const id = 'c1000000-0000-4000-8000-000000000003';
    const waiting = background(['deploy', write(id, 1), '--target', 'local', '--approval', '--wait', '--timeout', '45'], requester, dir);
    const [, approvalId] = await waiting.output(/^approval  ([0-9a-f-]{36}) /m);
    const rejected = await cli(['reject', approvalId!, '--comment', 'matches every admin tool'], reviewer, dir);
    expect(rejected.code).toBe(0);
    expect(rejected.stdout).toBe(`rejected ${approvalId}: ${id} v1 → local (matches every admin tool)\n`);
    const done = await waiting.exited;
    expect(done.code).toBe(1);
    expect(done.stdout.trimEnd().split('\n').at(-1)).toBe(`rejected  ${id} v1 is not live on local: the approval was rejected by ${reviewerKeyId}: matches every admin tool`);
    expect(await activeVersions(id)).toEqual([]);
  });

  it('reports changes requested as JSON on stdout, with the progress on stderr, and exit 1', async () => {
    const id = 'c1000000-0000-4000-8000-000000000004';
    const file = write(id, 1);
    // Stored first, so the deploy below names the rule by id.
    expect((await cli(['push', file], requester, dir)).code).toBe(0);
    const waiting = background(['deploy', id, '--version', '1', '--target', 'local', '--approval', '--wait', '--timeout', '45', '--format', 'json'], requester, dir);
    // With --format json nothing but the final document goes to stdout, so wait for the deployment through the API.
    let approvalId: string | undefined;
    for (let i = 0; i < 100 && !approvalId; i++) {
      const [pending] = (await svc.request('GET', `/api/v1/approvals?rule_id=${id}&status=pending`)).body.items;
      approvalId = pending?.id;
      if (!approvalId) await new Promise((r) => setTimeout(r, 100));
    }
    expect((await cli(['request-changes', approvalId!, '--comment', 'narrow the path', '--format', 'json'], reviewer, dir)).code).toBe(0);
    const done = await waiting.exited;
    expect(done.code).toBe(1);
    const report = JSON.parse(done.stdout);
    expect(report).toMatchObject({
      live: false,
      deployment: { rule_id: id, version: 1, status: 'changes_requested' },
      approval: { id: approvalId, status: 'changes_requested', comment: 'narrow the path' },
    });
    expect(report.reason).toBe(`changes were requested by ${reviewerKeyId}: narrow the path`);
    expect(done.stderr).toContain(`approval  ${approvalId} waits for a reviewer`);
  });

  it('rolls back to the version live before with exit 0, and takes a rule with no earlier version off the target', async () => {
    const id = 'c1000000-0000-4000-8000-000000000005';
    expect((await cli(['deploy', write(id, 1), '--target', 'local', '--no-approval', '--wait'], requester, dir)).code).toBe(0);
    const second = await cli(['deploy', write(id, 2), '--target', 'local', '--no-approval', '--wait', '--format', 'json'], requester, dir);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ live: true, pushed: { rule_id: id, version: 2, created: true }, deployment: { version: 2, status: 'active' } });
    expect(await activeVersions(id)).toEqual([2]);

    const r = await cli(['rollback', id, '--target', 'local', '--reason', 'too noisy', '--wait'], requester, dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`rollback  ${id} on local: v2 → v1 (too noisy)`);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`active    ${id} v1 is live again on local (v2 rolled back)`);
    expect(await activeVersions(id)).toEqual([1]);

    // A rule deployed once has nothing to go back to: the rollback retires it.
    const once = 'c1000000-0000-4000-8000-000000000006';
    expect((await cli(['deploy', write(once, 1), '--target', 'local', '--no-approval', '--wait'], requester, dir)).code).toBe(0);
    const removed = await cli(['rollback', once, '--target', 'local', '--reason', 'false positives', '--wait', '--format', 'json'], requester, dir);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({
      from_version: 1,
      restores_version: null,
      completed: true,
      deployment: { status: 'rolled_back', error: 'rolled back: false positives' },
    });
    expect(await activeVersions(once)).toEqual([]);
  });

  it('exits 1 when nothing is deployed to roll back, and 2 for a misuse', async () => {
    const id = 'c1000000-0000-4000-8000-000000000007';
    expect((await cli(['push', write(id, 1)], requester, dir)).code).toBe(0);
    const r = await cli(['rollback', id, '--target', 'local', '--reason', 'just in case'], requester, dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`not rolled back ${id} on local: Rule ${id} is not deployed on local; there is nothing to roll back\n`);

    const noReason = await cli(['rollback', id, '--target', 'local'], requester, dir);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain("required option '--reason <text>' not specified");
    const unknownApproval = await cli(['approve', '00000000-0000-4000-8000-000000000000'], reviewer, dir);
    expect(unknownApproval.code).toBe(2);
    expect(unknownApproval.stderr).toContain('No approval 00000000-0000-4000-8000-000000000000 in this tenant');
    const timeoutAlone = await cli(['deploy', id, '--target', 'local', '--timeout', '5'], requester, dir);
    expect(timeoutAlone.code).toBe(2);
    expect(timeoutAlone.stderr).toContain('--timeout applies with --wait');
  });

  it('exits 2 when --wait runs out of time, with the deployment still waiting for its decision', async () => {
    const id = 'c1000000-0000-4000-8000-000000000008';
    const r = await cli(['deploy', write(id, 1), '--target', 'local', '--approval', '--wait', '--timeout', '2'], requester, dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`^detflow: Gave up after 2 s: deployment [0-9a-f-]{36} of ${id} v1 on local is still pending_approval \\(approval [0-9a-f-]{36}\\)\\n$`),
    );
  });
});
