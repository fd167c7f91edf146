import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseRule } from '../../sigma';
import { compileForTarget } from '../../sigma/lint/for-target';
import type { CompiledRule } from '../../siem/adapter';
import { remoteKind } from '../../siem/adapters';
import { type ElasticAdapter, elasticConnection, elasticKind } from '../../siem/elastic';
import { apiKeyHeader } from '../../siem/elastic/connection';
import { referencedFields, withMetadata, withSource } from '../../siem/elastic/esql-text';
import { threatOf } from '../../siem/elastic/rule-body';
import { objectName, queryHash, readMarker } from '../../siem/remote/deployed-marker';
import { SiemRequestError } from '../../siem/remote/errors';
import { EsqlError, parseEsql, runEsql, type FieldType } from '../fakes/elastic/esql';
import { indexDocument, type StoredIndex } from '../fakes/elastic/documents';
import { startFakeElastic, SYSMON_INDEX, type FakeElastic } from '../fakes/elastic';

// Two rules of the Sigma corpus (DRL 1.1, https://github.com/SigmaHQ/Detection-Rule-License):
// rules/windows/process_creation/proc_creation_win_powershell_non_interactive_execution.yml
// (author: Roberto Rodriguez @Cyb3rWard0g (rule), oscd.community (improvements)) and
// rules/windows/process_creation/proc_creation_win_attrib_hiding_files.yml (author: Sami Ruohonen).
const CORPUS = '/work/shared/sigma/corpus/rules/windows/process_creation';
const NON_INTERACTIVE_PS = `${CORPUS}/proc_creation_win_powershell_non_interactive_execution.yml`;
const ATTRIB_HIDING = `${CORPUS}/proc_creation_win_attrib_hiding_files.yml`;
const corpusRule = (file: string) => parseRule(fs.readFileSync(file, 'utf8'));

const TENANT = '11111111-1111-4111-8111-111111111111';
const TARGET = '22222222-2222-4222-8222-222222222222';
const DEP1 = '33333333-3333-4333-8333-333333333331';
const DEP2 = '33333333-3333-4333-8333-333333333332';
const DAY = 86_400_000;
const T0 = Date.UTC(2024, 4, 1);

let fake: FakeElastic;
let adapter: ElasticAdapter;
let clock: number;

function makeAdapter(f: FakeElastic, extra: Record<string, unknown> = {}): ElasticAdapter {
  const connection = elasticConnection.parse({ ...f.connection(), ...extra });
  return elasticKind.create({ targetId: TARGET, targetName: 'elastic-test', connection, now: () => new Date(clock) }) as ElasticAdapter;
}

function compiled(file = NON_INTERACTIVE_PS, a: ElasticAdapter = adapter): CompiledRule {
  const rule = corpusRule(file);
  const c = a.compile(rule);
  if (!c.ok) throw new Error(JSON.stringify(c.issues));
  return {
    ruleId: rule.id!,
    version: 1,
    query: c.query,
    ...(c.logsource ? { logsource: c.logsource } : {}),
    title: rule.title,
    ...(rule.level ? { level: rule.level } : {}),
    tags: rule.tags,
  };
}

const seed = () =>
  fake.addProcessEvents([
    {
      time: new Date(T0 + 1000),
      image: 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe',
      commandLine: 'powershell -enc AAA',
      parentImage: 'C:\\Windows\\System32\\svchost.exe',
      user: 'bob',
      host: 'ws1',
    },
    {
      time: new Date(T0 + 2000),
      image: 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe',
      commandLine: 'powershell',
      parentImage: 'C:\\Windows\\explorer.exe',
      user: 'bob',
      host: 'ws1',
    },
    {
      time: new Date(T0 + DAY + 5000),
      image: 'C:\\Program Files\\PowerShell\\7\\pwsh.exe',
      commandLine: 'pwsh -c x',
      parentImage: 'C:\\Windows\\System32\\cmd.exe',
      host: 'ws2',
    },
    { time: new Date(T0 + DAY + 6000), image: 'C:\\Windows\\System32\\cmd.exe', commandLine: 'cmd /c dir', parentImage: 'C:\\Windows\\explorer.exe' },
  ]);

beforeEach(async () => {
  fake = await startFakeElastic();
  clock = T0 + 3 * DAY;
  adapter = makeAdapter(fake);
});
afterEach(async () => {
  adapter.close();
  await fake.close();
});

