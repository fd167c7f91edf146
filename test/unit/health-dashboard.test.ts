import { attackCoverage } from '../../domain/health/attack-coverage';
import { tacticsOfTags } from '../../domain/health/attack-tactic-tags';
import { activeRulesOf } from '../../domain/health/dashboard';
import { mttr } from '../../domain/health/mttr';
import { navigatorLayer, type NavigatorLayer } from '../../domain/health/navigator-layer';
import { noiseRatio, NO_DISPOSITIONS } from '../../domain/health/noise-ratio';
import { teamWorkload } from '../../domain/health/team-workload';
import { valueScores, type ValueScoreInput } from '../../domain/health/value-score';
import { ATTACK_MATRIX } from '../../sigma/data/attack-matrix';

/** The pure parts of the health dashboard, on numbers worked out by hand here. */

describe('ATT&CK coverage', () => {
  const coverage = attackCoverage([
    { ruleId: 'a', title: 'A', tags: ['attack.execution', 'attack.t1059.001'] },
    { ruleId: 'b', title: 'B', tags: ['attack.execution', 'attack.t1059', 'attack.T1059.001'] },
    { ruleId: 'c', title: 'C', tags: ['attack.defense-evasion', 'attack.t1685', 'attack.t1562.001', 'attack.t9999'] },
    { ruleId: 'd', title: 'D', tags: ['attack.defense-evasion', 'attack.persistence'] },
    { ruleId: 'e', title: 'E', tags: ['detection.threat-hunting'] },
  ]);

  it('counts a sub-technique as itself, not its parent, and techniques and sub-techniques apart', () => {
    expect(coverage.covered.map((c) => [c.id, c.parent, c.rules])).toEqual([
      ['T1059', null, ['b']],
      ['T1059.001', 'T1059', ['a', 'b']],
      ['T1685', null, ['c']],
    ]);
    expect(coverage.techniques).toEqual({ covered: 2, total: 222, ratio: 0.009 });
    expect(coverage.subTechniques).toEqual({ covered: 1, total: 475, ratio: 0.0021 });
    expect(coverage.perRule.get('a')!.techniques).toEqual(['T1059.001']);
  });

  it('lists techniques the matrix does not hold, covering nothing', () => {
    expect(coverage.outsideMatrix).toEqual([
      { technique: 'T1562.001', reason: 'not_in_matrix', countedAs: null, rules: ['c'] },
      { technique: 'T9999', reason: 'not_in_matrix', countedAs: null, rules: ['c'] },
    ]);
  });

  it('covers a tactic through a technique of it or a tag naming it; counts defense-evasion by the rule’s techniques, else as stealth', () => {
    const tactic = (s: string) => coverage.tactics.items.find((t) => t.shortname === s)!;
    expect(tactic('execution')).toMatchObject({ covered: true, taggedByRules: 2, techniques: { covered: 1 }, subTechniques: { covered: 1 } });
    // c names T1685 (defense-impairment): its defense-evasion counts there; d names no technique: stealth.
    expect(tactic('defense-impairment')).toMatchObject({ covered: true, taggedByRules: 1, techniques: { covered: 1 } });
    expect(tactic('stealth')).toMatchObject({ covered: true, taggedByRules: 1, techniques: { covered: 0 } });
    expect(tactic('persistence')).toMatchObject({ covered: true, taggedByRules: 1 });
    expect(tactic('impact')).toMatchObject({ covered: false, taggedByRules: 0 });
    expect(coverage.tactics).toMatchObject({ covered: 4, total: 15 });
    expect(coverage.legacyTactics).toEqual([{ tactic: 'defense-evasion', rules: ['c', 'd'], countedAs: { 'defense-impairment': 1, stealth: 1 } }]);
    expect(coverage.tactics.items.map((t) => t.shortname)).toEqual(ATTACK_MATRIX.tactics.map((t) => t.shortname));
  });

  it('counts defense-evasion toward both halves when the rule has techniques of both', () => {
    expect(tacticsOfTags(['attack.defense-evasion', 'attack.t1685', 'attack.t1036'], ['T1036', 'T1685'])).toEqual({
      tactics: ['defense-impairment', 'stealth'],
      legacy: [{ tactic: 'defense-evasion', countedAs: ['stealth', 'defense-impairment'] }],
    });
    expect(tacticsOfTags(['attack.g0016', 'attack.t1059', 'attack.privilege_escalation', 'attack.stealth'], ['T1059'])).toEqual({ tactics: ['stealth'], legacy: [] });
  });

  it('with no active rule, covers nothing and divides by nothing it lacks', () => {
    const none = attackCoverage([]);
    expect(none).toMatchObject({ rules: 0, techniques: { covered: 0, total: 222, ratio: 0 }, tactics: { covered: 0, total: 15 }, covered: [] });
  });
});

