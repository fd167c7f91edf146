import type { DeploymentSpan } from '../../domain/health/deployment-history';
import { replacementsOf } from '../../domain/health/deployment-history';
import { changeSavings, budgetSavings, counterfactualRate } from '../../domain/health/noise-saved';
import { costAvoided } from '../../domain/health/cost-avoided';
import { coverageDeltas } from '../../domain/health/coverage-deltas';

const DAY = 86_400_000;
const T = Date.UTC(2026, 0, 1);
const at = (days: number) => new Date(T + days * DAY);
const USD = { currency: 'USD', price_per_gb_scanned: 0, triage_minutes_per_alert: 30, cost_per_analyst_hour: 60 };
const EUR = { currency: 'EUR', price_per_gb_scanned: 0, triage_minutes_per_alert: 6, cost_per_analyst_hour: 100 };

let n = 0;
function span(parts: Partial<DeploymentSpan> & Pick<DeploymentSpan, 'ruleId' | 'version' | 'activatedAt'>): DeploymentSpan {
  return {
    id: `d${++n}`,
    status: 'active',
    targetId: 't1',
    targetName: 'local',
    environment: 'dev',
    costModel: USD,
    endedAt: null,
    demotion: null,
    tags: [],
    ...parts,
  };
}

describe('ROI report rules', () => {
  it('pairs a replaced deployment with the one activated the instant it ended; a rollback with none is a removal until the rule is back', () => {
    const v1 = span({ ruleId: 'r', version: 1, activatedAt: at(0), endedAt: at(2), status: 'superseded' });
    const v2 = span({ ruleId: 'r', version: 2, activatedAt: at(2), endedAt: at(3), status: 'rolled_back' });
    const v1b = span({ ruleId: 'r', version: 1, activatedAt: at(3), endedAt: at(4), status: 'rolled_back' });
    const v3 = span({ ruleId: 'r', version: 3, activatedAt: at(6) });
    const elsewhere = span({ ruleId: 'r', version: 2, activatedAt: at(2), targetId: 't2' });
    const found = replacementsOf([v3, v1b, v2, v1, elsewhere]);
    expect(found.map((c) => [c.kind, c.replaced.id, c.replacement?.id ?? null, c.from, c.until])).toEqual([
      ['new_version', v1.id, v2.id, at(2), at(3)],
      ['rollback', v2.id, v1b.id, at(3), at(4)],
      ['removal', v1b.id, null, at(4), at(6)],
    ]);
  });

  it('takes the observed rate when the version was live long enough, else its newest replay, else none with the reason', () => {
    const replaced = span({ ruleId: 'r', version: 1, activatedAt: at(0), endedAt: at(2), status: 'superseded' });
    const replay = { id: 'rp', alerts: 30, from: at(-3), to: at(0) };
    expect(counterfactualRate(replaced, { raised: 10, suppressed: 6, shadowMatches: 4 }, replay, DAY)).toMatchObject({ basis: 'observed', alertsPerDay: 10 });
    expect(counterfactualRate(replaced, { raised: 10, suppressed: 6, shadowMatches: 4 }, replay, 3 * DAY)).toMatchObject({ basis: 'replayed', alertsPerDay: 10 });
    const none = counterfactualRate(replaced, undefined, undefined, 3 * DAY);
    expect(none).toMatchObject({ basis: null, alertsPerDay: null });
    expect(none.reason).toBe('v1 was live 2 days, less than the 3 days its observed rate needs, and no completed replay of v1 on local exists');
  });

  it('saves the counterfactual over the days in effect within the window minus what the replacement matched, signed; budgets count apart', () => {
    const v1 = span({ ruleId: 'r', version: 1, activatedAt: at(0), endedAt: at(10), status: 'superseded' });
    const v2 = span({ ruleId: 'r', version: 2, activatedAt: at(10) });
    const changes = replacementsOf([v1, v2]);
    const window = { from: at(8), to: at(14) };
    const volumes = new Map([
      [v1.id, { raised: 100, suppressed: 0, shadowMatches: 0 }],
      [v2.id, { raised: 30, suppressed: 5, shadowMatches: 0 }],
    ]);
    const lifetime = new Map([[v1.id, { raised: 100, suppressed: 0, shadowMatches: 0 }]]);
    const [item] = changeSavings(changes, window, { window: volumes, lifetime, replays: new Map() }, DAY);
    // 10/day × 4 days − 35 matched.
    expect(item).toMatchObject({ daysInWindow: 4, expectedAlerts: 40, actualAlerts: 35, noiseSaved: 5 });
    const noisier = changeSavings(changes, window, { window: new Map([[v2.id, { raised: 60, suppressed: 0, shadowMatches: 0 }]]), lifetime, replays: new Map() }, DAY);
    expect(noisier[0]!.noiseSaved).toBe(-20);
    expect(budgetSavings([v1, v2], volumes).map((b) => [b.deployment.id, b.noiseSaved])).toEqual([[v2.id, 5]]);
    // A change not in effect during the window is not reported.
    expect(changeSavings(changes, { from: at(1), to: at(9) }, { window: volumes, lifetime, replays: new Map() }, DAY)).toEqual([]);
  });

  it('prices noise saved by each target’s model and adds up per currency only', () => {
    const us = span({ ruleId: 'a', version: 1, activatedAt: at(0) });
    const us2 = span({ ruleId: 'b', version: 1, activatedAt: at(0), targetId: 't3', targetName: 'us2' });
    const eu = span({ ruleId: 'c', version: 1, activatedAt: at(0), targetId: 't2', targetName: 'eu', costModel: EUR });
    const budgets = [
      { deployment: us, suppressed: 4, shadowMatches: 0, noiseSaved: 4 },
      { deployment: us2, suppressed: 0, shadowMatches: 2, noiseSaved: 2 },
      { deployment: eu, suppressed: 10, shadowMatches: 0, noiseSaved: 10 },
    ];
    const costs = costAvoided([], budgets);
    expect(costs.map((c) => [c.currency, c.noiseSaved, c.triageCostAvoided, c.scanCostSaved, c.total])).toEqual([
      ['EUR', 10, 100, null, 100],
      ['USD', 6, 180, null, 180],
    ]);
  });

  it('counts techniques of deployments alerting at the start and the end; a demoted one covers nothing while demoted', () => {
    const kept = span({ ruleId: 'k', version: 1, activatedAt: at(0), tags: ['attack.t1059.001'] });
    const lost = span({ ruleId: 'l', version: 1, activatedAt: at(0), endedAt: at(5), status: 'rolled_back', tags: ['attack.T1003'] });
    const gained = span({ ruleId: 'g', version: 1, activatedAt: at(3), tags: ['attack.t1566'] });
    const demoted = span({
      ruleId: 'd',
      version: 1,
      activatedAt: at(0),
      status: 'demoted',
      tags: ['attack.t1190'],
      demotion: { demoted_at: at(4).toISOString(), reason: 'x', alerts: 3, budget: 1 },
    });
    const deltas = coverageDeltas([kept, lost, gained, demoted], at(2), at(6));
    expect(deltas.atStart).toBe(3);
    expect(deltas.atEnd).toBe(2);
    expect(deltas.gained.map((g) => [g.technique, g.deployments.map((d) => d.id)])).toEqual([['T1566', [gained.id]]]);
    expect(deltas.lost.map((g) => [g.technique, g.deployments.map((d) => d.id)])).toEqual([
      ['T1003', [lost.id]],
      ['T1190', [demoted.id]],
    ]);
  });
});