describe('registration, settings and compile', () => {
  it('is registered as the elastic remote kind with its capabilities', () => {
    expect(remoteKind('elastic')).toBe(elasticKind);
    expect(adapter.capabilities()).toEqual({
      queryLanguage: 'esql',
      fixtures: true,
      historicalSearch: true,
      liveEvaluation: true,
      deploy: true,
      alertStats: true,
      runStats: true,
      fieldPresence: true,
      maxSearchWindowDays: null,
    });
  });

  it('validates connection settings and fills defaults', () => {
    const ok = elasticConnection.parse({ kibana_url: 'https://kb.example.org/', elasticsearch_url: 'https://es.example.org', api_key: 'abc' });
    expect(ok).toMatchObject({ kibana_url: 'https://kb.example.org', space: 'default', interval: '5m', timeout_ms: 30_000, max_concurrency: 4, ingest_lag_seconds: 60 });
    const bad = elasticConnection.safeParse({
      kibana_url: 'http://kb.example.org',
      elasticsearch_url: 'https://es',
      api_key: 'x',
      space: 'Bad Space',
      index: 'logs-* | LIMIT 1',
    });
    expect(bad.success).toBe(false);
    const messages = bad.error!.issues.map((i) => i.message).join('\n');
    expect(messages).toMatch(/kibana_url must use https/);
    expect(messages).toMatch(/space must be a Kibana space id/);
    expect(messages).toMatch(/index must be index patterns/);
    expect(elasticConnection.safeParse({ ...ok, surprise: 1 }).success).toBe(false);
    expect(apiKeyHeader('id:secret')).toBe(`ApiKey ${Buffer.from('id:secret').toString('base64')}`);
    expect(apiKeyHeader('ZW5jb2RlZA==')).toBe('ApiKey ZW5jb2RlZA==');
  });

  it('compiles to ES|QL with the METADATA the ES|QL rule type needs, and reports what it cannot express', () => {
    const c = compiled();
    expect(c.query).toMatch(/^FROM logs-windows\.sysmon_operational-\* METADATA _id, _index, _version \| WHERE /);
    expect(c.logsource).toEqual({ product: 'windows', category: 'process_creation' });
    const keyword = parseRule('title: k\nlogsource: {product: windows}\ndetection:\n  keywords: [evil]\n  condition: keywords\n');
    expect(adapter.compile(keyword)).toMatchObject({ ok: false, issues: [{ code: 'backend-unsupported' }] });
    const indexed = makeAdapter(fake, { index: 'winlogbeat-*, logs-endpoint.events.process-*' });
    expect(compiled(NON_INTERACTIVE_PS, indexed).query).toMatch(/^FROM winlogbeat-\*,logs-endpoint\.events\.process-\* METADATA _id, _index, _version \| WHERE /);
    indexed.close();
  });

  it('edits ES|QL text: metadata once, another source, the fields a query reads', () => {
    expect(withMetadata('FROM a-* | WHERE x == 1')).toBe('FROM a-* METADATA _id, _index, _version | WHERE x == 1');
    expect(withMetadata('FROM a-* METADATA _id | WHERE x == 1')).toBe('FROM a-* METADATA _id | WHERE x == 1');
    expect(withSource('FROM a-*,b METADATA _id | WHERE x == "|"', 'tmp')).toBe('FROM tmp METADATA _id | WHERE x == "|"');
    expect([
      ...referencedFields('FROM a | WHERE TO_LOWER(process.executable) LIKE "*x AND y*" AND CIDR_MATCH(source.ip, "10.0.0.0/8") AND NOT COALESCE(`odd name` IS NULL, false)'),
    ]).toEqual([
      ['process.executable', 'any'],
      ['source.ip', 'ip'],
      ['odd name', 'any'],
    ]);
  });

  it('maps ATT&CK tags to Kibana threat entries', () => {
    expect(threatOf(['attack.execution', 'attack.t1059.001', 'attack.defense-evasion', 'attack.t1564.001', 'attack.g0001', 'cve.2020-1'])).toEqual([
      {
        framework: 'MITRE ATT&CK',
        tactic: { id: 'TA0002', name: 'Execution', reference: 'https://attack.mitre.org/tactics/TA0002/' },
        technique: [
          {
            id: 'T1059',
            name: 'Command and Scripting Interpreter',
            reference: 'https://attack.mitre.org/techniques/T1059/',
            subtechnique: [{ id: 'T1059.001', name: 'PowerShell', reference: 'https://attack.mitre.org/techniques/T1059/001/' }],
          },
        ],
      },
      {
        framework: 'MITRE ATT&CK',
        tactic: expect.objectContaining({ id: 'TA0005' }),
        technique: [expect.objectContaining({ id: 'T1564', subtechnique: [expect.objectContaining({ id: 'T1564.001' })] })],
      },
    ]);
    // A technique without its tactic tagged goes under its own first tactic.
    expect(threatOf(['attack.t1059']).map((t) => t.tactic.id)).toEqual(['TA0002']);
  });
});

describe('fixtures', () => {
  it('runs the rule over its fixtures in a temporary index, mapped to ECS, and deletes the index', async () => {
    const rule = compiled(ATTRIB_HIDING);
    const out = await adapter.runFixtures(rule, [
      { name: 'hides', event: { Image: 'C:\\Windows\\System32\\attrib.exe', CommandLine: 'attrib +h secret.txt', ParentImage: 'C:\\x\\cmd.exe' }, expect: 'match' },
      { name: 'by original name', event: { Image: 'C:\\tmp\\a.exe', OriginalFileName: 'ATTRIB.EXE', CommandLine: 'a +h x' }, expect: 'match' },
      { name: 'desktop.ini', event: { Image: 'C:\\Windows\\System32\\attrib.exe', CommandLine: 'attrib +h \\desktop.ini x' }, expect: 'no_match' },
      { name: 'wrong expectation', event: { Image: 'C:\\Windows\\System32\\notepad.exe', CommandLine: 'notepad +h ' }, expect: 'match' },
    ]);
    expect(out.map((o) => [o.name, o.matched, o.passed])).toEqual([
      ['hides', true, true],
      ['by original name', true, true],
      ['desktop.ini', false, true],
      ['wrong expectation', false, false],
    ]);
    expect(out[3]!.reason).toMatch(/did not match/);
    expect(fake.indexNames().filter((n) => n.startsWith('detflow-fixtures-'))).toEqual([]);
    const esql = fake.esqlRequests().at(-1)!;
    expect(esql.query).toMatch(/^FROM detflow-fixtures-[0-9a-f]+ METADATA _id, _index, _version \| WHERE .* \| KEEP detflow_fixture \| LIMIT 4$/);
    const puts = fake.requests().filter((r) => r.method === 'PUT' || r.method === 'DELETE' || r.path.endsWith('/_bulk'));
    expect(puts.map((r) => [r.method, r.path.replace(/[0-9a-f]{12}/, 'X'), r.status])).toEqual([
      ['PUT', '/detflow-fixtures-X', 200],
      ['POST', '/detflow-fixtures-X/_bulk', 200],
      ['DELETE', '/detflow-fixtures-X', 200],
    ]);
  });

  it('deletes the fixture index even when the query fails', async () => {
    const rule = { ...compiled(ATTRIB_HIDING), query: 'FROM logs-* METADATA _id | WHERE NO_SUCH_FUNCTION(process.executable)' };
    await expect(adapter.runFixtures(rule, [{ name: 'x', event: { Image: 'a' }, expect: 'match' }])).rejects.toMatchObject({ failure: 'rejected' });
    expect(fake.indexNames().filter((n) => n.startsWith('detflow-fixtures-'))).toEqual([]);
  });
});

