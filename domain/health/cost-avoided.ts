import type { TargetCostModel } from '../../db/schema';
import type { BudgetSavedItem, NoiseSavedItem } from './noise-saved';

/**
 * Cost avoided: each target's noise saved priced by that target's cost model (triage minutes per
 * alert × the analyst's hourly cost), added up per currency only: amounts in different currencies
 * are never added together.
 */

/** Why there is no scan cost saved: what the runs record does not say it. */
export const SCAN_COST_NOT_RECORDED =
  'scheduled detection records the events each run scanned but not their bytes, and the cost model prices gigabytes scanned; a replacement also scans the events its predecessor did: scan cost saved is not computed';

export type TargetCost = {
  targetId: string;
  targetName: string;
  environment: string;
  model: TargetCostModel;
  noiseSaved: number;
  triageCostAvoided: number;
};

export type CurrencyCost = {
  currency: string;
  noiseSaved: number;
  triageCostAvoided: number;
  scanCostSaved: number | null;
  scanCostReason: string | null;
  total: number;
  targets: TargetCost[];
};

export function costAvoided(changes: readonly NoiseSavedItem[], budgets: readonly BudgetSavedItem[]): CurrencyCost[] {
  const perTarget = new Map<string, TargetCost>();
  const add = (d: { targetId: string; targetName: string; environment: string; costModel: TargetCostModel }, saved: number) => {
    const t = perTarget.get(d.targetId) ?? {
      targetId: d.targetId,
      targetName: d.targetName,
      environment: d.environment,
      model: d.costModel,
      noiseSaved: 0,
      triageCostAvoided: 0,
    };
    t.noiseSaved += saved;
    t.triageCostAvoided = ((t.noiseSaved * t.model.triage_minutes_per_alert) / 60) * t.model.cost_per_analyst_hour;
    perTarget.set(d.targetId, t);
  };
  for (const c of changes) if (c.noiseSaved !== null) add(c.replaced, c.noiseSaved);
  for (const b of budgets) add(b.deployment, b.noiseSaved);

  const perCurrency = new Map<string, CurrencyCost>();
  for (const t of [...perTarget.values()].sort((a, b) => a.targetName.localeCompare(b.targetName))) {
    const c = perCurrency.get(t.model.currency) ?? {
      currency: t.model.currency,
      noiseSaved: 0,
      triageCostAvoided: 0,
      scanCostSaved: null,
      scanCostReason: SCAN_COST_NOT_RECORDED,
      total: 0,
      targets: [],
    };
    c.noiseSaved += t.noiseSaved;
    c.triageCostAvoided += t.triageCostAvoided;
    c.total = c.triageCostAvoided + (c.scanCostSaved ?? 0);
    c.targets.push(t);
    perCurrency.set(t.model.currency, c);
  }
  return [...perCurrency.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}
