import { MissingCapability, type CompiledRule, type CompileResult } from '../../siem/adapter';
import { DeploymentConflictError } from '../../siem/local/deployments';
import { LocalEventStore } from '../../siem/local/event-store';
import { LocalSiemAdapter } from '../../siem/local/local-adapter';

/** The target (the service's target id) the tests' events are sent to and read from. */
const TARGET = 'target-a';

/** Test rules are already SQL: the compiler checks them the way a backend would refuse a construct. */
const sqlCompiler = (rule: { where: string }): CompileResult =>
  rule.where.includes('UNSUPPORTED') ? { ok: false, issues: [{ code: 'backend-unsupported', message: 'cannot express UNSUPPORTED' }] } : { ok: true, query: rule.where };

const T0 = Date.UTC(2024, 0, 1);
const psRule = (version: number, query = `ends_with(lower("Image"), '\\powershell.exe')`): CompiledRule => ({
  ruleId: 'rule-ps',
  version,
  query,
  logsource: { product: 'windows', category: 'process_creation' },
});

let store: LocalEventStore;
let adapter: LocalSiemAdapter<{ where: string }>;
let clock: number;

beforeEach(async () => {
  store = await LocalEventStore.open({ path: ':memory:' });
  clock = T0 + 1000;
  adapter = new LocalSiemAdapter({ store, compiler: sqlCompiler, now: () => new Date(clock) });
});
afterEach(() => store.close());

const ingest = (tenant: string, images: string[], product = 'windows') =>
  store.ingest(
    tenant,
    TARGET,
    { kind: 'json-array', input: images.map((Image, i) => ({ ts: T0 + i, Image })) },
    { timestampField: 'ts', logsource: { product, category: 'process_creation' } },
  );

describe('compile and capabilities', () => {
  it('passes the store field mapping to the compiler and reports refusals as issues', () => {
    expect(adapter.kind).toBe('local');
    expect(adapter.capabilities()).toMatchObject({ queryLanguage: 'duckdb-sql', fixtures: true, deploy: true });
    expect(adapter.compile({ where: 'true' })).toEqual({ ok: true, query: 'true' });
    expect(adapter.compile({ where: 'UNSUPPORTED' })).toMatchObject({ ok: false, issues: [{ code: 'backend-unsupported' }] });
    const seen: string[] = [];
    const probe = new LocalSiemAdapter({
      store,
      compiler: (_r: null, f) => ({ ok: true, query: (seen.push(f.fieldExpression('Image'), f.fieldExpression('Other')), 'true') }),
    });
    probe.compile(null);
    expect(seen).toEqual(['"Image"', `json_extract_string(raw, '$."Other"')`]);
  });
});

describe('fixtures', () => {
  it('reports each fixture as passed or failed with a reason', async () => {
    const out = await adapter.runFixtures(psRule(1), [
      { name: 'positive', event: { Image: 'C:\\x\\powershell.exe' }, expect: 'match' },
      { name: 'negative', event: { Image: 'C:\\x\\cmd.exe' }, expect: 'no_match' },
      { name: 'wrong positive', event: { Image: 'C:\\x\\cmd.exe' }, expect: 'match' },
      { name: 'wrong negative', event: { Image: 'D:\\powershell.exe' }, expect: 'no_match' },
    ]);
    expect(out.map((o) => [o.name, o.matched, o.passed])).toEqual([
      ['positive', true, true],
      ['negative', false, true],
      ['wrong positive', false, false],
      ['wrong negative', true, false],
    ]);
    expect(out[2]!.reason).toBe('rule rule-ps v1 did not match this event');
    expect(out[3]!.reason).toBe('rule rule-ps v1 matched this event');
  });
});

describe('search and count', () => {
  it("applies the rule's logsource and the tenant", async () => {
    await ingest('acme', ['a\\powershell.exe', 'b\\powershell.exe', 'c\\cmd.exe']);
    await ingest('acme', ['d\\powershell.exe'], 'linux');
    await ingest('other', ['e\\powershell.exe']);
    const window = { from: new Date(T0), to: new Date(T0 + 86_400_000) };
    const c = await adapter.count('acme', TARGET, psRule(1), window);
    expect(c).toMatchObject({ matched: 2, scanned: 3 });
    const s = await adapter.search('acme', TARGET, psRule(1), window, { limit: 1 });
    expect(s.events.map((e) => e.event.Image)).toEqual(['a\\powershell.exe']);
    expect(s.truncated).toBe(true);
    expect((await adapter.planChunks('acme', TARGET, window, 1000)).map((c) => c.events)).toEqual([4]);
  });
});