describe('search, count and live evaluation', () => {
  it('counts matched and scanned events per day over a window, and returns the matched events', async () => {
    seed();
    const rule = compiled();
    const window = { from: new Date(T0), to: new Date(T0 + 3 * DAY) };
    const count = await adapter.count(TENANT, TARGET, rule, window);
    expect(count).toMatchObject({ matched: 2, scanned: 4, bytesScanned: 0 });
    expect(count.perDay).toEqual([
      { day: '2024-05-01', scanned: 2, matched: 1 },
      { day: '2024-05-02', scanned: 2, matched: 1 },
      { day: '2024-05-03', scanned: 0, matched: 0 },
    ]);
    const found = await adapter.search(TENANT, TARGET, rule, window, { limit: 1 });
    expect(found.matched).toBe(2);
    expect(found.truncated).toBe(true);
    expect(found.events).toHaveLength(1);
    expect(found.events[0]!.time).toEqual(new Date(T0 + 1000));
    expect(found.events[0]!.event).toMatchObject({ 'process.command_line': 'powershell -enc AAA', 'user.name': 'bob' });
    expect(found.events[0]!.eventId).toMatch(/\S+/);
    const queries = fake.esqlRequests();
    expect(queries.some((q) => /\| STATS c = COUNT\(\*\) BY day = DATE_TRUNC\(1 day, @timestamp\)$/.test(q.query) && q.query.includes('WHERE'))).toBe(true);
    expect(queries.some((q) => q.query === 'FROM logs-windows.sysmon_operational-* | STATS c = COUNT(*) BY day = DATE_TRUNC(1 day, @timestamp)')).toBe(true);
    expect(queries.at(-1)).toEqual({
      query: `${rule.query} | SORT @timestamp ASC | LIMIT 1`,
      filter: { range: { '@timestamp': { gte: window.from.toISOString(), lt: window.to.toISOString(), format: 'strict_date_optional_time' } } },
    });
    // A window before any event.
    expect(await adapter.count(TENANT, TARGET, rule, { from: new Date(T0 - DAY), to: new Date(T0) })).toMatchObject({ matched: 0, scanned: 0 });
  });

  it('answers no events when the rule index matches no index', async () => {
    const rule = { ...compiled(), query: withSource(compiled().query, 'logs-nothing-here-*') };
    const out = await adapter.search(TENANT, TARGET, rule, { from: new Date(T0), to: new Date(T0 + DAY) });
    expect(out).toMatchObject({ matched: 0, scanned: 0, events: [] });
  });

  it('plans day slices and evaluates by event time behind the ingest lag', async () => {
    seed();
    const rule = compiled();
    expect(await adapter.planChunks(TENANT, TARGET, { from: new Date(T0 + 1000), to: new Date(T0 + 2 * DAY) }, 100)).toEqual([
      { from: new Date(T0 + 1000), to: new Date(T0 + DAY), events: 0 },
      { from: new Date(T0 + DAY), to: new Date(T0 + 2 * DAY), events: 0 },
    ]);
    clock = T0 + DAY + 60_000 + 5500; // the pwsh event (T0+DAY+5000) is just inside the slice
    expect(await adapter.latestCursor(TENANT, TARGET)).toBe(clock - 60_000);
    const first = await adapter.evaluateSince(TENANT, TARGET, rule, T0);
    expect(first.cursor).toBe(clock - 60_000);
    expect(first.matched).toBe(2);
    expect(first.events.map((e) => e.seq)).toEqual([T0 + 1000, T0 + DAY + 5000]);
    const again = await adapter.evaluateSince(TENANT, TARGET, rule, first.cursor);
    expect(again).toMatchObject({ cursor: first.cursor, matched: 0, events: [] });
  });

  it('reports field presence of the logsource index', async () => {
    seed();
    const out = await adapter.fieldPresence({
      tenantId: TENANT,
      targetId: TARGET,
      logsource: { product: 'windows', category: 'process_creation' },
      fields: ['process.executable', 'user.name', 'process.parent.executable', 'not.mapped'],
      since: new Date(T0 + DAY),
    });
    expect(out).toEqual({
      events: 2,
      fields: { 'process.executable': 2, 'user.name': 0, 'process.parent.executable': 2, 'not.mapped': 0 },
      newestEventTime: new Date(T0 + DAY + 6000),
    });
    const none = await adapter.fieldPresence({ tenantId: TENANT, targetId: TARGET, logsource: { product: 'aws', service: 'cloudtrail' }, fields: ['x'], since: new Date(T0) });
    expect(none).toEqual({ events: 0, fields: { x: 0 }, newestEventTime: null });
  });
});

