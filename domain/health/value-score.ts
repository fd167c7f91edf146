import { round } from '../runs/rounding';
import type { DispositionCounts } from './noise-ratio';

/**
 * Detection value score of an active rule, 0–100, with its parts shown:
 *
 *   score = 100 × Σ wᵢ·pᵢ / Σ wᵢ, over the parts pᵢ (each 0–1) that are known
 *
 *   signal      w 0.40  p = TP / (TP + FP + benign) over the rule's alerts raised in the window
 *                       (SNR = TP / (FP + benign) is shown beside it); unknown without such a verdict
 *   uniqueness  w 0.25  p = mean, over the techniques and sub-techniques the rule covers, of
 *                       1 / (1 + the other active rules covering it); 0 for a rule covering none
 *   severity    w 0.20  p = the level of its deployed version: critical 1, high 0.75, medium 0.5,
 *                       low 0.25, informational 0; unknown without a Sigma level
 *   cost        w 0.15  p = 1 − cost / the highest cost of an active rule in the same currency (1 when
 *                       that is 0); cost = triage cost of its alerts in the window (alerts not
 *                       suppressed × triage_minutes_per_alert / 60 × cost_per_analyst_hour of the
 *                       alert's target) + scan cost when recorded; unknown when its costs are in
 *                       several currencies
 *
 * A part that is unknown is left out and the weights of the others are scaled up to 1 (`missing`
 * names it): a rule that never fired is scored on coverage, severity and cost alone.
 */
export const VALUE_WEIGHTS = { signal: 0.4, uniqueness: 0.25, severity: 0.2, cost: 0.15 } as const;
export type ValuePart = keyof typeof VALUE_WEIGHTS;

export const SEVERITY_WEIGHT: Readonly<Record<string, number>> = { critical: 1, high: 0.75, medium: 0.5, low: 0.25, informational: 0 };

export const SCAN_COST_NOT_RECORDED = 'scheduled detection records the events it scans, not their bytes: no scan cost is recorded';

export type RuleCost = {
  /** Alerts raised in the window and not suppressed: the ones someone triages. */
  alertsTriaged: number;
  /** Triage cost per currency of the targets' cost models (normally one). */
  triageCost: ReadonlyMap<string, number>;
};

export type ValueScoreInput = {
  ruleId: string;
  title: string;
  level: string | null;
  /** Techniques and sub-techniques of the matrix the rule covers. */
  techniques: readonly string[];
  dispositions: DispositionCounts;
  cost: RuleCost;
};

type Part = { weight: number; value: number | null; points: number | null; reason: string | null };
export type ValueScore = {
  ruleId: string;
  title: string;
  level: string | null;
  score: number;
  missing: ValuePart[];
  parts: {
    signal: Part & { snr: number | null; truePositives: number; falsePositives: number; benign: number };
    uniqueness: Part & { techniques: Array<{ id: string; otherRules: number }> };
    severity: Part & { level: string | null };
    cost: Part & { currency: string | null; triageCost: number | null; scanCost: number | null; scanCostReason: string; total: number | null; alertsTriaged: number };
  };
};

/** `rulesPerTechnique`: how many active rules cover each technique (the rule itself included). */
export function valueScores(rules: readonly ValueScoreInput[], rulesPerTechnique: ReadonlyMap<string, number>): ValueScore[] {
  // The most expensive rule per currency: each rule's cost is weighed against it.
  const maxCost = new Map<string, number>();
  for (const r of rules) {
    const spent = [...r.cost.triageCost].filter(([, amount]) => amount > 0);
    if (spent.length !== 1) continue;
    const [[currency, amount]] = spent as [[string, number]];
    maxCost.set(currency, Math.max(maxCost.get(currency) ?? 0, amount));
  }
  return rules.map((r) => {
    const { truePositive: tp, falsePositive: fp, benign } = r.dispositions;
    const verdicts = tp + fp + benign;
    const signal = verdicts > 0 ? tp / verdicts : null;

    const techniques = r.techniques.map((id) => ({ id, otherRules: Math.max(0, (rulesPerTechnique.get(id) ?? 1) - 1) }));
    const uniqueness = techniques.length ? techniques.reduce((s, t) => s + 1 / (1 + t.otherRules), 0) / techniques.length : 0;

    const severity = r.level !== null && r.level in SEVERITY_WEIGHT ? SEVERITY_WEIGHT[r.level]! : null;

    // Currencies with a cost: a rule whose alerts cost nothing costs 0 in whatever currency.
    const currencies = [...r.cost.triageCost.keys()];
    const spent = [...r.cost.triageCost].filter(([, a]) => a > 0);
    const single = spent.length === 1 ? spent[0]![0] : spent.length === 0 && currencies.length === 1 ? currencies[0]! : null;
    const amount = spent.length > 1 ? null : spent.length === 1 ? spent[0]![1] : 0;
    const max = single !== null ? (maxCost.get(single) ?? 0) : 0;
    const cost = amount === null ? null : max > 0 ? 1 - amount / max : 1;

    const values: Record<ValuePart, number | null> = { signal, uniqueness, severity, cost };
    const known = (Object.keys(VALUE_WEIGHTS) as ValuePart[]).filter((p) => values[p] !== null);
    const weights = known.reduce((s, p) => s + VALUE_WEIGHTS[p], 0);
    const points = (p: ValuePart) => (values[p] === null ? null : round((100 * VALUE_WEIGHTS[p] * values[p]) / weights, 2));
    const part = (p: ValuePart, reason: string | null): Part => ({ weight: VALUE_WEIGHTS[p], value: values[p] === null ? null : round(values[p]), points: points(p), reason });
    return {
      ruleId: r.ruleId,
      title: r.title,
      level: r.level,
      score: round((100 * known.reduce((s, p) => s + VALUE_WEIGHTS[p] * values[p]!, 0)) / weights, 1),
      missing: (Object.keys(VALUE_WEIGHTS) as ValuePart[]).filter((p) => values[p] === null),
      parts: {
        signal: {
          ...part('signal', signal === null ? 'no alert of the rule raised in the window was dispositioned true_positive, false_positive or benign' : null),
          snr: fp + benign > 0 ? round(tp / (fp + benign)) : null,
          truePositives: tp,
          falsePositives: fp,
          benign,
        },
        uniqueness: { ...part('uniqueness', techniques.length ? null : 'the rule covers no technique of the ATT&CK matrix'), techniques },
        severity: {
          ...part('severity', severity === null ? (r.level === null ? 'the deployed version has no level' : `'${r.level}' is not a Sigma level`) : null),
          level: r.level,
        },
        cost: {
          ...part('cost', amount === null ? `its alerts' triage costs are in several currencies (${spent.map(([c]) => c).join(', ')}), which cannot be added` : null),
          currency: single,
          triageCost: amount === null ? null : round(amount, 2),
          scanCost: null,
          scanCostReason: SCAN_COST_NOT_RECORDED,
          total: amount === null ? null : round(amount, 2),
          alertsTriaged: r.cost.alertsTriaged,
        },
      },
    };
  });
}
