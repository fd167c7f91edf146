/**
 * Records the Temporal histories that `replay-histories.test.ts` replays.
 *
 *   cd /work/main && npx tsx test/replay/record-histories.ts
 *
 * It starts the whole service the way the integration tests do (a Temporal dev server and the
 * workflow bundle through the jest global setup, then `startTestService()`: PGlite database, worker,
 * API on loopback), drives every workflow through its main paths over HTTP, and writes each run's
 * history to `test/replay/histories/<workflow>-<path>.json` (the standard JSON form of a history, as
 * `historyToJSON` writes it; see `history-json.ts` for why through a local copy). The first event
 * names the workflow type and id; replay uses that id, because the workflows derive their child
 * workflow ids from it.
 *
 * Run it when a new workflow or path is added here: it writes the histories of paths that have none
 * yet and keeps the committed ones, which were recorded by earlier code — replaying those is what
 * proves a change safe for runs already in flight. After a deliberate, non-backward-compatible
 * change (one not behind `patched()`), `--overwrite` replaces every history. Files are written only
 * when every path recorded; a failure leaves the committed files untouched. Takes under a minute.
 * `TEST_LOG_LEVEL=info` shows the service's logs.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { DetectionOutcome } from '../../activities/detection';
import globalSetup from '../support/global-setup';
import globalTeardown from '../support/global-teardown';
import { createApiKey, detectEverySecond, imageRule as rule, startTestService, type TestResponse, type TestService, until } from '../support/harness';
import { historyToJSON } from './history-json';

const HISTORIES_DIR = path.join(__dirname, 'histories');

type Recorded = { workflowId: string; runId: string | undefined };

const DEPLOY_RULE = 'e1000000-0000-4000-8000-000000000001';
const DETECT_RULE = 'e1000000-0000-4000-8000-000000000002';
const BUDGET_RULE = 'e1000000-0000-4000-8000-000000000003';
const ROLLBACK_RULE = 'e1000000-0000-4000-8000-000000000004';
const REMOVE_RULE = 'e1000000-0000-4000-8000-000000000005';
const DEMOTE_RULE = 'e1000000-0000-4000-8000-000000000006';
const AUTO_ROLLBACK_RULE = 'e1000000-0000-4000-8000-000000000007';
const UNRUNNABLE_RULE = 'e1000000-0000-4000-8000-000000000008';
const DRIFT_RULE = 'e1000000-0000-4000-8000-000000000009';
const SETTINGS_RULE = 'e1000000-0000-4000-8000-00000000000a';
// Short, so a delivery is given up within a second; every other delivery succeeds on its second attempt.
const RECORDING_RETRY = { firstSeconds: 0.1, maxSeconds: 0.2, maxAttempts: 3 };
let seq = 0;
const event = (image: string, at = Date.now()) =>
  JSON.stringify({ '@timestamp': new Date(at).toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} run ${++seq}`, Computer: 'host-1' });

function expectStatus(res: TestResponse, status: number, what: string): TestResponse {
  if (res.status !== status) throw new Error(`${what}: expected HTTP ${status}, got ${res.status} ${res.text}`);
  return res;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });
}

/**
 * A loopback webhook receiver that answers 503 to the first request of every delivery and 200 to
 * the next, so each Notify run goes through one failed attempt and a retry before it is delivered.
 */