describe('deploy, inventory and undeploy', () => {
  const request = (deploymentId: string, rule = compiled()) => ({ deploymentId, tenantId: TENANT, targetId: TARGET, rule });

  it('creates an ES|QL detection rule, and changes nothing when deployed again', async () => {
    const rule = compiled();
    const first = await adapter.deploy(request(DEP1, rule));
    expect(first).toMatchObject({ changed: true, superseded: null, deployment: { deploymentId: DEP1, ruleId: rule.ruleId, version: 1, query: rule.query, state: 'active' } });
    const name = objectName(rule.ruleId);
    const stored = fake.rule(name)!;
    expect(stored).toMatchObject({
      type: 'esql',
      language: 'esql',
      query: rule.query,
      rule_id: name,
      name: 'Non Interactive PowerShell Process Spawned',
      severity: 'low',
      risk_score: 21,
      interval: '5m',
      from: 'now-10m',
      enabled: true,
      tags: ['detflow'],
      threat: [{ framework: 'MITRE ATT&CK', tactic: { id: 'TA0002' }, technique: [{ id: 'T1059', subtechnique: [{ id: 'T1059.001' }] }] }],
    });
    expect(readMarker(String(stored.description))).toEqual({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, version: 1, queryHash: queryHash(rule.query) });
    const writes = fake.writes().length;
    expect(await adapter.deploy(request(DEP1, rule))).toMatchObject({ changed: false, superseded: null });
    expect(fake.writes()).toHaveLength(writes);
    // Disabled in the UI: the same deployment enables it again.
    fake.setEnabled(name, false);
    expect(await adapter.deploy(request(DEP1, rule))).toMatchObject({ changed: true });
    expect(fake.rule(name)!.enabled).toBe(true);
    expect(fake.writes().at(-1)).toMatchObject({ method: 'PATCH' });
    // A new deployment replaces it and names the one it superseded.
    const second = await adapter.deploy(request(DEP2, { ...rule, version: 2 }));
    expect(second).toMatchObject({ changed: true, superseded: DEP1 });
    expect(fake.writes().at(-1)).toMatchObject({ method: 'PUT' });
    expect(readMarker(String(fake.rule(name)!.description))?.deploymentId).toBe(DEP2);
    expect(fake.objects()).toHaveLength(1);
  });

  it('writes severity and risk from the level, with the settings overrides', async () => {
    const custom = makeAdapter(fake, { risk_score_by_level: 'medium=50, high=80', interval: '1h', lookback: '90m' });
    const rule = compiled(ATTRIB_HIDING, custom);
    await custom.deploy(request(DEP1, rule));
    expect(fake.rule(objectName(rule.ruleId))).toMatchObject({ severity: 'medium', risk_score: 50, interval: '1h', from: 'now-90m' });
    custom.close();
  });

  it('lists, inventories and undeploys what it deployed', async () => {
    const a = compiled();
    const b = compiled(ATTRIB_HIDING);
    await adapter.deploy(request(DEP1, a));
    await adapter.deploy(request(DEP2, b));
    const listed = await adapter.listDeployed(TENANT);
    expect(listed.map((d) => [d.deploymentId, d.ruleId, d.version]).sort()).toEqual([
      [DEP1, a.ruleId, 1],
      [DEP2, b.ruleId, 1],
    ]);
    expect(await adapter.listDeployed('99999999-9999-4999-8999-999999999999')).toEqual([]);
    expect(await adapter.listDeployed(TENANT, '99999999-9999-4999-8999-999999999999')).toEqual([]);

    // Drift: a query edited in Kibana, a rule disabled, one under the naming scheme detflow never wrote.
    fake.editQuery(objectName(a.ruleId), 'FROM logs-* METADATA _id | WHERE process.executable == "x"');
    fake.setEnabled(objectName(b.ruleId), false);
    const res = await fetch(`${fake.kibanaUrl}/api/detection_engine/rules`, {
      method: 'POST',
      headers: { authorization: fake.authorization, 'kbn-xsrf': 'true', 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'esql',
        language: 'esql',
        query: 'FROM logs-* METADATA _id | WHERE true',
        rule_id: 'detflow-hand-made',
        name: 'x',
        description: 'x',
        severity: 'low',
        risk_score: 1,
      }),
    });
    expect(res.status).toBe(200);
    const inventory = await adapter.inventory(TENANT, TARGET);
    expect(inventory.sort((x, y) => x.name.localeCompare(y.name))).toEqual(
      [
        {
          name: objectName(a.ruleId),
          ruleId: a.ruleId,
          deploymentId: DEP1,
          version: 1,
          query: 'FROM logs-* METADATA _id | WHERE process.executable == "x"',
          queryUnchanged: false,
          enabled: true,
        },
        { name: objectName(b.ruleId), ruleId: b.ruleId, deploymentId: DEP2, version: 1, query: b.query, queryUnchanged: true, enabled: false },
        {
          name: 'detflow-hand-made',
          ruleId: 'hand-made',
          deploymentId: null,
          version: null,
          query: 'FROM logs-* METADATA _id | WHERE true',
          queryUnchanged: false,
          enabled: true,
        },
      ].sort((x, y) => x.name.localeCompare(y.name)),
    );

    expect(await adapter.undeploy(TENANT, DEP1)).toEqual({ changed: true });
    expect(await adapter.undeploy(TENANT, DEP1)).toEqual({ changed: false });
    expect(
      fake
        .objects()
        .map((o) => o.name)
        .sort(),
    ).toEqual(['detflow-hand-made', objectName(b.ruleId)].sort());
    expect(fake.requests().some((r) => r.method === 'DELETE' && r.path === '/api/detection_engine/rules' && r.status === 200)).toBe(true);
  });

  it('pages through _find', async () => {
    for (let i = 0; i < 105; i++) {
      const res = await fetch(`${fake.kibanaUrl}/api/detection_engine/rules`, {
        method: 'POST',
        headers: { authorization: fake.authorization, 'kbn-xsrf': 'true', 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'esql',
          language: 'esql',
          query: 'FROM logs-* | WHERE true',
          rule_id: `detflow-r${i}`,
          name: 'x',
          description: 'x',
          severity: 'low',
          risk_score: 1,
        }),
      });
      expect(res.status).toBe(200);
    }
    expect(await adapter.inventory(TENANT, TARGET)).toHaveLength(105);
    expect(fake.requests().filter((r) => r.path.endsWith('/_find'))).toHaveLength(2);
  });

  it('works in a Kibana space other than the default one', async () => {
    const spaced = await startFakeElastic({ space: 'secops' });
    const a = makeAdapter(spaced);
    const rule = compiled(NON_INTERACTIVE_PS, a);
    await a.deploy(request(DEP1, rule));
    expect(
      spaced
        .requests()
        .filter((r) => r.path.includes('detection_engine'))
        .every((r) => r.path.startsWith('/s/secops/api/')),
    ).toBe(true);
    spaced.recordAlerts(objectName(rule.ruleId), [new Date(T0 + 10)]);
    expect((await a.alertStats(TENANT, rule.ruleId, { from: new Date(T0), to: new Date(T0 + DAY) })).alerts).toBe(1);
    expect(spaced.requests().some((r) => r.path === '/.alerts-security.alerts-secops/_search')).toBe(true);
    a.close();
    await spaced.close();
  });
});