describe('active rules', () => {
  it('folds a rule’s active deployments: tags united, the most severe level, the newest title; demoted ones left out', () => {
    const d = (ruleId: string, version: number, targetId: string, level: string | null, tags: string[], status: 'active' | 'demoted' = 'active') => ({
      ruleId,
      version,
      targetId,
      level,
      tags,
      status,
      title: `${ruleId} v${version}`,
    });
    expect(
      activeRulesOf([
        d('r', 1, 't1', 'medium', ['attack.t1059']),
        d('r', 2, 't2', 'critical', ['attack.t1036']),
        d('r', 3, 't3', 'low', ['attack.t1105'], 'demoted'),
        d('s', 1, 't1', 'high', [], 'demoted'),
      ]),
    ).toEqual([{ ruleId: 'r', title: 'r v2', level: 'critical', tags: ['attack.t1059', 'attack.t1036'], versions: [1, 2], targetIds: ['t1', 't2'] }]);
  });
});

describe('noise ratio', () => {
  it('is (false positives + benign) over every dispositioned alert', () => {
    expect(noiseRatio({ truePositive: 3, falsePositive: 4, benign: 2, duplicate: 1 })).toMatchObject({ dispositioned: 10, ratio: 0.6, reason: null });
  });
  it('is null with a reason when nothing was dispositioned', () => {
    expect(noiseRatio(NO_DISPOSITIONS)).toMatchObject({ dispositioned: 0, ratio: null, reason: expect.stringMatching(/no alert/) });
  });
});

describe('team workload', () => {
  it('sums per team and assignee, named groups first', () => {
    const report = teamWorkload([
      { team: 'soc', assignee: 'bo', open: 1, acknowledged: 1, handled: 2 },
      { team: null, assignee: null, open: 3, acknowledged: 0, handled: 0 },
      { team: 'soc', assignee: 'ana', open: 2, acknowledged: 0, handled: 1 },
      { team: 'ir', assignee: null, open: 0, acknowledged: 0, handled: 4 },
    ]);
    expect(report.total).toEqual({ open: 6, acknowledged: 1, handled: 7 });
    expect(report.teams).toEqual([
      { team: 'ir', open: 0, acknowledged: 0, handled: 4, assignees: [{ assignee: null, open: 0, acknowledged: 0, handled: 4 }] },
      {
        team: 'soc',
        open: 3,
        acknowledged: 1,
        handled: 3,
        assignees: [
          { assignee: 'ana', open: 2, acknowledged: 0, handled: 1 },
          { assignee: 'bo', open: 1, acknowledged: 1, handled: 2 },
        ],
      },
      { team: null, open: 3, acknowledged: 0, handled: 0, assignees: [{ assignee: null, open: 3, acknowledged: 0, handled: 0 }] },
    ]);
  });
  it('says why it is empty', () => {
    expect(teamWorkload([])).toMatchObject({ teams: [], reason: expect.any(String) });
  });
});

describe('MTTR', () => {
  it('is the mean resolution time overall, per team and per severity (most severe first)', () => {
    const report = mttr([
      { team: 'soc', level: 'high', alerts: 2, seconds: 100 },
      { team: 'soc', level: 'low', alerts: 1, seconds: 10 },
      { team: 'ir', level: 'high', alerts: 1, seconds: 50 },
      { team: null, level: null, alerts: 1, seconds: 40 },
    ]);
    expect(report.overall).toEqual({ alerts: 5, meanSeconds: 40 });
    expect(report.byTeam).toEqual([
      { team: 'ir', alerts: 1, meanSeconds: 50 },
      { team: 'soc', alerts: 3, meanSeconds: 36.667 },
      { team: null, alerts: 1, meanSeconds: 40 },
    ]);
    expect(report.bySeverity).toEqual([
      { level: 'high', alerts: 3, meanSeconds: 50 },
      { level: 'low', alerts: 1, meanSeconds: 10 },
      { level: null, alerts: 1, meanSeconds: 40 },
    ]);
  });
  it('is null with a reason when nothing was closed', () => {
    expect(mttr([])).toMatchObject({ overall: { alerts: 0, meanSeconds: null }, byTeam: [], reason: expect.any(String) });
  });
});