async function startFlakyReceiver(): Promise<{ port: number; failing: { all: boolean }; close(): Promise<void> }> {
  const seen = new Set<string>();
  // While set, every request fails: a delivery runs out of attempts and is given up.
  const failing = { all: false };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const delivery = String(req.headers['x-detflow-delivery']);
      res.statusCode = seen.has(delivery) && !failing.all ? 200 : 503;
      seen.add(delivery);
      res.end();
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    port,
    failing,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function record(svc: TestService): Promise<Map<string, Recorded>> {
  const runs = new Map<string, Recorded>();
  const ingest = async (lines: string[]) => {
    const res = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expectStatus(res, 200, 'ingest');
  };

  // Every event subscribed (the default), delivered to a receiver that fails each delivery once:
  // the Notify children of every run below deliver after a retry.
  const receiver = await startFlakyReceiver();
  try {
    expectStatus(
      await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${receiver.port}/hook`, secret: 'a-webhook-secret-of-some-length' } }),
      200,
      'webhook settings',
    );
    // Scheduled detection every second, so the DetectionRun paths below come within seconds.
    await detectEverySecond(svc);
    const requester = (await createApiKey(svc, svc.token, { name: 'ci', permissions: ['deploy', 'rules:read', 'rules:write'], principal: 'ci' })).token;
    const reviewer = (await createApiKey(svc, svc.token, { name: 'reviewer', permissions: ['approve', 'rules:read'], principal: 'reviewer' })).token;
    for (const [id, image] of [
      [DEPLOY_RULE, 'deployed.exe'],
      [DETECT_RULE, 'detected.exe'],
      [BUDGET_RULE, 'noisy.exe'],
    ] as const) {
      expectStatus(await svc.request('POST', '/api/v1/rules', { body: { rule: rule(id, image) } }), 201, `rule ${image}`);
    }
    // Past matches, so the impact summaries and the replay below have something to count.
    await ingest(Array.from({ length: 6 }, (_, i) => event('deployed.exe', Date.now() - (i + 1) * 3_600_000)));

    // DeployWithApproval -----------------------------------------------------------------------
    const deploy = async (extra: Record<string, unknown>) =>
      expectStatus(await svc.request('POST', '/api/v1/rules/deploy', { token: requester, body: { rule_id: DEPLOY_RULE, target: 'local', ...extra } }), 202, 'deploy').body;
    const finished = async (workflowId: string) => svc.client.workflow.getHandle(workflowId).result();
    const approvalIdOf = (d: any) => String(d.links.approval).split('/').at(-1)!;
    const decide = async (approvalId: string, decision: string) =>
      expectStatus(
        await svc.request('POST', `/api/v1/approvals/${approvalId}/decision`, { token: reviewer, body: { decision, comment: `recorded ${decision}` } }),
        200,
        decision,
      );
    // Decided after the impact is recorded, so the decision lands while the run waits for it.
    const impactRecorded = (approvalId: string) =>
      until('the impact summary', async () => ((await svc.request('GET', `/api/v1/approvals/${approvalId}`)).body?.impact ? true : undefined));

    const direct = await deploy({ approval_required: false });
    await expectResult(finished(direct.workflow_id), { status: 'active' }, 'direct deploy');
    runs.set('deploy-with-approval-direct', { workflowId: direct.workflow_id, runId: undefined });

    for (const [decision, path, status] of [
      ['approve', 'approved', 'active'],
      ['reject', 'rejected', 'rejected'],
      ['request_changes', 'changes-requested', 'changes_requested'],
    ] as const) {
      // A budget of its own: the version is live already, and an equal deploy would change nothing.
      const d = await deploy({ approval_required: true, noise_budget: { max_alerts_per_day: 1000 + status.length * 10 + decision.length } });
      await impactRecorded(approvalIdOf(d));
      await decide(approvalIdOf(d), decision);
      await expectResult(finished(d.workflow_id), { status }, `deploy ${path}`);
      runs.set(`deploy-with-approval-${path}`, { workflowId: d.workflow_id, runId: undefined });
    }
    // Since the decision-recorded-first patch, a decided run carries its marker (the histories
    // above, recorded before it, replay the unpatched path).
    const patchedRun = await deploy({ approval_required: true, noise_budget: { max_alerts_per_day: 2000 } });
    await impactRecorded(approvalIdOf(patchedRun));
    await decide(approvalIdOf(patchedRun), 'approve');
    await expectResult(finished(patchedRun.workflow_id), { status: 'active' }, 'deploy approved, decision recorded first');
    runs.set('deploy-with-approval-approved-recorded-first', { workflowId: patchedRun.workflow_id, runId: undefined });
    // A rule that cannot run on the target (a backreference, which RE2 lacks): no impact, the change is abandoned.
    const unrunnable = rule(UNRUNNABLE_RULE, 'never.exe').replace(/Image\|endswith: .*/, "CommandLine|re: '(a)\\1'");
    expectStatus(await svc.request('POST', '/api/v1/rules', { body: { rule: unrunnable } }), 201, 'unrunnable rule');
    const abandoned = expectStatus(
      await svc.request('POST', '/api/v1/rules/deploy', { token: requester, body: { rule_id: UNRUNNABLE_RULE, target: 'local', approval_required: true } }),
      202,
      'deploy unrunnable',
    ).body;
    await expectResult(finished(abandoned.workflow_id), { status: 'failed' }, 'deploy abandoned');
    runs.set('deploy-with-approval-impact-failed', { workflowId: abandoned.workflow_id, runId: undefined });

    const expiring = await deploy({ approval_required: true, approval_expires_in: 'PT2S', noise_budget: { max_alerts_per_day: 3000 } });
    await expectResult(finished(expiring.workflow_id), { status: 'expired' }, 'deploy expired');
    runs.set('deploy-with-approval-expired', { workflowId: expiring.workflow_id, runId: undefined });

    // ApplyRetention --------------------------------------------------------------------------------
    const retentionId = `retention/recorded-${Date.now()}`;
    await svc.client.workflow.execute('ApplyRetention', { taskQueue: svc.taskQueue, workflowId: retentionId, args: [] });
    runs.set('apply-retention-daily', { workflowId: retentionId, runId: undefined });

    // Rollback ------------------------------------------------------------------------------------
    // A rule with versions 1 and 2 deployed rolls back to 1; a rule with only version 1 is removed.
    const deployRevision = async (ruleId: string, revision: number) => {
      const pushed = await svc.request('POST', '/api/v1/rules', { body: { rule: rule(ruleId, 'rolled.exe', revision) } });
      if (pushed.body?.version !== revision) throw new Error(`pushing revision ${revision} should make version ${revision}: ${pushed.status} ${pushed.text}`);
      const d = expectStatus(
        await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: ruleId, target: 'local', approval_required: false, version: revision } }),
        202,
        'deploy',
      ).body;
      await expectResult(finished(d.workflow_id), { status: 'active' }, `deploy ${ruleId} revision ${revision}`);
    };
    await deployRevision(ROLLBACK_RULE, 1);
    await deployRevision(ROLLBACK_RULE, 2);
    await deployRevision(REMOVE_RULE, 1);
    for (const [path, ruleId, expected] of [
      ['restored', ROLLBACK_RULE, { status: 'completed', restored_version: 1, removed: false }],
      ['removed', REMOVE_RULE, { status: 'completed', restored_version: null, removed: true }],
    ] as const) {
      const r = expectStatus(
        await svc.request('POST', '/api/v1/rules/rollback', { body: { rule_id: ruleId, target: 'local', reason: `recorded ${path}` } }),
        202,
        `rollback ${path}`,
      ).body;
      await expectResult(finished(r.workflow_id), expected, `rollback ${path}`);
      runs.set(`rollback-${path}`, { workflowId: r.workflow_id, runId: undefined });
    }

    // Notify --------------------------------------------------------------------------------------
    const test = expectStatus(await svc.request('POST', '/api/v1/settings/webhook/test'), 202, 'webhook test').body;
    const notified = (await finished(test.workflow_id)) as { delivered: boolean; attempts: number };
    if (!notified.delivered || notified.attempts < 2) throw new Error(`the test notification should deliver on its second attempt: ${JSON.stringify(notified)}`);
    runs.set('notify-delivered-after-retry', { workflowId: test.workflow_id, runId: undefined });
    // Given up after the configured attempts (RECORDING_RETRY), then re-sent through the API.
    receiver.failing.all = true;
    const doomed = expectStatus(await svc.request('POST', '/api/v1/settings/webhook/test'), 202, 'webhook test').body;
    const givenUp = (await finished(doomed.workflow_id)) as { deliveryId: string; delivered: boolean };
    if (givenUp.delivered) throw new Error('the test notification should have been given up');
    runs.set('notify-given-up', { workflowId: doomed.workflow_id, runId: undefined });
    receiver.failing.all = false;
    const resent = expectStatus(await svc.request('POST', `/api/v1/settings/webhook/deliveries/${givenUp.deliveryId}/redeliver`), 202, 'redeliver').body;
    await expectResult(finished(resent.workflow_id), { delivered: true }, 'redeliver');
    runs.set('redeliver-delivered', { workflowId: resent.workflow_id, runId: undefined });

    // DetectionRun (started by the deployment's schedule) -----------------------------------------
    const detectionDeploy = expectStatus(
      await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: DETECT_RULE, target: 'local', approval_required: false } }),
      202,
      'deploy',
    ).body;
    await expectResult(finished(detectionDeploy.workflow_id), { status: 'active' }, 'detection deploy');
    runs.set('detection-run-nothing-new', await detectionRun(svc, DETECT_RULE, (o) => o.skipped === null && o.scanned === 0 && o.raised === 0));
    await ingest([event('detected.exe'), event('other.exe'), event('detected.exe')]);
    runs.set('detection-run-alerts', await detectionRun(svc, DETECT_RULE, (o) => o.raised > 0 && !o.budgetExceededNow));

    const budgetDeploy = expectStatus(
      await svc.request('POST', '/api/v1/rules/deploy', {
        body: { rule_id: BUDGET_RULE, target: 'local', approval_required: false, noise_budget: { max_alerts_per_day: 2 } },
      }),
      202,
      'deploy with a budget',
    ).body;
    await expectResult(finished(budgetDeploy.workflow_id), { status: 'active' }, 'budget deploy');
    await ingest(Array.from({ length: 5 }, () => event('noisy.exe')));
    runs.set('detection-run-noise-budget-exceeded', await detectionRun(svc, BUDGET_RULE, (o) => o.budgetExceededNow && o.suppressed > 0));

    // on_exceed: demote (the run that demotes, then a run in shadow) and rollback (the run that
    // starts the Rollback child, and that Rollback run).
    const deployWithBudget = async (ruleId: string, image: string, revision: number, noiseBudget?: Record<string, unknown>) => {
      expectStatus(await svc.request('POST', '/api/v1/rules', { body: { rule: rule(ruleId, image, revision) } }), 201, `rule ${image} revision ${revision}`);
      const d = expectStatus(
        await svc.request('POST', '/api/v1/rules/deploy', {
          body: { rule_id: ruleId, target: 'local', approval_required: false, version: revision, ...(noiseBudget ? { noise_budget: noiseBudget } : {}) },
        }),
        202,
        'deploy',
      ).body;
      await expectResult(finished(d.workflow_id), { status: 'active' }, `deploy ${ruleId} revision ${revision}`);
      return d.id as string;
    };
    await deployWithBudget(DEMOTE_RULE, 'demoted.exe', 1, { max_alerts_per_day: 2, on_exceed: 'demote' });
    await ingest(Array.from({ length: 5 }, () => event('demoted.exe')));
    runs.set('detection-run-demoted', await detectionRun(svc, DEMOTE_RULE, (o) => o.demoted === true));
    await ingest([event('demoted.exe')]);
    runs.set('detection-run-in-shadow', await detectionRun(svc, DEMOTE_RULE, (o) => o.mode === 'shadow' && o.matches > 0));
    await deployWithBudget(AUTO_ROLLBACK_RULE, 'autorollback.exe', 1);
    const noisy = await deployWithBudget(AUTO_ROLLBACK_RULE, 'autorollback.exe', 2, { max_alerts_per_day: 1, on_exceed: 'rollback' });
    await ingest(Array.from({ length: 3 }, () => event('autorollback.exe')));
    runs.set('detection-run-budget-rollback', await detectionRun(svc, AUTO_ROLLBACK_RULE, (o) => o.budgetExceededNow && o.onExceed === 'rollback'));
    const budgetRollbackId = `rollback/default/${AUTO_ROLLBACK_RULE}/local/noise-budget-${noisy}`;
    await expectResult(finished(budgetRollbackId), { status: 'completed', restored_version: 1 }, 'rollback by the noise budget');
    runs.set('rollback-by-noise-budget', { workflowId: budgetRollbackId, runId: undefined });

    // Replay --------------------------------------------------------------------------------------
    const window = { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString() };
    const replay = expectStatus(await svc.request('POST', '/api/v1/rules/replay', { body: { target: 'local', rule_id: DEPLOY_RULE, ...window } }), 202, 'replay').body;
    const replayed = (await svc.request('GET', `/api/v1/replays/${replay.id}?wait=30`)).body;
    if (replayed.status !== 'completed' || !(replayed.result?.alerts?.total > 0)) throw new Error(`the replay should complete with alerts: ${JSON.stringify(replayed)}`);
    await finished(replay.workflow_id);
    runs.set('replay-completed', { workflowId: replay.workflow_id, runId: undefined });

    // ShadowEvaluation ----------------------------------------------------------------------------
    // Continue-as-new after two evaluations, then a stop: the first run ends continuing as new, the
    // last one carries the state over and ends stopped early.
    const shadow = expectStatus(
      await svc.request('POST', '/api/v1/rules/shadow', { body: { target: 'local', rule_id: DETECT_RULE, duration: 'PT5M', interval: 'PT1S', continue_as_new_after: 2 } }),
      202,
      'shadow',
    ).body;
    await ingest([event('detected.exe')]);
    await until('a second shadow run', async () => ((await svc.request('GET', `/api/v1/shadows/${shadow.id}`)).body.progress?.workflow_runs >= 2 ? true : undefined));
    expectStatus(await svc.request('POST', `/api/v1/shadows/${shadow.id}/stop`), 202, 'shadow stop');
    const stopped = (await svc.request('GET', `/api/v1/shadows/${shadow.id}?wait=30`)).body;
    if (stopped.status !== 'completed' || stopped.result?.stopped_early !== true) throw new Error(`the shadow should end stopped early: ${JSON.stringify(stopped)}`);
    const last = await svc.client.workflow.getHandle(shadow.workflow_id).describe();
    if (last.runId === shadow.run_id) throw new Error('the shadow should have continued as new');
    runs.set('shadow-evaluation-continued-as-new', { workflowId: shadow.workflow_id, runId: shadow.run_id });
    runs.set('shadow-evaluation-stopped-early', { workflowId: shadow.workflow_id, runId: last.runId });
    const short = expectStatus(
      await svc.request('POST', '/api/v1/rules/shadow', { body: { target: 'local', rule_id: DETECT_RULE, duration: 'PT2S', interval: 'PT1S' } }),
      202,
      'shadow',
    ).body;
    const completed = (await svc.request('GET', `/api/v1/shadows/${short.id}?wait=30`)).body;
    if (completed.status !== 'completed' || completed.result?.stopped_early !== false) throw new Error(`the shadow should complete on its own: ${JSON.stringify(completed)}`);
    runs.set('shadow-evaluation-completed', { workflowId: short.workflow_id, runId: undefined });

    // Drift: a live rule taken off the target out of band is found by a check, then restored.
    const pushedDrift = expectStatus(await svc.request('POST', '/api/v1/rules', { body: { rule: rule(DRIFT_RULE, 'drifted.exe') } }), 201, 'push drift rule').body;
    const driftDeploy = expectStatus(
      await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: DRIFT_RULE, target: 'local', approval_required: false, version: pushedDrift.version } }),
      202,
      'deploy drift rule',
    ).body;
    await expectResult(finished(driftDeploy.workflow_id), { status: 'active' }, 'deploy drift rule');
    if (!(await svc.siem.local.undeploy('default', driftDeploy.id)).changed) throw new Error('the drift rule should have been live on the local store');
    const found = expectStatus(await svc.request('POST', '/api/v1/settings/targets/local/drift-check'), 200, 'drift check').body;
    if (!found.items.some((d: { kind: string; rule_id: string }) => d.kind === 'missing' && d.rule_id === DRIFT_RULE))
      throw new Error(`the check should find the rule missing: ${JSON.stringify(found)}`);
    runs.set('drift-check-found-missing', await onlyRun(svc, 'DriftCheck'));
    const restored = expectStatus(await svc.request('POST', `/api/v1/deployments/${driftDeploy.id}/restore`), 200, 'restore').body;
    if (restored.drift.length !== 0) throw new Error(`the restore should leave no drift: ${JSON.stringify(restored)}`);
    runs.set('restore-deployment-restored', await onlyRun(svc, 'RestoreDeployment'));

    // SettingsChange: a placeholder value under a live rule, approved and rejected.
    const placeholderRule = `title: Listed admin\nid: ${SETTINGS_RULE}\nstatus: test\nlogsource:\n  product: windows\n  category: process_creation\ndetection:\n  selection:\n    User|expand: '%recorded_admins%'\n  condition: selection\n`;
    const putValues = (admins: string[]) => svc.request('PUT', '/api/v1/settings/targets/local/placeholders', { body: { placeholders: { recorded_admins: admins } } });
    expectStatus(await putValues(['root']), 200, 'placeholder values, nothing live');
    expectStatus(await svc.request('POST', '/api/v1/rules', { body: { rule: placeholderRule } }), 201, 'push placeholder rule');
    const liveRule = expectStatus(
      await svc.request('POST', '/api/v1/rules/deploy', { body: { rule_id: SETTINGS_RULE, target: 'local', approval_required: false } }),
      202,
      'deploy placeholder rule',
    ).body;
    await expectResult(finished(liveRule.workflow_id), { status: 'active' }, 'deploy placeholder rule');
    for (const [decision, status, admins] of [
      ['approve', 'applied', ['root', 'adm']],
      ['reject', 'rejected', ['nobody']],
    ] as const) {
      const change = expectStatus(await putValues([...admins]), 202, `settings change to ${decision}`).body;
      await impactRecorded(change.approval_id);
      await decide(change.approval_id, decision);
      const approval = (await svc.request('GET', `/api/v1/approvals/${change.approval_id}`)).body;
      await expectResult(finished(approval.workflow_id), { status }, `settings change ${status}`);
      runs.set(`settings-change-${status}`, { workflowId: approval.workflow_id, runId: undefined });
    }

    // Notify that finds nothing to deliver (webhook disabled): its short path.
    expectStatus(await svc.request('PUT', '/api/v1/settings/webhook', { body: { url: `http://127.0.0.1:${receiver.port}/hook`, enabled: false } }), 200, 'disable webhook');
    const none = expectStatus(await svc.request('POST', '/api/v1/settings/webhook/test'), 202, 'webhook test').body;
    await expectResult(finished(none.workflow_id), { deliveryId: null, delivered: false }, 'notify disabled');
    runs.set('notify-disabled', { workflowId: none.workflow_id, runId: undefined });

    // The Notify children started above must have finished too, so no run is cut short by shutdown.
    for (const r of runs.values()) await svc.client.workflow.getHandle(r.workflowId, r.runId).result();
    return runs;
  } finally {
    await receiver.close();
  }
}

async function expectResult(result: Promise<unknown>, expected: Record<string, unknown>, what: string): Promise<void> {
  const value = (await result) as Record<string, unknown>;
  for (const [k, v] of Object.entries(expected)) {
    if (value[k] !== v) throw new Error(`${what}: expected ${k} = ${JSON.stringify(v)}, got ${JSON.stringify(value)}`);
  }
}

/** The one completed run of a workflow type (started through the API, whose answer names no run), found through visibility. */
async function onlyRun(svc: TestService, type: string): Promise<Recorded> {
  return until(`the completed ${type} run`, async () => {
    const found: Recorded[] = [];
    for await (const info of svc.client.workflow.list({ query: `WorkflowType = '${type}' AND ExecutionStatus = 'Completed' AND TaskQueue = '${svc.taskQueue}'` })) {
      found.push({ workflowId: info.workflowId, runId: info.runId });
    }
    if (found.length > 1) throw new Error(`expected one ${type} run, found ${found.length}`);
    return found[0];
  });
}

/** A completed scheduled DetectionRun of the rule whose outcome matches, found through visibility. */
async function detectionRun(svc: TestService, ruleId: string, matches: (o: DetectionOutcome) => boolean): Promise<Recorded> {
  const checked = new Set<string>();
  return until(`a DetectionRun of ${ruleId} with the wanted outcome`, async () => {
    for await (const info of svc.client.workflow.list({ query: `WorkflowType = 'DetectionRun' AND DetflowRuleId = '${ruleId}' AND ExecutionStatus = 'Completed'` })) {
      if (checked.has(info.runId)) continue;
      checked.add(info.runId);
      const outcome = (await svc.client.workflow.getHandle(info.workflowId, info.runId).result()) as DetectionOutcome;
      if (matches(outcome)) return { workflowId: info.workflowId, runId: info.runId };
    }
    return undefined;
  });
}

async function main(): Promise<void> {
  await globalSetup();
  try {
    const svc = await startTestService({ webhookRetry: RECORDING_RETRY });
    try {
      const runs = await record(svc);
      const files = new Map<string, string>();
      for (const [name, r] of runs) files.set(`${name}.json`, historyToJSON(await svc.client.workflow.getHandle(r.workflowId, r.runId).fetchHistory()));
      fs.mkdirSync(HISTORIES_DIR, { recursive: true });
      const overwrite = process.argv.includes('--overwrite');
      if (overwrite) for (const old of fs.readdirSync(HISTORIES_DIR)) if (old.endsWith('.json')) fs.rmSync(path.join(HISTORIES_DIR, old));
      let written = 0;
      for (const [file, text] of files) {
        const to = path.join(HISTORIES_DIR, file);
        if (!overwrite && fs.existsSync(to)) continue;
        fs.writeFileSync(to, text);
        written++;
      }
      process.stdout.write(`recorded ${files.size} histories, wrote ${written} into ${HISTORIES_DIR}\n`);
    } finally {
      await svc.close();
    }
  } finally {
    await globalTeardown();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
