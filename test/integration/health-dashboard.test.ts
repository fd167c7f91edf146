import { createApiKey, createTenant, processRule, startTestService, type TestService, until } from '../support/harness';

/**
 * GET /health/dashboard and its Navigator layer, on a history made through the public API and real
 * scheduled detection: rules with ATT&CK tags and levels deployed to two local targets (dev and
 * prod), events sent with POST /events, alerts raised by the detection schedules, then assigned,
 * dispositioned and closed with PATCH /alerts/{id}. Every figure is checked against values worked
 * out here: by hand for the coverage and the value scores, and from the alerts read back through
 * GET /alerts for what depends on the times the service recorded (MTTR).
 */

type Alert = {
  id: string;
  rule_id: string;
  target: string;
  status: string;
  disposition: string | null;
  team: string | null;
  assignee: string | null;
  created_at: string;
  closed_at: string | null;
};

/** The rules of the default tenant: level, tags, the image their one selection matches, and where they run. */
const R = {
  r1: { id: 'da000000-0000-4000-8000-000000000001', level: 'high', tags: ['attack.execution', 'attack.t1059.001'], image: 'dash-r1.exe', target: 'local' },
  r2: { id: 'da000000-0000-4000-8000-000000000002', level: 'critical', tags: ['attack.execution', 'attack.t1059', 'attack.t1059.001'], image: 'dash-r2.exe', target: 'local' },
  // A pre-v19 tactic and a technique v19 withdrew, beside a v19 technique.
  r3: {
    id: 'da000000-0000-4000-8000-000000000003',
    level: 'medium',
    tags: ['attack.defense-evasion', 'attack.t1685', 'attack.t1562.001'],
    image: 'dash-r3.exe',
    target: 'local',
  },
  r4: { id: 'da000000-0000-4000-8000-000000000004', level: 'low', tags: ['attack.persistence'], image: 'dash-r4.exe', target: 'local' },
  // Demoted by its noise budget: covers nothing.
  r5: { id: 'da000000-0000-4000-8000-000000000005', level: 'medium', tags: ['attack.impact', 'attack.t1485'], image: 'dash-r5.exe', target: 'local' },
  r6: { id: 'da000000-0000-4000-8000-000000000006', level: 'high', tags: ['attack.initial-access', 'attack.t1190'], image: 'dash-r6.exe', target: 'prod-local' },
} as const;
type Key = keyof typeof R;
const OTHER_RULE = 'da000000-0000-4000-8000-0000000000ff';

let seq = 0;
const event = (image: string) => JSON.stringify({ '@timestamp': new Date().toISOString(), Image: `C:\\Tools\\${image}`, CommandLine: `${image} ${++seq}` });

