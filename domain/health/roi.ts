import type { DomainDeps } from '../deps';
import type { Actor } from '../tenants/actor';
import { costAvoided, type CurrencyCost } from './cost-avoided';
import { coverageDeltas, type CoverageDeltas } from './coverage-deltas';
import { deploymentHistory, replacementsOf } from './deployment-history';
import {
  budgetSavings,
  changeSavings,
  lifetimeVolumes,
  newestReplays,
  observedCandidates,
  windowVolumes,
  type BudgetSavedItem,
  type NoiseSavedItem,
  type Window,
} from './noise-saved';

/** The ROI report (GET /health/roi): noise saved, cost avoided and coverage deltas over a window ending now. */
export type RoiReport = {
  window: Window;
  minObservedMs: number;
  changes: NoiseSavedItem[];
  budgets: BudgetSavedItem[];
  costs: CurrencyCost[];
  coverage: CoverageDeltas;
};

export async function roiReport(deps: DomainDeps, actor: Actor, request: { windowMs: number; minObservedMs: number }): Promise<RoiReport> {
  const { db } = deps.database;
  const to = (deps.now ?? (() => new Date()))();
  const window = { from: new Date(to.getTime() - request.windowMs), to };
  const history = await deploymentHistory(db, actor);
  const changes = replacementsOf(history);
  const [windowVolume, lifetime, replays] = await Promise.all([
    windowVolumes(db, actor.tenantId, window.from, window.to),
    lifetimeVolumes(db, actor.tenantId, observedCandidates(changes, request.minObservedMs)),
    newestReplays(
      db,
      actor.tenantId,
      changes.map((c) => c.replaced.ruleId),
    ),
  ]);
  const changeItems = changeSavings(changes, window, { window: windowVolume, lifetime, replays }, request.minObservedMs);
  const budgets = budgetSavings(history, windowVolume);
  return {
    window,
    minObservedMs: request.minObservedMs,
    changes: changeItems,
    budgets,
    costs: costAvoided(changeItems, budgets),
    coverage: coverageDeltas(history, window.from, window.to),
  };
}
