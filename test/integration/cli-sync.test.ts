import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { targets } from '../../db/schema';
import fs from 'node:fs';
import path from 'node:path';
import { run } from '../../cli/main';
import { runCli, startCliTestBed, stopCliTestBed } from '../support/cli';
import { createReviewerKey, lintBrokenRule, processRule, until, type TestService } from '../support/harness';

/** A rule whose selection names the revision, so each revision is a new version in the registry. */
const rule = (id: string, revision: number, title = 'Sync subject') => processRule(id, { title, level: 'medium', image: `\\sync-${revision}.exe` });

type Result = { code: number; stdout: string; stderr: string };

describe('detflow sync (the CLI against the real service)', () => {
  let svc: TestService;
  let root: string;
  let env: Record<string, string>;
  let reviewer: string;

  /**
   * The CLI's own entry point in this process (the binary is exercised once below): the service
   * under test runs in this process too, and keeps answering while the command awaits it.
   */
  function start(...args: string[]) {
    const seen = { stdout: '', stderr: '' };
    const done = run(['node', 'detflow', 'sync', ...args], { out: (s) => (seen.stdout += s), err: (s) => (seen.stderr += s), env }).then((code): Result => ({
      code,
      ...seen,
    }));
    return { done, seen };
  }
  const sync = (...args: string[]) => start(...args).done;

  /** A target of its own per test, so one test's deployments are not another's deletes. */
  async function newTarget(name: string): Promise<string> {
    const res = await svc.request('POST', '/api/v1/settings/targets', {
      body: { name, kind: 'local', environment: 'dev', cost_model: { currency: 'USD', price_per_gb_scanned: 0, triage_minutes_per_alert: 5, cost_per_analyst_hour: 60 } },
    });
    expect(res.status).toBe(201);
    return name;
  }

  /** A folder of rule files: name → text. */
  function folder(name: string, files: Record<string, string>): string {
    const dir = path.join(root, name);
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    }
    return dir;
  }

  const push = async (text: string): Promise<number> => {
    const res = await svc.request('POST', '/api/v1/rules', { body: { rule: text } });
    expect([200, 201]).toContain(res.status);
    return res.body.version;
  };

  /** Puts a version live on a target through the API, as an earlier deploy would have. */
  async function deployed(target: string, text: string): Promise<void> {
    const version = await push(text);
    const id = /^id: (\S+)$/m.exec(text)![1]!;
    const started = await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: id, target, version, approval_required: false } });
    expect(started.status).toBe(202);
    const done = await svc.request('GET', `/api/v1/deployments/${started.body.id}?wait=30`);
    expect(done.body.status).toBe('active');
  }

  const live = async (target: string) => {
    const items = (await svc.request('GET', `/api/v1/deployments?target=${target}&status=active&limit=500`)).body.items as Array<{
      rule_id: string;
      version: number;
      noise_budget: unknown;
    }>;
    return Object.fromEntries(items.map((d) => [d.rule_id, d.version]));
  };
  const versionCount = async (ruleId: string) => (await svc.request('GET', `/api/v1/rules/${ruleId}/versions`)).body.items.length as number;

  beforeAll(async () => {
    ({ svc, dir: root, env } = await startCliTestBed('detflow-cli-sync-'));
    reviewer = (await createReviewerKey(svc)).token;
  });
  afterAll(() => stopCliTestBed({ svc, dir: root }));

  it('plans create, update, delete and unchanged with a diff; applies them; then has nothing to do', async () => {
    const target = await newTarget('sync-plan');
    const [upd, same, gone, fresh] = [
      '5a000000-0000-4000-8000-000000000001',
      '5a000000-0000-4000-8000-000000000002',
      '5a000000-0000-4000-8000-000000000003',
      '5a000000-0000-4000-8000-000000000004',
    ];
    await deployed(target, rule(upd, 1, 'Updated'));
    await deployed(target, rule(same, 1, 'Same'));
    // Two versions deployed in turn: a rollback would bring v1 back, a sync delete takes the rule off.
    await deployed(target, rule(gone, 1, 'Gone'));
    await deployed(target, rule(gone, 2, 'Gone'));
    const dir = folder('plan', {
      'a/updated.yml': rule(upd, 2, 'Updated'),
      'same.yaml': rule(same, 1, 'Same'),
      'b/c/fresh.yml': rule(fresh, 1, 'Fresh'),
      'notes.txt': 'not a rule',
    });

    const plan = await sync(dir, '--target', target);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(3);
    expect(plan.stdout).toBe(
      [
        `create    ${fresh} a new version from ${dir}/b/c/fresh.yml: Fresh`,
        `update    ${upd} v1 → a new version from ${dir}/a/updated.yml: Updated`,
        `    --- ${upd}@v1 (deployed on ${target})`,
        `    +++ ${dir}/a/updated.yml`,
        '    @@ -7,5 +7,5 @@',
        '       product: windows',
        '     detection:',
        '       selection:',
        "    -    Image|endswith: '\\sync-1.exe'",
        "    +    Image|endswith: '\\sync-2.exe'",
        '       condition: selection',
        `delete    ${gone} v2: Gone`,
        'Plan: 1 to create, 1 to update, 1 to delete, 1 unchanged',
        `Run again with --apply to make ${target} match ${dir}.`,
        '',
      ].join('\n'),
    );
    // Planning changed nothing: no version stored, nothing deployed or removed.
    expect(await versionCount(upd)).toBe(1);
    expect(await live(target)).toEqual({ [upd]: 1, [same]: 1, [gone]: 2 });

    // Without --allow-delete the rest is applied and the delete is skipped: the target still differs (3).
    const applied = await sync(dir, '--target', target, '--apply', '--no-approval', '--wait', '--timeout', '45', '--budget', '100');
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(3);
    const lines = applied.stdout.split('\n');
    expect(lines).toContain(`stored    ${dir}/b/c/fresh.yml → ${fresh} v1`);
    expect(lines).toContain(`stored    ${dir}/a/updated.yml → ${upd} v2`);
    expect(lines).toContain(`skipped   delete of ${gone} on ${target}: deletes need --allow-delete`);
    expect(lines).toContain(`active    ${fresh} v1 is live on ${target}`);
    expect(lines).toContain(`active    ${upd} v2 is live on ${target}`);
    expect(lines).toContain(`Applied to ${target}: 2 done, 0 failed, 1 skipped`);
    expect(lines.indexOf('Plan: 1 to create, 1 to update, 1 to delete, 1 unchanged')).toBe(lines.indexOf(`Applying to ${target}:`) - 1);
    expect(await live(target)).toEqual({ [upd]: 2, [same]: 1, [gone]: 2, [fresh]: 1 });
    const [budgeted] = (await svc.request('GET', `/api/v1/deployments?target=${target}&rule_id=${fresh}&status=active`)).body.items;
    expect(budgeted.noise_budget).toEqual({ max_alerts_per_day: 100 });

    const onlyDelete = await sync(dir, '--target', target);
    expect(onlyDelete.code).toBe(3);
    expect(onlyDelete.stdout).toBe(
      `delete    ${gone} v2: Gone\nPlan: 0 to create, 0 to update, 1 to delete, 3 unchanged\nRun again with --apply to make ${target} match ${dir}.\n`,
    );

    const asJson = JSON.parse((await sync(dir, '--target', target, '--format', 'json')).stdout);
    expect(asJson).toMatchObject({ changes: true, valid: true, summary: { create: 0, update: 0, delete: 1, unchanged: 3 } });
    expect(asJson.rules.map((r: { action: string }) => r.action)).toEqual(['delete', 'unchanged', 'unchanged', 'unchanged']);
    expect(asJson.rules[0]).toMatchObject({
      rule_id: gone,
      title: 'Gone',
      file: null,
      version: null,
      new_version: false,
      diff: null,
      deployed: { version: 2, status: 'active' },
    });

    const deleted = await sync(dir, '--target', target, '--apply', '--allow-delete', '--reason', 'retired in review', '--wait', '--timeout', '45');
    expect(deleted.stderr).toBe('');
    expect(deleted.stdout).toContain(`delete    ${gone} v2 from ${target}: started (retired in review)\n`);
    expect(deleted.stdout).toContain(`removed   ${gone} from ${target}\n`);
    expect(deleted.code).toBe(0);
    expect(await live(target)).toEqual({ [upd]: 2, [same]: 1, [fresh]: 1 });
    const history = (await svc.request('GET', `/api/v1/deployments?target=${target}&rule_id=${gone}`)).body.items;
    expect(history.map((d: { version: number; status: string }) => [d.version, d.status])).toEqual([
      [2, 'rolled_back'],
      [1, 'superseded'],
    ]);
    expect(history[0].error).toBe('rolled back: retired in review');

    const nothing = await sync(dir, '--target', target);
    expect(nothing).toEqual({ code: 0, stderr: '', stdout: `Plan: 0 to create, 0 to update, 0 to delete, 3 unchanged\n${target} matches ${dir}: nothing to do.\n` });
    // Applying an empty plan does nothing and says so.
    const again = await sync(dir, '--target', target, '--apply', '--allow-delete');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(nothing.stdout);
  });

  it('deploys a version the registry already holds instead of storing the file again', async () => {
    const target = await newTarget('sync-registry');
    const id = '5a000000-0000-4000-8000-000000000011';
    await deployed(target, rule(id, 1));
    // A newer text was pushed (by CI, say) but never deployed: the file equals that version.
    expect(await push(rule(id, 2))).toBe(2);
    const dir = folder('registry', { 'r.yml': rule(id, 2) });

    const plan = await sync(dir, '--target', target, '--format', 'json');
    expect(plan.code).toBe(3);
    const doc = JSON.parse(plan.stdout);
    expect(doc).toMatchObject({ target, directory: dir, changes: true, valid: true, summary: { create: 0, update: 1, delete: 0, unchanged: 0 }, problems: [] });
    expect(doc.rules).toEqual([
      expect.objectContaining({
        action: 'update',
        rule_id: id,
        file: `${dir}/r.yml`,
        version: 2,
        new_version: false,
        deployed: expect.objectContaining({ version: 1, status: 'active' }),
        joining: null,
        lint_errors: [],
      }),
    ]);
    expect(doc.rules[0].diff).toContain(`--- ${id}@v1 (deployed on ${target})\n+++ ${dir}/r.yml\n`);

    const applied = await sync(dir, '--target', target, '--apply', '--no-approval', '--wait', '--timeout', '45', '--format', 'json');
    expect(applied.code).toBe(0);
    // One JSON document on stdout; the progress went to stderr, and nothing was stored.
    const result = JSON.parse(applied.stdout);
    expect(result.applied).toEqual([expect.objectContaining({ action: 'update', rule_id: id, outcome: 'done', version: 2, status: 'active', reason: null })]);
    expect(result.applied_summary).toBe(`Applied to ${target}: 1 done, 0 failed, 0 skipped`);
    expect(applied.stderr).not.toContain('stored');
    expect(applied.stderr).toContain(`deploy    ${id} v2 → ${target}: deploying`);
    expect(await versionCount(id)).toBe(2);

    // Going back to an older text deploys the old version: still no duplicate.
    fs.writeFileSync(path.join(dir, 'r.yml'), rule(id, 1));
    const back = await sync(dir, '--target', target, '--apply', '--no-approval', '--wait', '--timeout', '45');
    expect(back.stdout.split('\n')[0]).toBe(`update    ${id} v2 → v1 from ${dir}/r.yml: Sync subject`);
    expect(back.code).toBe(0);
    expect(await versionCount(id)).toBe(2);
    expect(await live(target)).toEqual({ [id]: 1 });
  });

  it('follows a deployment already waiting for approval instead of requesting a second one; exit 1 when it is rejected', async () => {
    const target = await newTarget('sync-approval');
    const [a, b] = ['5a000000-0000-4000-8000-000000000021', '5a000000-0000-4000-8000-000000000022'];
    const dir = folder('approval', { 'a.yml': rule(a, 1), 'b.yml': rule(b, 1) });

    const first = await sync(dir, '--target', target, '--apply', '--approval');
    expect(first.code).toBe(0);
    const approvals = [...first.stdout.matchAll(/^deploy {4}(\S+) v1 → sync-approval: pending_approval \(deployment [0-9a-f-]{36}, approval ([0-9a-f-]{36})\)$/gm)].map(
      (m) => ({ rule: m[1], id: m[2]! }),
    );
    expect(approvals.map((x) => x.rule)).toEqual([a, b]);
    expect(first.stdout).toContain(`2 approval(s) wait for a reviewer: detflow approve ${approvals[0]!.id}  |  detflow approve ${approvals[1]!.id}\n`);
    expect(first.stdout).toContain(`Applied to ${target}: 2 started, 0 failed, 0 skipped\n`);

    // Still to create (nothing is live yet), but on its way: the plan says so, and apply joins it.
    const plan = await sync(dir, '--target', target);
    expect(plan.code).toBe(3);
    expect(plan.stdout).toContain(`create    ${a} v1 from ${dir}/a.yml: Sync subject\n          already on its way: deployment `);

    // Approval is the default: no flag needed.
    const waiting = start(dir, '--target', target, '--apply', '--wait', '--timeout', '45');
    // Decided once the sync has joined both deployments and waits; each decision is on the approval the first apply requested.
    await until('the sync to join both deployments', async () => ((waiting.seen.stdout.match(/^joins /gm) ?? []).length === 2 ? true : undefined));
    const decide = (id: string, decision: string, comment: string) =>
      svc.request('POST', `/api/v1/approvals/${id}/decision`, { token: reviewer, body: { decision, comment } });
    expect((await decide(approvals[0]!.id, 'approve', 'ok')).status).toBe(200);
    expect((await decide(approvals[1]!.id, 'reject', 'too broad')).status).toBe(200);
    const done = await waiting.done;
    expect(done.code).toBe(1);
    expect(done.stdout).toMatch(new RegExp(`^joins {5}${a} v1: deployment [0-9a-f-]{36} is already pending_approval$`, 'm'));
    expect(done.stdout).toContain(`active    ${a} v1 is live on ${target}\n`);
    expect(done.stdout).toMatch(new RegExp(`^rejected  ${b} v1 is not live on ${target}: rejected by [0-9a-f-]{36}: too broad`, 'm'));
    expect(done.stdout).toContain(`Applied to ${target}: 1 done, 1 failed, 0 skipped\n`);
    for (const id of [a, b]) expect((await svc.request('GET', `/api/v1/approvals?rule_id=${id}`)).body.items).toHaveLength(1);
    expect(await live(target)).toEqual({ [a]: 1 });
  });

  it('lists each change still pending when --wait gives up (exit 2), and a later sync follows it', async () => {
    const target = await newTarget('sync-timeout');
    const [a, b] = ['5a000000-0000-4000-8000-0000000000a1', '5a000000-0000-4000-8000-0000000000a2'];
    // a is deployed without approval (goes live); b is then requested with approval and nobody decides.
    const first = await sync(folder('timeout-a', { 'a.yml': rule(a, 1) }), '--target', target, '--apply', '--no-approval', '--wait', '--timeout', '45');
    expect(first.code).toBe(0);
    const dir = folder('timeout-ab', { 'a.yml': rule(a, 1), 'b.yml': rule(b, 1) });
    const done = await sync(dir, '--target', target, '--apply', '--approval', '--wait', '--timeout', '2', '--format', 'json');
    expect(done.code).toBe(2);
    const doc = JSON.parse(done.stdout);
    expect(doc.applied).toEqual([
      expect.objectContaining({
        action: 'create',
        rule_id: b,
        outcome: 'pending',
        status: 'pending_approval',
        reason: expect.stringMatching(/^still pending_approval after 2 s \(approval [0-9a-f-]{36}\)$/),
      }),
    ]);
    expect(doc.applied_summary).toBe(`Applied to ${target}: 0 done, 0 failed, 0 skipped, 1 still pending (--timeout reached)`);
    expect(done.stderr).toMatch(new RegExp(`^pending {3}${b} v1 on ${target}: still pending_approval after 2 s \\(approval [0-9a-f-]{36}\\)$`, 'm'));
    // Decided later, the deployment goes live; a second sync follows it instead of requesting another.
    const approvalId = doc.applied[0].approval_id as string;
    expect((await svc.request('POST', `/api/v1/approvals/${approvalId}/decision`, { token: reviewer, body: { decision: 'approve', comment: 'late' } })).status).toBe(200);
    const again = await sync(dir, '--target', target, '--apply', '--approval', '--wait', '--timeout', '45');
    expect(again.code).toBe(0);
    expect(await live(target)).toEqual({ [a]: 1, [b]: 1 });
    expect((await svc.request('GET', `/api/v1/approvals?rule_id=${b}`)).body.items).toHaveLength(1);
  });

  it('refuses a folder with duplicate ids or a file that is not a Sigma rule, before asking the service anything', async () => {
    const id = '5a000000-0000-4000-8000-000000000031';
    const dir = folder('duplicates', {
      'one.yml': rule(id, 1),
      'two.yml': rule(id.toUpperCase(), 2),
      'bad.yml': 'title: [unclosed\n',
      'noid.yml': 'title: No id\nlogsource: {product: windows}\n',
    });
    // The target does not exist: the folder is refused before that could matter.
    const r = await sync(dir, '--target', 'no-such-target', '--apply');
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${dir}/bad.yml: error The rule is not a Sigma YAML document: `));
    expect(lines[1]).toBe(`${dir}/noid.yml: error The rule cannot be stored: the rule needs an \`id\` that is a UUID`);
    expect(lines[2]).toBe(`${dir}/one.yml: error rule id ${id} is also in ${dir}/two.yml`);
    expect(lines[3]).toBe(`${dir}/two.yml: error rule id ${id} is also in ${dir}/one.yml`);
    expect(lines[4]).toBe('4 file(s) cannot be synced: nothing was planned or applied.');
    expect((await svc.request('GET', `/api/v1/rules/${id}`)).status).toBe(404);

    const json = await sync(dir, '--target', 'no-such-target', '--format', 'json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      valid: false,
      problems: expect.arrayContaining([{ file: `${dir}/one.yml`, error: `rule id ${id} is also in ${dir}/two.yml` }]),
    });
  });

  it('offers to restore a live rule the target drifted from, restores it on --apply, and reports objects it did not deploy', async () => {
    const target = await newTarget('sync-drift');
    const kept = '5a000000-0000-4000-8000-0000000000d1';
    await deployed(target, rule(kept, 1, 'Kept'));
    const dir = folder('drift', { 'kept.yml': rule(kept, 1, 'Kept') });
    expect((await sync(dir, '--target', target)).code).toBe(0);

    // Out of band: the rule is taken off the target, and an object detflow did not deploy appears under its naming scheme.
    const [live] = (await svc.request('GET', `/api/v1/deployments?target=${target}&status=active`)).body.items as Array<{ id: string }>;
    await svc.siem.local.undeploy('default', live!.id);
    const [row] = await svc.database.db.select().from(targets).where(eq(targets.name, target));
    const stray = 'c0ffee00-0000-4000-8000-000000000000';
    await svc.siem.local.deploy({ deploymentId: randomUUID(), tenantId: 'default', targetId: row!.id, rule: { ruleId: stray, version: 1, query: 'false' } });
    const kinds = (await svc.request('POST', `/api/v1/settings/targets/${target}/drift-check`)).body.items.map((d: { kind: string; rule_id: string }) => [d.kind, d.rule_id]);
    expect(kinds).toEqual([
      ['missing', kept],
      ['unmanaged', stray],
    ]);

    const plan = await sync(dir, '--target', target);
    expect(plan.code).toBe(3);
    expect(plan.stdout).toContain(`restore   ${kept} v1 from ${dir}/kept.yml: the target drifted from it; apply puts it back as deployed\n          drift: missing: `);
    expect(plan.stdout).toContain(`unmanaged ${stray}: ${stray} follows detflow's naming scheme but no live deployment accounts for it`);
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 1 to restore, 0 to delete, 0 unchanged\n');

    const applied = await sync(dir, '--target', target, '--apply');
    expect(applied.stdout).toContain(`restored  ${kept} v1 on ${target}\n`);
    expect(applied.code).toBe(0);
    expect((await svc.request('GET', `/api/v1/settings/targets/${target}/drift`)).body.items).toEqual([expect.objectContaining({ kind: 'unmanaged' })]);
  });

  it('refuses to apply rules with lint errors for the target, naming them', async () => {
    const target = await newTarget('sync-lint');
    const [good, broken] = ['5a000000-0000-4000-8000-000000000041', '5a000000-0000-4000-8000-000000000042'];
    const dir = folder('lint', { 'good.yml': rule(good, 1), 'broken.yml': lintBrokenRule(broken, 'Broken for the target') });
    const r = await sync(dir, '--target', target, '--apply');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^create {4}${broken} a new version from ${dir}/broken.yml: Broken for the target\n {10}${dir}/broken.yml:\\d+:\\d+: error \\[`, 'm'));
    expect(r.stdout).toContain(`The folder cannot be applied: 1 rule(s) with lint errors for ${target}.\nNothing was applied.\n`);
    expect(await live(target)).toEqual({});
    expect((await svc.request('GET', `/api/v1/rules/${good}`)).status).toBe(404);
  });

  it('exits 2 for an unknown target and for misuse', async () => {
    const dir = folder('usage', { 'r.yml': rule('5a000000-0000-4000-8000-000000000051', 1) });
    const unknown = await sync(dir, '--target', 'no-such-target');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No target no-such-target in this tenant');

    const notApply = await sync(dir, '--target', 'local', '--allow-delete', '--wait');
    expect(notApply.code).toBe(2);
    expect(notApply.stderr).toContain('--allow-delete, --wait apply with --apply');
    const noApproval = await sync(dir, '--target', 'local', '--no-approval');
    expect(noApproval.code).toBe(2);
    expect(noApproval.stderr).toContain('--no-approval applies with --apply');
    const file = await sync(path.join(dir, 'r.yml'), '--target', 'local');
    expect(file.code).toBe(2);
    expect(file.stderr).toContain('is not a directory');
    fs.mkdirSync(path.join(root, 'empty'));
    const empty = await sync(path.join(root, 'empty'), '--target', 'local', '--apply', '--allow-delete');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('No .yml/.yaml rule files in');
    expect((await sync(dir)).code).toBe(2);
  });

  it('runs as the real binary: the plan’s exit code reaches the shell', async () => {
    const target = await newTarget('sync-binary');
    const dir = folder('binary', { 'r.yml': rule('5a000000-0000-4000-8000-000000000061', 1) });
    const r = await runCli(['sync', dir, '--target', target], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('Plan: 1 to create, 0 to update, 0 to delete, 0 unchanged\n');
  });
});