describe('live evaluation', () => {
  it("evaluates each event committed after the cursor once, with the rule's logsource and the tenant", async () => {
    await ingest('acme', ['old\\powershell.exe']); // before the start: replay territory
    const start = await adapter.latestCursor('acme', TARGET);
    await ingest('acme', ['a\\powershell.exe', 'b\\cmd.exe']);
    await ingest('acme', ['c\\powershell.exe'], 'linux');
    await ingest('other', ['d\\powershell.exe']);
    const first = await adapter.evaluateSince('acme', TARGET, psRule(1), start);
    expect(first).toMatchObject({ scanned: 2, matched: 1, truncated: false });
    expect(first.events.map((e) => e.event.Image)).toEqual(['a\\powershell.exe']);
    expect(first.cursor).toBe(await adapter.latestCursor('acme', TARGET)); // store-wide: past tenant other's batch too
    expect(await adapter.evaluateSince('acme', TARGET, psRule(1), first.cursor)).toMatchObject({ scanned: 0, matched: 0, bytesScanned: 0, events: [] });
  });

  it('reports the bytes scanned and counts matches beyond the limit without returning them', async () => {
    await ingest('acme', ['a\\powershell.exe', 'b\\powershell.exe', 'c\\cmd.exe']);
    const window = { from: new Date(T0), to: new Date(T0 + 86_400_000) };
    const limited = await adapter.evaluateSince('acme', TARGET, psRule(1), 0, { limit: 1 });
    expect(limited).toMatchObject({ scanned: 3, matched: 2, truncated: true });
    expect(limited.events.map((e) => [e.seq, e.event.Image])).toEqual([[1, 'a\\powershell.exe']]);
    expect(limited.bytesScanned).toBe((await adapter.count('acme', TARGET, psRule(1), window)).bytesScanned);
    expect(limited.bytesScanned).toBeGreaterThan(0);
    expect(await adapter.evaluateSince('acme', TARGET, psRule(1), 0, { limit: 0 })).toMatchObject({
      matched: 2,
      events: [],
      truncated: true,
      bytesScanned: limited.bytesScanned,
    });
  });

  it('fails with the query error when the rule cannot run', async () => {
    await ingest('acme', ['a\\powershell.exe']);
    await expect(adapter.evaluateSince('acme', TARGET, psRule(1, 'no_such_function("Image")'), 0)).rejects.toThrow(/no_such_function/);
  });
});

describe('deployments', () => {
  it('is idempotent on the deployment id and on the active version', async () => {
    const first = await adapter.deploy({ deploymentId: 'd1', tenantId: 'acme', targetId: TARGET, rule: psRule(1) });
    expect(first).toMatchObject({ changed: true, superseded: null, deployment: { deploymentId: 'd1', state: 'active', version: 1 } });
    expect(await adapter.deploy({ deploymentId: 'd1', tenantId: 'acme', targetId: TARGET, rule: psRule(1) })).toMatchObject({
      changed: false,
      deployment: { deploymentId: 'd1' },
    });
    expect(await adapter.deploy({ deploymentId: 'd1-again', tenantId: 'acme', targetId: TARGET, rule: psRule(1) })).toMatchObject({
      changed: false,
      deployment: { deploymentId: 'd1' },
    });
    await expect(adapter.deploy({ deploymentId: 'd1', tenantId: 'acme', targetId: TARGET, rule: psRule(2) })).rejects.toThrow(DeploymentConflictError);
    expect((await adapter.listDeployed('acme')).map((d) => d.deploymentId)).toEqual(['d1']);
  });

  it('supersedes the previous version and undeploys once', async () => {
    await adapter.deploy({ deploymentId: 'd1', tenantId: 'acme', targetId: TARGET, rule: psRule(1) });
    const v2 = await adapter.deploy({ deploymentId: 'd2', tenantId: 'acme', targetId: TARGET, rule: psRule(2) });
    expect(v2).toMatchObject({ changed: true, superseded: 'd1' });
    expect((await adapter.listDeployed('acme')).map((d) => [d.deploymentId, d.version])).toEqual([['d2', 2]]);
    expect(await adapter.undeploy('other-tenant', 'd2')).toEqual({ changed: false });
    expect(await adapter.undeploy('acme', 'd2')).toEqual({ changed: true });
    expect(await adapter.undeploy('acme', 'd2')).toEqual({ changed: false });
    expect(await adapter.undeploy('acme', 'never')).toEqual({ changed: false });
    expect(await adapter.listDeployed('acme')).toEqual([]);
  });

  it('keeps tenants apart', async () => {
    await adapter.deploy({ deploymentId: 'a1', tenantId: 'a', targetId: TARGET, rule: psRule(1) });
    await adapter.deploy({ deploymentId: 'b1', tenantId: 'b', targetId: TARGET, rule: psRule(1) });
    expect((await adapter.listDeployed('a')).map((d) => d.deploymentId)).toEqual(['a1']);
    await expect(adapter.deploy({ deploymentId: 'a1', tenantId: 'b', targetId: TARGET, rule: psRule(1) })).rejects.toThrow(DeploymentConflictError);
  });
});