describe('detection value score', () => {
  const rule = (ruleId: string, over: Partial<ValueScoreInput>): ValueScoreInput => ({
    ruleId,
    title: ruleId,
    level: 'high',
    techniques: [],
    dispositions: NO_DISPOSITIONS,
    cost: { alertsTriaged: 0, triageCost: new Map([['USD', 0]]) },
    ...over,
  });
  const perTechnique = new Map([
    ['T1059', 2],
    ['T1036', 1],
  ]);
  const [a, b, c, d] = valueScores(
    [
      // signal 3/(3+1+0) = 0.75; uniqueness mean(1/2, 1/1) = 0.75; high 0.75; cost 1 − 10/40 = 0.75 → 75
      rule('a', {
        techniques: ['T1059', 'T1036'],
        dispositions: { truePositive: 3, falsePositive: 1, benign: 0, duplicate: 5 },
        cost: { alertsTriaged: 9, triageCost: new Map([['USD', 10]]) },
      }),
      // signal 0/(0+2+2) = 0; uniqueness 1/2; critical 1; cost 1 − 40/40 = 0 → 100 × (0.4·0 + 0.25·0.5 + 0.2·1 + 0.15·0) = 32.5
      rule('b', {
        level: 'critical',
        techniques: ['T1059'],
        dispositions: { truePositive: 0, falsePositive: 2, benign: 2, duplicate: 0 },
        cost: { alertsTriaged: 4, triageCost: new Map([['USD', 40]]) },
      }),
      // no verdict: signal unknown; no technique: uniqueness 0; low 0.25; cost 1 → 100 × (0.25·0 + 0.2·0.25 + 0.15·1) / 0.6 = 33.3
      rule('c', { level: 'low' }),
      // costs in two currencies and no level: cost and severity unknown; signal 1; uniqueness 0 → 100 × 0.4 / 0.65 = 61.5
      rule('d', {
        level: null,
        dispositions: { truePositive: 1, falsePositive: 0, benign: 0, duplicate: 0 },
        cost: {
          alertsTriaged: 2,
          triageCost: new Map([
            ['USD', 5],
            ['EUR', 5],
          ]),
        },
      }),
    ],
    perTechnique,
  );

  it('combines signal, uniqueness, severity and cost by the documented weights', () => {
    expect(a!.score).toBe(75);
    expect(a!.parts.signal).toMatchObject({ weight: 0.4, value: 0.75, snr: 3, truePositives: 3, falsePositives: 1, benign: 0, points: 30 });
    expect(a!.parts.uniqueness).toMatchObject({
      value: 0.75,
      techniques: [
        { id: 'T1059', otherRules: 1 },
        { id: 'T1036', otherRules: 0 },
      ],
    });
    expect(a!.parts.severity).toMatchObject({ value: 0.75, level: 'high' });
    expect(a!.parts.cost).toMatchObject({ value: 0.75, currency: 'USD', triageCost: 10, scanCost: null, total: 10, alertsTriaged: 9 });
    expect(b!.score).toBe(32.5);
    expect(b!.parts.signal).toMatchObject({ value: 0, snr: 0 });
    expect(b!.missing).toEqual([]);
  });

  it('leaves out unknown parts, scaling the others, and says why', () => {
    expect(c!.score).toBe(33.3);
    expect(c!.missing).toEqual(['signal']);
    expect(c!.parts.signal).toMatchObject({ value: null, points: null, snr: null, reason: expect.stringMatching(/dispositioned/) });
    expect(c!.parts.uniqueness).toMatchObject({ value: 0, reason: expect.stringMatching(/no technique/) });
    expect(d!.score).toBe(61.5);
    expect(d!.missing).toEqual(['severity', 'cost']);
    expect(d!.parts.cost).toMatchObject({ value: null, currency: null, triageCost: null, reason: expect.stringMatching(/several currencies \(USD, EUR\)/) });
    expect(d!.parts.severity.reason).toMatch(/no level/);
    for (const s of [a, b, c, d])
      expect(s!.score).toBeCloseTo(
        Object.values(s!.parts).reduce((sum, p) => sum + (p.points ?? 0), 0),
        1,
      );
  });
});

/**
 * The ATT&CK Navigator layer file format 4.5 (mitre-attack/attack-navigator, layers/spec/v4.5/
 * layerformat.md), as rules on the JSON: the properties it defines and no others, the required
 * ones, their types and allowed values.
 */