describe('health statistics', () => {
  it('counts the rule alerts per day from the alerts index', async () => {
    const rule = compiled();
    await adapter.deploy({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule });
    const name = objectName(rule.ruleId);
    fake.recordAlerts(name, [new Date(T0 + 10), new Date(T0 + 20), new Date(T0 + DAY + 30), new Date(T0 + 5 * DAY)]);
    fake.recordAlerts('detflow-other', [new Date(T0 + 40)]);
    const stats = await adapter.alertStats(TENANT, rule.ruleId, { from: new Date(T0), to: new Date(T0 + 2 * DAY) });
    expect(stats).toEqual({
      ruleId: rule.ruleId,
      alerts: 3,
      perDay: [
        { day: '2024-05-01', alerts: 2 },
        { day: '2024-05-02', alerts: 1 },
      ],
      firstAlertAt: new Date(T0 + 10),
      lastAlertAt: new Date(T0 + DAY + 30),
    });
    expect(await adapter.alertStats(TENANT, 'never-deployed', { from: new Date(T0), to: new Date(T0 + DAY) })).toMatchObject({ alerts: 0, firstAlertAt: null });
  });

  it('reads run statistics from the alerting framework record of the rule', async () => {
    const rule = compiled();
    await adapter.deploy({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule });
    fake.recordRuns(objectName(rule.ruleId), [
      { time: new Date(T0 + 1000), durationMs: 100, success: true },
      { time: new Date(T0 + 2000), durationMs: 300, success: true },
      { time: new Date(T0 + 3000), durationMs: 50, success: false, message: 'verification_exception: Unknown column [x]' },
      { time: new Date(T0 + 5 * DAY), durationMs: 999, success: true },
    ]);
    const stats = await adapter.runStats(TENANT, rule.ruleId, { from: new Date(T0), to: new Date(T0 + DAY) });
    expect(stats).toEqual({
      ruleId: rule.ruleId,
      runs: 3,
      failedRuns: 1,
      eventsScanned: 0,
      meanDurationMs: 150,
      maxDurationMs: 300,
      lastRunAt: new Date(T0 + 3000),
      lastError: null,
    });
    fake.recordRuns(objectName(rule.ruleId), [{ time: new Date(T0 + 6 * DAY), durationMs: 10, success: false, message: 'search failed' }]);
    expect((await adapter.runStats(TENANT, rule.ruleId, { from: new Date(T0), to: new Date(T0 + 7 * DAY) })).lastError).toBe('search failed');
    expect(await adapter.runStats(TENANT, 'never-deployed', { from: new Date(T0), to: new Date(T0 + DAY) })).toMatchObject({ runs: 0, lastRunAt: null });
  });
});