describe('alert and run statistics', () => {
  // Scheduled detection on local targets is the service's (activities/detection.ts, tested in
  // test/integration/detection.test.ts); it evaluates through evaluateSince above.
  it("are not the local target's own: its capabilities say so and the calls refuse", async () => {
    const day = { from: new Date(T0), to: new Date(T0 + 86_400_000) };
    expect(adapter.capabilities()).toMatchObject({ liveEvaluation: true, alertStats: false, runStats: false });
    await expect(adapter.alertStats('acme', 'rule-ps', day)).rejects.toThrow(MissingCapability);
    await expect(adapter.runStats('acme', 'rule-ps', day)).rejects.toThrow(/local targets lack runStats/);
  });
});

describe('targets', () => {
  it("keeps a rule's deployments on two targets of a tenant apart", async () => {
    await adapter.deploy({ deploymentId: 'dev-1', tenantId: 'acme', targetId: 'dev', rule: psRule(1) });
    expect(await adapter.deploy({ deploymentId: 'prod-1', tenantId: 'acme', targetId: 'prod', rule: psRule(1) })).toMatchObject({ changed: true, superseded: null });
    expect(await adapter.deploy({ deploymentId: 'prod-2', tenantId: 'acme', targetId: 'prod', rule: psRule(2) })).toMatchObject({ changed: true, superseded: 'prod-1' });
    expect((await adapter.listDeployed('acme', 'dev')).map((d) => [d.deploymentId, d.targetId])).toEqual([['dev-1', 'dev']]);
    expect((await adapter.listDeployed('acme', 'prod')).map((d) => [d.deploymentId, d.version])).toEqual([['prod-2', 2]]);
    expect((await adapter.listDeployed('acme')).map((d) => d.deploymentId)).toEqual(['dev-1', 'prod-2']);
    await expect(adapter.deploy({ deploymentId: 'dev-1', tenantId: 'acme', targetId: 'prod', rule: psRule(1) })).rejects.toThrow(DeploymentConflictError);
  });

  it("evaluates a rule on its target's events only", async () => {
    await store.ingest(
      'acme',
      'dev',
      { kind: 'json-array', input: [{ ts: T0, Image: 'a\\powershell.exe' }] },
      { timestampField: 'ts', logsource: { product: 'windows', category: 'process_creation' } },
    );
    const window = { from: new Date(T0), to: new Date(T0 + 86_400_000) };
    expect(await adapter.evaluateSince('acme', 'prod', psRule(1), 0)).toMatchObject({ scanned: 0, matched: 0 });
    expect(await adapter.evaluateSince('acme', 'dev', psRule(1), 0)).toMatchObject({ scanned: 1, matched: 1 });
    expect(await adapter.count('acme', 'prod', psRule(1), window)).toMatchObject({ scanned: 0, matched: 0 });
    expect((await adapter.search('acme', 'dev', psRule(1), window)).events).toHaveLength(1);
  });
});