function layerFormatViolations(layer: Record<string, any>): string[] {
  const out: string[] = [];
  const check = (ok: boolean, what: string) => ok || out.push(what);
  const isBool = (v: unknown) => v === undefined || typeof v === 'boolean';
  const onlyKeys = (o: Record<string, unknown>, keys: string[], where: string) => {
    for (const k of Object.keys(o)) check(keys.includes(k), `${where}: unknown property ${k}`);
  };
  const hex = /^#[0-9a-fA-F]{6}$/;
  const version = (v: string) => v.split('.').map(Number);
  const atLeast = (v: string, min: string) => {
    const [a, b] = [version(v), version(min)];
    for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
    return true;
  };
  const metadataList = (list: unknown, where: string) => {
    check(Array.isArray(list), `${where}: metadata is an array`);
    for (const m of (list as any[]) ?? []) {
      if ('divider' in m) check(m.divider === true || m.divider === false, `${where}: divider is a boolean`);
      else check(typeof m.name === 'string' && typeof m.value === 'string', `${where}: metadata has string name and value`);
    }
  };
  onlyKeys(
    layer,
    [
      'versions',
      'name',
      'description',
      'domain',
      'customDataURL',
      'filters',
      'sorting',
      'layout',
      'hideDisabled',
      'techniques',
      'gradient',
      'legendItems',
      'showTacticRowBackground',
      'tacticRowBackground',
      'selectTechniquesAcrossTactics',
      'selectSubtechniquesWithParent',
      'selectVisibleTechniques',
      'metadata',
      'links',
    ],
    'layer',
  );
  check(typeof layer.name === 'string', 'name is a required string');
  check(['enterprise-attack', 'mobile-attack', 'ics-attack'].includes(layer.domain), 'domain is enterprise-attack, mobile-attack or ics-attack');
  check(layer.description === undefined || typeof layer.description === 'string', 'description is a string');
  if (layer.versions !== undefined) {
    onlyKeys(layer.versions, ['attack', 'navigator', 'layer'], 'versions');
    check(layer.versions.layer === '4.5', 'versions.layer must be "4.5"');
    check(typeof layer.versions.navigator === 'string' && atLeast(layer.versions.navigator, '4.9.0'), 'versions.navigator must be at least 4.9.0');
    check(layer.versions.attack === undefined || typeof layer.versions.attack === 'string', 'versions.attack is a string');
  }
  check(layer.sorting === undefined || [0, 1, 2, 3].includes(layer.sorting), 'sorting is 0, 1, 2 or 3');
  if (layer.layout !== undefined) {
    const l = layer.layout;
    onlyKeys(l, ['layout', 'showID', 'showName', 'showAggregateScores', 'countUnscored', 'aggregateFunction', 'expandedSubtechniques'], 'layout');
    check(l.layout === undefined || ['side', 'flat', 'mini'].includes(l.layout), 'layout.layout is side, flat or mini');
    check(l.aggregateFunction === undefined || ['average', 'min', 'max', 'sum'].includes(l.aggregateFunction), 'layout.aggregateFunction');
    check(l.expandedSubtechniques === undefined || ['none', 'all', 'annotated'].includes(l.expandedSubtechniques), 'layout.expandedSubtechniques');
    for (const k of ['showID', 'showName', 'showAggregateScores', 'countUnscored']) check(isBool(l[k]), `layout.${k} is a boolean`);
  }
  for (const k of ['hideDisabled', 'showTacticRowBackground', 'selectTechniquesAcrossTactics', 'selectSubtechniquesWithParent', 'selectVisibleTechniques'])
    check(isBool(layer[k]), `${k} is a boolean`);
  check(layer.tacticRowBackground === undefined || typeof layer.tacticRowBackground === 'string', 'tacticRowBackground is a string');
  const known = new Map(ATTACK_MATRIX.techniques.map((t) => [t.id, t]));
  for (const [i, t] of ((layer.techniques ?? []) as any[]).entries()) {
    const where = `techniques[${i}]`;
    onlyKeys(t, ['techniqueID', 'tactic', 'comment', 'enabled', 'score', 'color', 'metadata', 'links', 'showSubtechniques'], where);
    check(typeof t.techniqueID === 'string' && /^T\d{4}(\.\d{3})?$/.test(t.techniqueID), `${where}: techniqueID is T#### or T####.###`);
    check(known.has(t.techniqueID), `${where}: ${t.techniqueID} is a technique of the layer's ATT&CK version`);
    check(t.tactic === undefined || known.get(t.techniqueID)?.tactics.includes(t.tactic) === true, `${where}: tactic is one of the technique's`);
    check(t.score === undefined || (typeof t.score === 'number' && Number.isFinite(t.score)), `${where}: score is a number`);
    check(t.comment === undefined || typeof t.comment === 'string', `${where}: comment is a string`);
    check(isBool(t.enabled) && isBool(t.showSubtechniques), `${where}: enabled and showSubtechniques are booleans`);
    check(t.color === undefined || typeof t.color === 'string', `${where}: color is a string`);
    if (t.metadata !== undefined) metadataList(t.metadata, where);
    for (const link of t.links ?? []) check(typeof link.label === 'string' && /^[a-z]+:\/\//.test(link.url), `${where}: links have a label and a URL with a protocol`);
  }
  const g = layer.gradient;
  if (g !== undefined) {
    onlyKeys(g, ['colors', 'minValue', 'maxValue'], 'gradient');
    check(
      Array.isArray(g.colors) && g.colors.length >= 2 && g.colors.every((c: unknown) => typeof c === 'string' && hex.test(c)),
      'gradient.colors: at least two hex RGB colours',
    );
    check(typeof g.minValue === 'number' && typeof g.maxValue === 'number' && g.maxValue > g.minValue, 'gradient: maxValue > minValue');
  }
  for (const item of layer.legendItems ?? []) check(typeof item.label === 'string' && typeof item.color === 'string', 'legendItems have a label and a color');
  if (layer.metadata !== undefined) metadataList(layer.metadata, 'layer');
  return out;
}

describe('ATT&CK Navigator layer', () => {
  const ctx = (environments: string[] | null) => ({
    tenant: 'acme',
    environments,
    generatedAt: new Date('2026-05-01T10:00:00Z'),
    titles: new Map([
      ['a', 'Rule A'],
      ['b', 'Rule B'],
    ]),
  });
  const layer: NavigatorLayer = navigatorLayer(
    attackCoverage([
      { ruleId: 'a', title: 'Rule A', tags: ['attack.execution', 'attack.t1059.001', 'attack.t1059'] },
      { ruleId: 'b', title: 'Rule B', tags: ['attack.execution', 'attack.t1059.001'] },
    ]),
    ctx(['dev']),
  );

  it('follows the layer file format 4.5', () => {
    expect(layerFormatViolations(layer)).toEqual([]);
    expect(layer).toMatchObject({ domain: 'enterprise-attack', versions: { attack: '19', layer: '4.5' } });
  });

  it('scores each covered technique by its active rules, naming them', () => {
    expect(layer.techniques).toEqual([
      { techniqueID: 'T1059', score: 1, comment: '1 active rule: Rule A', enabled: true, metadata: [{ name: 'rule', value: 'Rule A (a)' }] },
      {
        techniqueID: 'T1059.001',
        score: 2,
        comment: '2 active rules: Rule A; Rule B',
        enabled: true,
        metadata: [
          { name: 'rule', value: 'Rule A (a)' },
          { name: 'rule', value: 'Rule B (b)' },
        ],
      },
    ]);
    expect(layer.gradient).toEqual({ colors: ['#ffffff', '#8ec843'], minValue: 0, maxValue: 2 });
    expect(layer.description).toMatch(/environments dev of tenant acme/);
  });

  it('is still a valid layer with no active rule (gradient 0 to 1)', () => {
    const empty = navigatorLayer(attackCoverage([]), ctx(null));
    expect(layerFormatViolations(empty)).toEqual([]);
    expect(empty.techniques).toEqual([]);
    expect(empty.gradient).toMatchObject({ minValue: 0, maxValue: 1 });
  });

  it('the format check catches what the format forbids', () => {
    const broken = {
      ...layer,
      domain: 'enterprise',
      versions: { attack: '19', navigator: '4.8.1', layer: '4.4' },
      gradient: { colors: ['red'], minValue: 1, maxValue: 1 },
      extra: 1,
    };
    broken.techniques = [{ ...layer.techniques[0]!, techniqueID: 'T1562.001', score: 'x' as unknown as number }];
    expect(layerFormatViolations(broken)).toEqual([
      'layer: unknown property extra',
      'domain is enterprise-attack, mobile-attack or ics-attack',
      'versions.layer must be "4.5"',
      'versions.navigator must be at least 4.9.0',
      "techniques[0]: T1562.001 is a technique of the layer's ATT&CK version",
      'techniques[0]: score is a number',
      'gradient.colors: at least two hex RGB colours',
      'gradient: maxValue > minValue',
    ]);
  });
});