describe('faults', () => {
  it('reports refused credentials as auth, without the credential in any message', async () => {
    fake.expireCredentials();
    const key = String(fake.connection().api_key);
    const secret = Buffer.from(key, 'base64').toString('utf8');
    for (const call of [
      () => adapter.deploy({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule: compiled() }),
      () => adapter.count(TENANT, TARGET, compiled(), { from: new Date(T0), to: new Date(T0 + DAY) }),
    ]) {
      const err = (await call().catch((e: unknown) => e)) as SiemRequestError;
      expect(err).toBeInstanceOf(SiemRequestError);
      expect(err.failure).toBe('auth');
      expect(err.retryable).toBe(false);
      for (const s of [key, secret, ...secret.split(':')]) {
        expect(err.message).not.toContain(s);
        expect(err.details.vendorMessage ?? '').not.toContain(s);
      }
    }
    fake.restoreCredentials();
    expect(await adapter.listDeployed(TENANT)).toEqual([]);
  });

  it('keeps a credential given as id:api_key out of messages too', async () => {
    const raw = Buffer.from(String(fake.connection().api_key), 'base64').toString('utf8');
    const a = makeAdapter(fake, { api_key: raw });
    expect(await a.listDeployed(TENANT)).toEqual([]);
    fake.fault({ times: 1, status: 400 });
    const err = (await a.listDeployed(TENANT).catch((e: unknown) => e)) as SiemRequestError;
    expect(err.failure).toBe('rejected');
    expect(err.message).not.toContain(raw.split(':')[1]!);
    a.close();
  });

  it('reports throttling with the Retry-After the SIEM asked for', async () => {
    fake.fault({ times: 1, match: /^POST \/_query$/, status: 429, retryAfterSeconds: 7 });
    const err = (await adapter.count(TENANT, TARGET, compiled(), { from: new Date(T0), to: new Date(T0 + DAY) }).catch((e: unknown) => e)) as SiemRequestError;
    expect(err).toMatchObject({ failure: 'throttled', details: { status: 429, retryAfterMs: 7000 } });
    expect(err.retryable).toBe(true);
    fake.fault({ times: 1, match: /_find$/, status: 503, retryAfterSeconds: 2 });
    await expect(adapter.listDeployed(TENANT)).rejects.toMatchObject({ failure: 'throttled', details: { retryAfterMs: 2000 } });
  });

  it('writes the rule exactly once when a deploy failed with a 500 and is retried', async () => {
    const rule = compiled();
    fake.fault({ times: 1, match: /^POST \/api\/detection_engine\/rules$/, status: 500 });
    await expect(adapter.deploy({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule })).rejects.toMatchObject({ failure: 'unavailable', details: { status: 500 } });
    expect(fake.objects()).toHaveLength(0);
    expect(await adapter.deploy({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule })).toMatchObject({ changed: true });
    expect(await adapter.deploy({ deploymentId: DEP1, tenantId: TENANT, targetId: TARGET, rule })).toMatchObject({ changed: false });
    expect(fake.writes()).toEqual([{ method: 'POST', path: '/api/detection_engine/rules', status: 200, at: expect.any(Date) }]);
  });

  it('times out on a slow answer', async () => {
    const slow = makeAdapter(fake, { timeout_ms: 150 });
    fake.fault({ times: 1, match: /^POST \/_query$/, delayMs: 600 });
    await expect(slow.count(TENANT, TARGET, compiled(NON_INTERACTIVE_PS, slow), { from: new Date(T0), to: new Date(T0 + DAY) })).rejects.toMatchObject({ failure: 'timeout' });
    slow.close();
  });

  it('connects over https with the target CA bundle and refuses without it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-elastic-tls-'));
    try {
      const run = (...args: string[]) => execFileSync('/usr/bin/openssl', args, { cwd: dir, stdio: 'pipe' });
      run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=detflow test CA');
      run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
      fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
      run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
      const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
      const secure = await startFakeElastic({ tls: { key: read('server.key'), cert: read('server.pem'), ca: read('ca.pem') } });
      try {
        expect(secure.kibanaUrl).toMatch(/^https:/);
        const trusted = makeAdapter(secure);
        expect(await trusted.listDeployed(TENANT)).toEqual([]);
        expect(await trusted.count(TENANT, TARGET, compiled(NON_INTERACTIVE_PS, trusted), { from: new Date(T0), to: new Date(T0 + DAY) })).toMatchObject({ matched: 0 });
        trusted.close();
        const { ca_bundle: _ca, ...withoutCa } = secure.connection();
        const untrusted = elasticKind.create({ targetId: TARGET, targetName: 'x', connection: elasticConnection.parse(withoutCa), now: () => new Date(clock) });
        await expect(untrusted.listDeployed(TENANT)).rejects.toMatchObject({ failure: 'unavailable', message: expect.stringMatching(/could not be reached/) });
        untrusted.close();
      } finally {
        await secure.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the fake refuses requests that depart from the documented APIs', () => {
  const kibana = (method: string, p: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${fake.kibanaUrl}${p}`, {
      method,
      headers: { authorization: fake.authorization, 'kbn-xsrf': 'true', 'content-type': 'application/json', ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
  const es = (method: string, p: string, body: string | undefined, contentType = 'application/json') =>
    fetch(`${fake.elasticsearchUrl}${p}`, { method, headers: { authorization: fake.authorization, 'content-type': contentType }, ...(body !== undefined ? { body } : {}) });
  const valid = {
    type: 'esql',
    language: 'esql',
    query: 'FROM logs-* METADATA _id | WHERE true',
    rule_id: 'detflow-x',
    name: 'x',
    description: 'x',
    severity: 'low',
    risk_score: 21,
  };

  it('Kibana: kbn-xsrf, body schema, API version, lookups', async () => {
    const noXsrf = await fetch(`${fake.kibanaUrl}/api/detection_engine/rules`, {
      method: 'POST',
      headers: { authorization: fake.authorization, 'content-type': 'application/json' },
      body: JSON.stringify(valid),
    });
    expect(noXsrf.status).toBe(400);
    expect(await noXsrf.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Request must contain a kbn-xsrf header.' });

    const badSeverity = await kibana('POST', '/api/detection_engine/rules', { ...valid, severity: 'informational', risk_score: 101 });
    expect(badSeverity.status).toBe(400);
    const message = ((await badSeverity.json()) as { message: string }).message;
    expect(message).toMatch(/^\[request body\]: /);
    expect(message).toMatch(/severity/);
    expect(message).toMatch(/risk_score/);

    const extra = await kibana('POST', '/api/detection_engine/rules', { ...valid, index: ['logs-*'] });
    expect(extra.status).toBe(400);
    expect(((await extra.json()) as { message: string }).message).toMatch(/index/);

    const missing = await kibana('POST', '/api/detection_engine/rules', { type: 'esql', language: 'esql', query: 'FROM x | WHERE true' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { message: string }).message).toMatch(/name/);

    const badEsql = await kibana('POST', '/api/detection_engine/rules', { ...valid, query: 'SELECT * FROM logs' });
    expect(badEsql.status).toBe(400);

    const wrongVersion = await kibana('GET', '/api/detection_engine/rules?rule_id=x', undefined, { 'elastic-api-version': '2099-01-01' });
    expect(wrongVersion.status).toBe(400);

    expect((await kibana('POST', '/api/detection_engine/rules', valid)).status).toBe(200);
    const dup = await kibana('POST', '/api/detection_engine/rules', valid);
    expect(dup.status).toBe(409);
    expect(await dup.json()).toEqual({ message: 'rule_id: "detflow-x" already exists', status_code: 409 });
    expect((await kibana('GET', '/api/detection_engine/rules', undefined)).status).toBe(400);
    expect((await kibana('GET', '/api/detection_engine/rules?rule_id=nope', undefined)).status).toBe(404);
    expect((await kibana('GET', '/api/detection_engine/rules/_find?per_page=10&sort_field=bogus', undefined)).status).toBe(400);
    expect((await kibana('GET', '/api/detection_engine/rules/_find?filter=alert.attributes.params.ruleId:x', undefined)).status).toBe(400);
    expect((await kibana('GET', '/s/nosuchspace/api/detection_engine/rules?rule_id=x', undefined)).status).toBe(404);
    expect((await kibana('POST', '/api/detection_engine/rules', JSON.stringify(valid), { 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('Elasticsearch: content types, bodies, parameters, ES|QL', async () => {
    const textPlain = await es('POST', '/_query', JSON.stringify({ query: 'FROM logs-* | LIMIT 1' }), 'text/plain');
    expect(textPlain.status).toBe(406);
    expect(textPlain.headers.get('x-elastic-product')).toBe('Elasticsearch');

    const compat = await es('POST', '/_query', JSON.stringify({ query: `FROM ${SYSMON_INDEX} | LIMIT 0` }), 'application/vnd.elasticsearch+json; compatible-with=9');
    expect(compat.status).toBe(200);

    const unknownKey = await es('POST', '/_query', JSON.stringify({ query: 'FROM logs-* | LIMIT 1', surprise: true }));
    expect(unknownKey.status).toBe(400);
    expect(await unknownKey.json()).toMatchObject({ error: { type: 'x_content_parse_exception' }, status: 400 });

    const unknownParam = await es('POST', '/_query?nope=1', JSON.stringify({ query: 'FROM logs-* | LIMIT 1' }));
    expect(unknownParam.status).toBe(400);

    const parse = await es('POST', '/_query', JSON.stringify({ query: 'FROM logs-* | WHERE a ==' }));
    expect(parse.status).toBe(400);
    expect(await parse.json()).toMatchObject({ error: { type: 'parsing_exception' }, status: 400 });

    const unknownColumn = await es('POST', '/_query', JSON.stringify({ query: `FROM ${SYSMON_INDEX} | WHERE no.such.field == "x"` }));
    expect(unknownColumn.status).toBe(400);
    expect(await unknownColumn.json()).toMatchObject({ error: { type: 'verification_exception', reason: expect.stringMatching(/Unknown column \[no\.such\.field\]/) } });

    const unknownIndex = await es('POST', '/_query', JSON.stringify({ query: 'FROM nothing-* | LIMIT 1' }));
    expect(await unknownIndex.json()).toMatchObject({ error: { type: 'verification_exception', reason: expect.stringMatching(/Unknown index/) } });

    expect((await es('PUT', '/detflow-fixtures-t', JSON.stringify({ mappings: { properties: { a: { type: 'keyword' } } } }))).status).toBe(200);
    expect(await es('PUT', '/detflow-fixtures-t', JSON.stringify({}))).toMatchObject({ status: 400 });
    expect((await es('PUT', '/Upper', undefined)).status).toBe(400);
    const unterminated = await es('POST', '/detflow-fixtures-t/_bulk', '{"index":{}}\n{"a":"x"}', 'application/x-ndjson');
    expect(unterminated.status).toBe(400);
    expect((await es('POST', '/detflow-fixtures-t/_bulk?refresh=true', '{"index":{}}\n{"a":"x"}\n', 'application/x-ndjson')).status).toBe(200);
    expect((await es('DELETE', '/detflow-fixtures-*', undefined)).status).toBe(400);
    expect((await es('DELETE', '/detflow-fixtures-t', undefined)).status).toBe(200);
    expect((await es('DELETE', '/detflow-fixtures-t', undefined)).status).toBe(404);

    const unauth = await fetch(`${fake.elasticsearchUrl}/_query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"FROM logs-* | LIMIT 1"}',
    });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toMatch(/ApiKey/);
  });

  it('bulk documents without a refresh are not searchable at once', async () => {
    await es('PUT', '/late', JSON.stringify({ mappings: { properties: { '@timestamp': { type: 'date' } } } }));
    await es('POST', '/late/_bulk', '{"index":{}}\n{"@timestamp":"2024-01-01T00:00:00Z"}\n', 'application/x-ndjson');
    const res = await es('POST', '/_query', JSON.stringify({ query: 'FROM late | STATS c = COUNT(*)' }));
    expect(await res.json()).toMatchObject({ columns: [{ name: 'c', type: 'long' }], values: [[0]] });
  });

  it('answers the way the official client expects (product header on every answer)', async () => {
    const res = await new Promise<http.IncomingMessage>((resolve) =>
      http.get(`${fake.elasticsearchUrl}/nothing`, { headers: { authorization: fake.authorization } }, resolve),
    );
    res.resume();
    expect(res.headers['x-elastic-product']).toBe('Elasticsearch');
  });
});

