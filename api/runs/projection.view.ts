/**
 * Runs and approvals recorded before projections carried their sample and interval have none of
 * those fields: they answer them as null (not known), never as a guess and never by failing.
 */

type Stored = Record<string, unknown>;

const PROJECTION_FIELDS = { sample: null, alerts_per_day: null, low_confidence: null, low_confidence_reasons: null };

const isRecord = (v: unknown): v is Stored => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A recorded replay or shadow result, with the projection fields null where it predates them. */
export function recordedRunResult(result: Stored | null | undefined): Stored | null {
  if (!result) return null;
  const cost = isRecord(result.cost) ? { per_month_ci95: null, ...result.cost } : result.cost;
  return { ...PROJECTION_FIELDS, ...result, cost };
}

/** A recorded impact summary, with the projection fields null where it predates them (on it and on each target). */
export function recordedImpact(impact: Stored | null | undefined): Stored | null {
  if (!impact) return null;
  const targets = Array.isArray(impact.targets)
    ? impact.targets.map((t: unknown) =>
        isRecord(t)
          ? {
              ...PROJECTION_FIELDS,
              per_day: null,
              ...t,
              cost_per_day: isRecord(t.cost_per_day) ? { total_ci95: null, ...t.cost_per_day } : t.cost_per_day,
              current: isRecord(t.current) ? { alerts_per_day: null, per_day: null, ...t.current } : t.current,
            }
          : t,
      )
    : impact.targets;
  return { alerts_per_day: null, low_confidence: null, low_confidence_reasons: null, ...impact, targets };
}
