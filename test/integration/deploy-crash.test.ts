import http from 'node:http';
import type net from 'node:net';
import { and, eq } from 'drizzle-orm';
import { Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';
import { deployments } from '../../db/schema';
import type { DeployRequest, DeployResult } from '../../siem/adapter';
import { createCiKey, imageRule, startTestService, until, type TestService } from '../support/harness';

/**
 * A worker that dies while the adapter deploy is in flight. The crash is made deterministic by
 * holding the first attempt inside the local adapter's deploy (before or after the SIEM took the
 * rule) while the test kills its worker: that attempt then never reports nor heartbeats, Temporal
 * times it out on its heartbeat, and the new worker runs attempt 2. The proof of "exactly once":
 * more than one attempt reached the adapter, one of them changed the SIEM, one deployment is
 * active there and in the database, activation ran once, one `deployment.succeeded` webhook.
 */

const RULE_A = 'c7a5e000-0000-4000-8000-00000000000a';
const RULE_B = 'c7a5e000-0000-4000-8000-00000000000b';
type Call = { deploymentId: string; ruleId: string; attempt: number; changed: boolean | null; done: Promise<void> };

/**
 * Wraps the local adapter's deploy (the same instance the worker's activities use): records every
 * call with its Temporal attempt and whether it changed the SIEM, and can hold the next call for a
 * rule before or after the real deploy until the test lets it go. Holds are keyed by rule, so one
 * can be set before the run that will reach it starts.
 */
class DeployProbe {
  readonly calls: Call[] = [];
  private holds = new Map<string, { where: 'before' | 'after'; reached: () => void; gate: Promise<void>; release: () => void }>();

  constructor(svc: TestService) {
    const local = svc.siem.local;
    const deploy = local.deploy.bind(local);
    local.deploy = async (request: DeployRequest): Promise<DeployResult> => {
      let finish!: () => void;
      const call: Call = {
        deploymentId: request.deploymentId,
        ruleId: request.rule.ruleId,
        attempt: Context.current().info.attempt,
        changed: null,
        done: new Promise((r) => (finish = r)),
      };
      this.calls.push(call);
      const hold = this.holds.get(request.rule.ruleId);
      // Only the first call is held: it is the one whose worker the test kills.
      if (hold) this.holds.delete(request.rule.ruleId);
      try {
        if (hold?.where === 'before') {
          hold.reached();
          await hold.gate;
        }
        const result = await deploy(request);
        call.changed = result.changed;
        if (hold?.where === 'after') {
          hold.reached();
          await hold.gate;
        }
        return result;
      } finally {
        finish();
      }
    };
  }

  /** Holds the next deploy of `ruleId`; `reached` resolves once it is held. */
  hold(ruleId: string, where: 'before' | 'after'): { reached: Promise<void>; release: () => void } {
    let reached!: () => void;
    let release!: () => void;
    const reachedP = new Promise<void>((r) => (reached = r));
    const gate = new Promise<void>((r) => (release = r));
    this.holds.set(ruleId, { where, reached, gate, release });
    return { reached: reachedP, release };
  }

  of(deploymentId: string): Call[] {
    return this.calls.filter((c) => c.deploymentId === deploymentId);
  }

  /** Calls that put something on the SIEM (the adapter answers `changed: false` for a repeat). */
  effects(deploymentId: string): number {
    return this.of(deploymentId).filter((c) => c.changed === true).length;
  }
}

/** A webhook receiver on loopback (see webhooks.test.ts); acknowledges everything. */
async function startReceiver(): Promise<{ url: string; events: Array<{ event: string; data: Record<string, unknown> }>; close(): Promise<void> }> {
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { event: string; data: Record<string, unknown> };
      events.push({ event: parsed.event, data: parsed.data });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    events,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

function activityEvents(events: HistoryEvent[], activityType: string) {
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activityType);
  const ids = new Set(scheduled.map((e) => String(e.eventId)));
  const started = events.filter((e) => e.activityTaskStartedEventAttributes && ids.has(String(e.activityTaskStartedEventAttributes.scheduledEventId)));
  return { scheduled, started };
}

describe('a worker killed while deploying: the deployment happens exactly once', () => {
  let svc: TestService;
  let probe: DeployProbe;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let requester: string;
  const releases: Array<() => void> = [];

  beforeAll(async () => {
    svc = await startTestService();
    probe = new DeployProbe(svc);
    receiver = await startReceiver();
    requester = (await createCiKey(svc)).token;
    for (const [id, image] of [
      [RULE_A, 'crash-a.exe'],
      [RULE_B, 'crash-b.exe'],
    ] as const) {
      expect((await svc.request('POST', '/api/v1/rules', { body: { rule: imageRule(id, image) } })).status).toBe(201);
    }
    const hook = await svc.request('PUT', '/api/v1/settings/webhook', {
      body: { url: receiver.url, secret: 'a-webhook-secret-of-some-length', events: ['deployment.succeeded', 'deployment.failed'] },
    });
    expect(hook.status).toBe(200);
  });
  afterAll(async () => {
    // Whatever a failed test left held goes now, so close can drain the abandoned workers.
    for (const release of releases) release();
    await receiver?.close();
    await svc?.close();
  });

  /** The run's result, history and the database/SIEM/webhook facts every scenario checks. */
  async function expectDeployedOnce(ruleId: string, deploymentId: string, workflowId: string) {
    const handle = svc.client.workflow.getHandle(workflowId);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'active', deployments: [{ deployment_id: deploymentId, status: 'active', error: null }] });

    // Temporal ran the deploy more than once — the last attempt started after a heartbeat timeout,
    // long before the 1-minute start-to-close — and activation once.
    const events = (await handle.fetchHistory()).events ?? [];
    const deploy = activityEvents(events, 'deployToTarget');
    expect(deploy.scheduled).toHaveLength(1);
    expect(deploy.started).toHaveLength(1);
    const started = deploy.started[0]!.activityTaskStartedEventAttributes!;
    expect(started.attempt).toBe(2);
    expect(started.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT);
    expect(activityEvents(events, 'activateDeployment').scheduled).toHaveLength(1);

    // Two attempts reached the adapter; one changed the SIEM.
    expect(probe.of(deploymentId).map((c) => c.attempt)).toEqual([1, 2]);
    expect(probe.effects(deploymentId)).toBe(1);
    const live = (await svc.siem.local.listDeployed('default')).filter((d) => d.ruleId === ruleId);
    expect(live.map((d) => d.deploymentId)).toEqual([deploymentId]);

    // One active row for the rule, activated once.
    const rows = await svc.database.db
      .select()
      .from(deployments)
      .where(and(eq(deployments.ruleId, ruleId), eq(deployments.tenantId, 'default')));
    expect(rows.filter((d) => d.status === 'active').map((d) => d.id)).toEqual([deploymentId]);
    expect(rows.find((d) => d.id === deploymentId)!.activatedAt).toBeInstanceOf(Date);
    const view = (await svc.request('GET', `/api/v1/deployments/${deploymentId}`)).body;
    expect(view).toMatchObject({ status: 'active', error: null });

    // One success notification: wait for its Notify run, then count what the receiver got.
    await svc.client.workflow.getHandle(`notify/default/deployment.succeeded/${workflowId}/succeeded-${deploymentId}`).result();
    const notified = receiver.events.filter((e) => e.data.deployment_id === deploymentId);
    expect(notified.map((e) => e.event)).toEqual(['deployment.succeeded']);
  }

  it('dies after the SIEM took the rule and before the activity reported: the retry changes nothing', async () => {
    const held = probe.hold(RULE_A, 'after');
    releases.push(held.release);
    const res = await svc.request('POST', '/api/v1/rules/deploy', { token: requester, body: { rule_id: RULE_A, target: 'local', approval_required: false } });
    expect(res.status).toBe(202);
    const deploymentId: string = res.body.id;

    await held.reached;
    // The SIEM has the rule; the worker dies before Temporal hears of it.
    expect(probe.effects(deploymentId)).toBe(1);
    await svc.crashWorker();

    await expectDeployedOnce(RULE_A, deploymentId, res.body.workflow_id);
    // The dead worker's attempt, let go now, reports too late to count: nothing changes.
    held.release();
    await probe.of(deploymentId)[0]!.done;
    expect(probe.effects(deploymentId)).toBe(1);
    expect((await svc.request('GET', `/api/v1/deployments/${deploymentId}`)).body.status).toBe('active');
  });

  it('dies while waiting for approval, and again inside the deploy before the SIEM took it: the late first attempt is a no-op', async () => {
    const res = await svc.request('POST', '/api/v1/rules/deploy', { token: requester, body: { rule_id: RULE_B, target: 'local', approval_required: true } });
    expect(res.status).toBe(202);
    const deploymentId: string = res.body.id;
    const approvalId = String(res.body.links.approval).split('/').at(-1)!;
    // Impact computed, the run waits for a decision: the worker dies.
    await until('the impact summary', async () => ((await svc.request('GET', `/api/v1/approvals/${approvalId}`)).body.impact ? true : undefined));
    await svc.crashWorker();

    const held = probe.hold(RULE_B, 'before');
    releases.push(held.release);
    // The bootstrap token approves: the CI token requested the change, so it may not.
    const decided = await svc.request('POST', `/api/v1/approvals/${approvalId}/decision`, { body: { decision: 'approve', comment: 'ok' } });
    expect(decided.status).toBe(200);
    await held.reached;
    expect(probe.effects(deploymentId)).toBe(0);
    await svc.crashWorker();

    await expectDeployedOnce(RULE_B, deploymentId, res.body.workflow_id);
    // The zombie attempt wakes up and deploys after the new worker did: keyed by the deployment id,
    // the adapter answers that nothing changed.
    held.release();
    await probe.of(deploymentId)[0]!.done;
    expect(probe.of(deploymentId)[0]!.changed).toBe(false);
    expect(probe.effects(deploymentId)).toBe(1);
    expect((await svc.siem.local.listDeployed('default')).filter((d) => d.ruleId === RULE_B).map((d) => d.deploymentId)).toEqual([deploymentId]);
    expect((await svc.request('GET', `/api/v1/deployments/${deploymentId}`)).body.status).toBe('active');
  });
});