describe('the fake ES|QL evaluator on corpus rules', () => {
  const index = (docs: Record<string, unknown>[]): StoredIndex => {
    const mapping = new Map<string, FieldType>([
      ['@timestamp', 'date'],
      ['process.executable', 'keyword'],
      ['process.command_line', 'keyword'],
      ['process.parent.executable', 'keyword'],
      ['process.parent.command_line', 'keyword'],
      ['process.pe.original_file_name', 'keyword'],
    ]);
    const idx: StoredIndex = { name: 'logs-windows.sysmon_operational-default', mapping, stringsAsKeyword: true, docs: [] };
    docs.forEach((source, i) => idx.docs.push({ id: `d${i}`, version: 1, fields: indexDocument(idx, source), visibleAt: 0, source }));
    return idx;
  };
  const matches = (file: string, docs: Record<string, unknown>[]) => {
    const query = parseEsql(`${compileForTarget(corpusRule(file), 'elastic')} | KEEP n`);
    const answer = runEsql(query, [index(docs.map((d, n) => ({ ...d, n })))], () => true);
    return answer.values.map((v) => v[0]);
  };

  it('non-interactive PowerShell: matches by image or original name, not under explorer, null parents kept', () => {
    expect(
      matches(NON_INTERACTIVE_PS, [
        { process: { executable: 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\POWERSHELL.EXE', parent: { executable: 'C:\\Windows\\System32\\svchost.exe' } } },
        { process: { executable: 'C:\\x\\powershell.exe', parent: { executable: 'C:\\Windows\\explorer.exe' } } },
        { process: { executable: 'C:\\x\\renamed.exe', pe: { original_file_name: 'PowerShell.EXE' } } },
        { process: { executable: 'C:\\x\\cmd.exe', parent: { executable: 'C:\\Windows\\System32\\svchost.exe' } } },
        { process: { executable: 'C:\\x\\pwsh.exe', parent: { executable: 'C:\\Program Files\\Windows Defender Advanced Threat Protection\\SenseIR.exe' } } },
      ]),
    ).toEqual([0, 2]);
  });

  it('attrib hiding files: needs both selections, respects the filters', () => {
    expect(
      matches(ATTRIB_HIDING, [
        { process: { executable: 'C:\\Windows\\System32\\attrib.exe', command_line: 'attrib +h x' } },
        { process: { executable: 'C:\\Windows\\System32\\attrib.exe', command_line: 'attrib -h x' } },
        { process: { executable: 'C:\\Windows\\System32\\attrib.exe', command_line: 'attrib +h C:\\desktop.ini x' } },
        // The Intel filter names the parent command line with a literal '*' (escaped in the rule).
        {
          process: {
            executable: 'C:\\Windows\\System32\\attrib.exe',
            command_line: '+R +H +S +A \\*.cui',
            parent: { executable: 'C:\\x\\cmd.exe', command_line: 'C:\\WINDOWS\\system32\\*.bat' },
          },
        },
        {
          process: {
            executable: 'C:\\Windows\\System32\\attrib.exe',
            command_line: '+R +H +S +A \\*.cui',
            parent: { executable: 'C:\\x\\cmd.exe', command_line: 'C:\\WINDOWS\\system32\\x.bat' },
          },
        },
      ]),
    ).toEqual([0, 4]);
  });

  it('evaluates RLIKE, IN, CIDR_MATCH and comparisons, and refuses what it cannot interpret', () => {
    const idx = index([{ process: { command_line: 'abc123' }, source: { ip: '10.1.2.3' }, port: 443 }]);
    idx.mapping.set('source.ip', 'ip');
    idx.docs[0] = { ...idx.docs[0]!, fields: indexDocument(idx, { process: { command_line: 'abc123' }, source: { ip: '10.1.2.3' }, port: 443 }) };
    const run = (where: string) => runEsql(parseEsql(`FROM x | WHERE ${where} | KEEP port`), [idx], () => true).values.length;
    expect(run('process.command_line RLIKE "abc[0-9]+"')).toBe(1);
    expect(run('process.command_line RLIKE "bc[0-9]+"')).toBe(0);
    expect(run('process.command_line IN ("x", "abc123")')).toBe(1);
    expect(run('CIDR_MATCH(source.ip, "10.0.0.0/8")')).toBe(1);
    expect(run('CIDR_MATCH(source.ip, "192.168.0.0/16")')).toBe(0);
    expect(run('port >= 443 AND port < 444')).toBe(1);
    expect(run('NOT COALESCE(process.parent.executable == "x", false)')).toBe(1);
    expect(run('process.parent.executable == "x" OR true')).toBe(1);
    expect(() => run('CIDR_MATCH(process.command_line, "10.0.0.0/8")')).toThrow(EsqlError);
    expect(() => parseEsql('FROM x | EVAL y = 1')).toThrow(/does not implement the ES\|QL command \[EVAL\]/);
    expect(() => run('MYSTERY(port)')).toThrow(/Unknown function/);
  });
});