describe('GET /health/dashboard', () => {
  let svc: TestService;
  /** Added to the API's clock: moves "now" for the window check at the end. */
  let clockOffsetMs = 0;
  let otherAdmin: string;
  let devReader: string;
  const deployments = {} as Record<Key, string>;
  const alertsOf = {} as Record<Key, Alert[]>;

  const dashboard = async (query = '', token?: string) => {
    const res = await svc.request('GET', `/api/v1/health/dashboard${query}`, token ? { token } : {});
    expect(res.status).toBe(200);
    return res.body;
  };
  const allAlerts = async (token?: string): Promise<Alert[]> => (await svc.request('GET', '/api/v1/alerts?limit=500', token ? { token } : {})).body.items;

  async function deployRule(token: string | undefined, id: string, title: string, level: string, tags: readonly string[], image: string, target: string, budget?: object) {
    const opts = token ? { token } : {};
    const stored = await svc.request('POST', '/api/v1/rules', { ...opts, body: { rule: processRule(id, { title, level, tags: [...tags], image: `\\${image}` }) } });
    expect(stored.status).toBe(201);
    const res = await svc.request('POST', '/api/v1/rules/deploy', {
      ...opts,
      body: { rule_id: id, target, approval_required: false, ...(budget ? { noise_budget: budget } : {}) },
    });
    expect(res.status).toBe(202);
    expect(await svc.client.workflow.getHandle(res.body.workflow_id).result()).toMatchObject({ status: 'active' });
    return res.body.id as string;
  }
  async function ingest(token: string | undefined, target: string, image: string, n: number) {
    const res = await svc.request('POST', `/api/v1/events?target=${target}&product=windows&category=process_creation`, {
      ...(token ? { token } : {}),
      body: Array.from({ length: n }, () => event(image)).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(res.body.accepted).toBe(n);
  }
  const waitForAlerts = (deploymentId: string, n: number, token?: string) =>
    until(`${n} alerts of ${deploymentId}`, async () => {
      const items: Alert[] = (await svc.request('GET', `/api/v1/alerts?deployment_id=${deploymentId}&limit=500`, token ? { token } : {})).body.items;
      return items.length >= n ? items : undefined;
    });
  const triage = async (alert: Alert | undefined, body: Record<string, unknown>, token?: string) => {
    const res = await svc.request('PATCH', `/api/v1/alerts/${alert!.id}`, { ...(token ? { token } : {}), body });
    expect(res.status).toBe(200);
  };
  /** Detection every second on a target of a tenant. */
  async function detectEverySecondOn(token: string | undefined, name: string) {
    const opts = token ? { token } : {};
    const t = (await svc.request('GET', `/api/v1/settings/targets/${name}`, opts)).body;
    const put = await svc.request('PUT', `/api/v1/settings/targets/${name}`, {
      ...opts,
      body: { name: t.name, kind: t.kind, environment: t.environment, connection: t.connection, cost_model: t.cost_model, detection_interval: 'PT1S' },
    });
    expect(put.status).toBe(200);
  }

  beforeAll(async () => {
    svc = await startTestService({ now: () => new Date(Date.now() + clockOffsetMs) });
    // Local: the built-in cost model (USD, 15 min × 75/h = 18.75 per alert). Prod: 30 min × 100/h = 50.
    await detectEverySecondOn(undefined, 'local');
    const prod = await svc.request('POST', '/api/v1/settings/targets', {
      body: {
        name: 'prod-local',
        kind: 'local',
        environment: 'prod',
        detection_interval: 'PT1S',
        cost_model: { currency: 'USD', price_per_gb_scanned: 0, triage_minutes_per_alert: 30, cost_per_analyst_hour: 100 },
      },
    });
    expect(prod.status).toBe(201);
    devReader = (await createApiKey(svc, svc.token, { name: 'dev reader', permissions: ['rules:read'], environments: ['dev'] })).token;

    for (const key of Object.keys(R) as Key[]) {
      const r = R[key];
      const budget = key === 'r5' ? { max_alerts_per_day: 1, on_exceed: 'demote' } : undefined;
      deployments[key] = await deployRule(undefined, r.id, `Dashboard ${key}`, r.level, r.tags, r.image, r.target, budget);
    }
    const events: Record<Key, number> = { r1: 4, r2: 3, r3: 2, r4: 1, r5: 2, r6: 1 };
    for (const key of Object.keys(R) as Key[]) await ingest(undefined, R[key].target, R[key].image, events[key]);
    for (const key of Object.keys(R) as Key[]) alertsOf[key] = await waitForAlerts(deployments[key], events[key]);
    await until('r5 demoted', async () => ((await svc.request('GET', `/api/v1/deployments/${deployments.r5}`)).body.status === 'demoted' ? true : undefined));
    expect(alertsOf.r5.map((a) => a.status).sort()).toEqual(['open', 'suppressed']);

    // Triage, some time after the alerts were raised.
    await new Promise((r) => setTimeout(r, 300));
    const [a1, a2, a3, a4] = alertsOf.r1;
    await triage(a1, { team: 'soc', assignee: 'ana', disposition: 'true_positive' });
    await triage(a2, { team: 'soc', assignee: 'ana', disposition: 'false_positive' });
    await triage(a3, { team: 'soc', assignee: 'bo', status: 'acknowledged' });
    await new Promise((r) => setTimeout(r, 200));
    await triage(a4, { team: 'ir', assignee: 'cy', disposition: 'benign' });
    const [b1, b2] = alertsOf.r2; // the third stays open, with no team
    await triage(b1, { team: 'ir', assignee: 'cy', disposition: 'true_positive' });
    await triage(b2, { team: 'soc', assignee: 'bo', disposition: 'duplicate' });
    const [c1, c2] = alertsOf.r3;
    await triage(c1, { team: 'soc', assignee: 'ana', disposition: 'false_positive' });
    // Closed without a verdict, reopened, closed again: resolved at the last close.
    await triage(c2, { team: 'soc', assignee: 'ana', status: 'closed' });
    await triage(c2, { status: 'open' });
    await new Promise((r) => setTimeout(r, 100));
    await triage(c2, { status: 'closed' });
    await triage(alertsOf.r6[0], { team: 'ir', assignee: 'cy', disposition: 'true_positive' });

    // Another tenant, with the same team and assignee names: none of it may count for the default tenant.
    otherAdmin = await createTenant(svc, 'dash-other');
    await detectEverySecondOn(otherAdmin, 'local');
    const otherDeployment = await deployRule(otherAdmin, OTHER_RULE, 'Other tenant', 'critical', ['attack.impact', 'attack.t1485'], 'dash-other.exe', 'local');
    await ingest(otherAdmin, 'local', 'dash-other.exe', 2);
    const other = await waitForAlerts(otherDeployment, 2, otherAdmin);
    await triage(other[0], { team: 'soc', assignee: 'ana', disposition: 'false_positive' }, otherAdmin);
    await triage(other[1], { team: 'soc', assignee: 'ana', status: 'acknowledged' }, otherAdmin);
  }, 180_000);
  afterAll(() => svc.close());

  /** Noise, workload and MTTR worked out from the alerts as GET /alerts shows them to `token`. */
  function expectedFromAlerts(alerts: Alert[]) {
    const levelOf = new Map<string, string>(Object.values(R).map((r) => [r.id, r.level]));
    const count = (d: string) => alerts.filter((a) => a.disposition === d).length;
    const dispositioned = alerts.filter((a) => a.disposition !== null).length;
    const closed = alerts.filter((a) => a.status === 'closed');
    const seconds = (a: Alert) => (Date.parse(a.closed_at!) - Date.parse(a.created_at)) / 1000;
    const mean = (list: Alert[]) => (list.length ? list.reduce((s, a) => s + seconds(a), 0) / list.length : null);
    const groups = <K>(list: Alert[], key: (a: Alert) => K) => [...new Set(list.map(key))].map((k) => [k, list.filter((a) => key(a) === k)] as const);
    return {
      noise: { tp: count('true_positive'), fp: count('false_positive'), benign: count('benign'), duplicate: count('duplicate'), dispositioned },
      open: alerts.filter((a) => a.status === 'open' || a.status === 'acknowledged'),
      closed,
      mttr: {
        overall: mean(closed),
        byTeam: new Map(groups(closed, (a) => a.team).map(([team, list]) => [team, { alerts: list.length, mean: mean(list) }])),
        byLevel: new Map(groups(closed, (a) => levelOf.get(a.rule_id) ?? null).map(([level, list]) => [level, { alerts: list.length, mean: mean(list) }])),
      },
    };
  }

  it('counts the ATT&CK coverage of the active rules: techniques and sub-techniques apart, tactics of v19, demoted rules out', async () => {
    const d = await dashboard();
    expect(d.active_rules).toEqual({ rules: 5, deployments: 5, demoted_deployments: 1, reason: null });
    const c = d.coverage;
    expect(c.attack).toMatchObject({ domain: 'enterprise-attack', version: '19', released: '2026-04-14', attribution: expect.stringMatching(/MITRE Corporation/) });
    expect(c.rules).toBe(5);
    // T1059 (r2), T1190 (r6), T1685 (r3); T1059.001 (r1, r2) covers the sub-technique only. r5's T1485 is demoted.
    expect(c.covered).toEqual([
      { id: 'T1059', name: 'Command and Scripting Interpreter', parent: null, tactics: ['execution'], rules: [R.r2.id] },
      { id: 'T1059.001', name: 'PowerShell', parent: 'T1059', tactics: ['execution'], rules: [R.r1.id, R.r2.id] },
      { id: 'T1190', name: 'Exploit Public-Facing Application', parent: null, tactics: ['initial-access'], rules: [R.r6.id] },
      { id: 'T1685', name: 'Disable or Modify Tools', parent: null, tactics: ['defense-impairment'], rules: [R.r3.id] },
    ]);
    expect(c.techniques).toEqual({ covered: 3, total: 222, ratio: 0.0135 });
    expect(c.sub_techniques).toEqual({ covered: 1, total: 475, ratio: 0.0021 });
    expect(c.outside_matrix).toEqual([{ technique: 'T1562.001', reason: 'not_in_matrix', counted_as: null, rules: [R.r3.id] }]);
    expect(c.legacy_tactic_tags).toEqual([{ tactic: 'defense-evasion', rules: [R.r3.id], counted_as: { 'defense-impairment': 1 } }]);
    const tactic = (s: string) => c.tactics.items.find((t: any) => t.shortname === s);
    expect(c.tactics).toMatchObject({ covered: 4, total: 15, ratio: 0.2667 });
    expect(c.tactics.items.filter((t: any) => t.covered).map((t: any) => t.shortname)).toEqual(['initial-access', 'execution', 'persistence', 'defense-impairment']);
    expect(tactic('execution')).toMatchObject({ id: 'TA0002', tagged_by_rules: 2, techniques: { covered: 1 }, sub_techniques: { covered: 1 } });
    expect(tactic('persistence')).toMatchObject({ tagged_by_rules: 1, techniques: { covered: 0 }, sub_techniques: { covered: 0 } });
    expect(tactic('defense-impairment')).toMatchObject({ id: 'TA0112', tagged_by_rules: 1, techniques: { covered: 1 } });
    expect(tactic('stealth')).toMatchObject({ covered: false, tagged_by_rules: 0 });
    expect(tactic('impact')).toMatchObject({ covered: false });
    expect(c.reason).toBeNull();
    // Six deployments live in the window, each with its change's projection, none live a day yet: none compared.
    expect(d.forecast_accuracy).toMatchObject({ deployments: 6, compared: 0, excluded: { no_projection: 0, no_observation: 0, short_observation: 6 } });
  });

  it('computes noise ratio, team workload and MTTR from the dispositions and the times the service recorded', async () => {
    const d = await dashboard();
    const alerts = await allAlerts();
    expect(alerts.filter((a) => a.rule_id !== OTHER_RULE)).toHaveLength(13);
    const x = expectedFromAlerts(alerts);
    // By hand: TP a1 b1 e1, FP a2 c1, benign a4, duplicate b2 → (2 + 1) / 7.
    expect(x.noise).toEqual({ tp: 3, fp: 2, benign: 1, duplicate: 1, dispositioned: 7 });
    expect(d.noise).toEqual({ ratio: 0.4286, dispositioned: 7, true_positive: 3, false_positive: 2, benign: 1, duplicate: 1, reason: null });

    // Waiting: a3 (soc/bo, acknowledged), b3, r4's and r5's open alert (no team); r5's suppressed one is never worked.
    // Handled: a1 a2 c1 c2 (soc/ana), b2 (soc/bo), a4 b1 e1 (ir/cy).
    expect(d.workload).toEqual({
      total: { open: 4, acknowledged: 1, handled: 8 },
      teams: [
        { team: 'ir', open: 0, acknowledged: 0, handled: 3, assignees: [{ assignee: 'cy', open: 0, acknowledged: 0, handled: 3 }] },
        {
          team: 'soc',
          open: 1,
          acknowledged: 1,
          handled: 5,
          assignees: [
            { assignee: 'ana', open: 0, acknowledged: 0, handled: 4 },
            { assignee: 'bo', open: 1, acknowledged: 1, handled: 1 },
          ],
        },
        { team: null, open: 3, acknowledged: 0, handled: 0, assignees: [{ assignee: null, open: 3, acknowledged: 0, handled: 0 }] },
      ],
      reason: null,
    });
    expect(x.open).toHaveLength(4);
    expect(x.closed).toHaveLength(8);

    expect(d.mttr.reason).toBeNull();
    expect(d.mttr.overall.alerts).toBe(8);
    expect(d.mttr.overall.mean_seconds).toBeCloseTo(x.mttr.overall!, 2);
    expect(d.mttr.overall.mean_seconds).toBeGreaterThan(0.2);
    expect(d.mttr.by_team.map((t: any) => t.team)).toEqual(['ir', 'soc']);
    for (const t of d.mttr.by_team) {
      expect(t.alerts).toBe(x.mttr.byTeam.get(t.team)!.alerts);
      expect(t.mean_seconds).toBeCloseTo(x.mttr.byTeam.get(t.team)!.mean!, 2);
    }
    // Most severe first: critical (b1 b2), high (a1 a2 a4 e1), medium (c1 c2).
    expect(d.mttr.by_severity.map((s: any) => [s.level, s.alerts])).toEqual([
      ['critical', 2],
      ['high', 4],
      ['medium', 2],
    ]);
    for (const s of d.mttr.by_severity) expect(s.mean_seconds).toBeCloseTo(x.mttr.byLevel.get(s.level)!.mean!, 2);
    // c2 was reopened: it counts from its creation to its last close.
    const c2 = alerts.find((a) => a.id === alertsOf.r3[1]!.id)!;
    expect(Date.parse(c2.closed_at!) - Date.parse(c2.created_at)).toBeGreaterThan(100);
  });

  it('scores each active rule by the documented formula, with its parts', async () => {
    const d = await dashboard();
    const v = d.value_scores;
    expect(v.weights).toEqual({ signal: 0.4, uniqueness: 0.25, severity: 0.2, cost: 0.15 });
    expect(v.formula).toMatch(/score = 100 × Σ wᵢ·pᵢ \/ Σ wᵢ/);
    const score = (key: Key) => v.rules.find((r: any) => r.rule_id === R[key].id);
    expect(score('r5')).toBeUndefined();
    // Triage cost: alerts × 18.75 on local, × 50 on prod-local; the most expensive is r1 (4 × 18.75 = 75).
    // r1: signal 1/3 (TP a1, FP a2, benign a4); T1059.001 shared with r2 → 1/2; high 0.75; cost 1 − 75/75 = 0 → 40.8
    // r2: signal 1/1 (duplicate b2 left out); mean(T1059 1, T1059.001 1/2) = 0.75; critical 1; cost 1 − 56.25/75 = 0.25 → 82.5
    // r3: signal 0/1; T1685 alone → 1; medium 0.5; cost 1 − 37.5/75 = 0.5 → 42.5
    // r4: no verdict → signal left out; no technique → 0; low 0.25; cost 1 − 18.75/75 = 0.75 → (0.05 + 0.1125) / 0.6 = 27.1
    // r6: signal 1/1; T1190 alone → 1; high 0.75; cost 1 − 50/75 = 1/3 → 85
    expect(v.rules.map((r: any) => [r.rule_id, r.score])).toEqual([
      [R.r6.id, 85],
      [R.r2.id, 82.5],
      [R.r3.id, 42.5],
      [R.r1.id, 40.8],
      [R.r4.id, 27.1],
    ]);
    expect(score('r1').parts).toMatchObject({
      signal: { weight: 0.4, value: 0.3333, snr: 0.5, true_positives: 1, false_positives: 1, benign: 1, reason: null },
      uniqueness: { weight: 0.25, value: 0.5, techniques: [{ id: 'T1059.001', other_rules: 1 }] },
      severity: { weight: 0.2, value: 0.75, level: 'high' },
      cost: {
        weight: 0.15,
        value: 0,
        currency: 'USD',
        triage_cost: 75,
        scan_cost: null,
        total: 75,
        alerts_triaged: 4,
        scan_cost_reason: expect.stringMatching(/no scan cost/),
      },
    });
    expect(score('r2').parts.signal).toMatchObject({ value: 1, snr: null, true_positives: 1 });
    expect(score('r2').parts.cost).toMatchObject({ value: 0.25, triage_cost: 56.25 });
    expect(score('r6').parts.cost).toMatchObject({ value: 0.3333, triage_cost: 50 });
    expect(score('r4')).toMatchObject({
      level: 'low',
      missing: ['signal'],
      parts: { signal: { value: null, points: null, reason: expect.any(String) }, uniqueness: { value: 0 } },
    });
    for (const r of v.rules)
      expect(r.score).toBeCloseTo(
        Object.values(r.parts).reduce((s: number, p: any) => s + (p.points ?? 0), 0),
        1,
      );
  });

  it('serves the coverage as an ATT&CK Navigator layer scored by active rules', async () => {
    const res = await svc.request('GET', '/api/v1/health/dashboard/navigator-layer');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/attachment; filename="detflow-coverage-default\.json"/);
    expect(res.body).toMatchObject({ name: 'detflow coverage: default', domain: 'enterprise-attack', versions: { attack: '19', navigator: '5.2.0', layer: '4.5' } });
    expect(res.body.techniques.map((t: any) => [t.techniqueID, t.score])).toEqual([
      ['T1059', 1],
      ['T1059.001', 2],
      ['T1190', 1],
      ['T1685', 1],
    ]);
    expect(res.body.techniques[1].metadata).toEqual([
      { name: 'rule', value: `Dashboard r1 (${R.r1.id})` },
      { name: 'rule', value: `Dashboard r2 (${R.r2.id})` },
    ]);
    expect(res.body.gradient).toMatchObject({ minValue: 0, maxValue: 2 });
  });

  it('a token limited to dev sees only what runs on dev targets', async () => {
    const d = await dashboard('', devReader);
    expect(d.environments).toEqual(['dev']);
    expect(d.active_rules).toMatchObject({ rules: 4, deployments: 4, demoted_deployments: 1 });
    expect(d.coverage.covered.map((c: any) => c.id)).toEqual(['T1059', 'T1059.001', 'T1685']);
    const x = expectedFromAlerts(await allAlerts(devReader));
    expect(x.noise).toEqual({ tp: 2, fp: 2, benign: 1, duplicate: 1, dispositioned: 6 });
    expect(d.noise).toMatchObject({ ratio: 0.5, dispositioned: 6 });
    expect(d.workload.total).toEqual({ open: 4, acknowledged: 1, handled: 7 });
    expect(d.mttr.overall.alerts).toBe(7);
    expect(d.mttr.overall.mean_seconds).toBeCloseTo(x.mttr.overall!, 2);
    // Without r6, r1 is still the most expensive; r6 is gone.
    expect(d.value_scores.rules.map((r: any) => r.rule_id)).not.toContain(R.r6.id);
    const layer = (await svc.request('GET', '/api/v1/health/dashboard/navigator-layer', { token: devReader })).body;
    expect(layer.techniques.map((t: any) => t.techniqueID)).toEqual(['T1059', 'T1059.001', 'T1685']);
  });

  it('another tenant sees its own figures only, and none of them counted above', async () => {
    const d = await dashboard('', otherAdmin);
    expect(d.active_rules).toMatchObject({ rules: 1, deployments: 1, demoted_deployments: 0 });
    expect(d.coverage.covered.map((c: any) => [c.id, c.rules])).toEqual([['T1485', [OTHER_RULE]]]);
    expect(d.noise).toMatchObject({ ratio: 1, dispositioned: 1, false_positive: 1 });
    expect(d.workload.total).toEqual({ open: 1, acknowledged: 1, handled: 1 });
    expect(d.mttr.overall.alerts).toBe(1);
    expect(d.value_scores.rules.map((r: any) => r.rule_id)).toEqual([OTHER_RULE]);
  });

  it('a tenant with no data: explicit nulls, each with its reason', async () => {
    const empty = await createTenant(svc, 'dash-empty');
    const d = await dashboard('', empty);
    expect(d.active_rules).toEqual({ rules: 0, deployments: 0, demoted_deployments: 0, reason: expect.stringMatching(/no rule is active/) });
    expect(d.coverage).toMatchObject({
      rules: 0,
      covered: [],
      techniques: { covered: 0, total: 222 },
      tactics: { covered: 0 },
      reason: expect.stringMatching(/no rule is active/),
    });
    expect(d.noise).toEqual({ ratio: null, dispositioned: 0, true_positive: 0, false_positive: 0, benign: 0, duplicate: 0, reason: expect.stringMatching(/disposition/) });
    expect(d.workload).toEqual({ total: { open: 0, acknowledged: 0, handled: 0 }, teams: [], reason: expect.any(String) });
    expect(d.mttr).toEqual({ overall: { alerts: 0, mean_seconds: null }, by_team: [], by_severity: [], reason: expect.stringMatching(/closed/) });
    expect(d.value_scores).toMatchObject({ rules: [], reason: expect.stringMatching(/no rule is active/) });
    const layer = await svc.request('GET', '/api/v1/health/dashboard/navigator-layer', { token: empty });
    expect(layer.status).toBe(200);
    expect(layer.body.techniques).toEqual([]);
  });

  it('window: an ISO 8601 duration, P30D by default; alert-based figures use it, the backlog does not', async () => {
    const d = await dashboard();
    expect(d.window.duration).toBe('P30D');
    expect(Date.parse(d.window.to) - Date.parse(d.window.from)).toBe(30 * 86_400_000);
    // Two days later, a one-day window holds no alert raised or closed today: the open ones still wait.
    clockOffsetMs = 2 * 86_400_000;
    try {
      const later = await dashboard('?window=P1D');
      expect(later.window.duration).toBe('P1D');
      expect(later.noise).toMatchObject({ ratio: null, dispositioned: 0 });
      expect(later.mttr.overall).toEqual({ alerts: 0, mean_seconds: null });
      expect(later.workload.total).toEqual({ open: 4, acknowledged: 1, handled: 0 });
      expect(later.value_scores.rules.every((r: any) => r.parts.signal.value === null && r.parts.cost.alerts_triaged === 0)).toBe(true);
      expect(later.coverage.covered).toHaveLength(4);
      const wide = await dashboard('?window=P3D');
      expect(wide.noise.dispositioned).toBe(7);
    } finally {
      clockOffsetMs = 0;
    }
  });

  it('a bad window, or a parameter it does not take: 400 problem+json', async () => {
    for (const q of ['?window=30d', '?window=P0D', '?window=PT1S', '?window=P400D', '?window=', '?limit=5']) {
      const res = await svc.request('GET', `/api/v1/health/dashboard${q}`);
      expect([q, res.status]).toEqual([q, 400]);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await svc.request('GET', '/api/v1/health/dashboard/navigator-layer?window=P1D')).status).toBe(400);
    expect((await svc.request('GET', '/api/v1/health/dashboard', { token: null })).status).toBe(401);
  });
});
