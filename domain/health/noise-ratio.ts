import { round } from '../runs/rounding';

/** Alerts by disposition (`duplicate` included: it is a verdict too). */
export type DispositionCounts = { truePositive: number; falsePositive: number; benign: number; duplicate: number };

export const NO_DISPOSITIONS: DispositionCounts = { truePositive: 0, falsePositive: 0, benign: 0, duplicate: 0 };

export function addDispositions(a: DispositionCounts, b: DispositionCounts): DispositionCounts {
  return {
    truePositive: a.truePositive + b.truePositive,
    falsePositive: a.falsePositive + b.falsePositive,
    benign: a.benign + b.benign,
    duplicate: a.duplicate + b.duplicate,
  };
}

export type NoiseRatio = DispositionCounts & {
  dispositioned: number;
  /** (false positives + benign) / dispositioned; null when no alert was dispositioned. */
  ratio: number | null;
  reason: string | null;
};

/**
 * Noise ratio: the share of dispositioned alerts that were noise, (false_positive + benign) /
 * (true_positive + false_positive + benign + duplicate). Alerts without a disposition (open,
 * acknowledged, closed without a verdict, suppressed) are not in it.
 */
export function noiseRatio(counts: DispositionCounts): NoiseRatio {
  const dispositioned = counts.truePositive + counts.falsePositive + counts.benign + counts.duplicate;
  return {
    ...counts,
    dispositioned,
    ratio: dispositioned > 0 ? round((counts.falsePositive + counts.benign) / dispositioned) : null,
    reason: dispositioned > 0 ? null : 'no alert raised in the window has a disposition',
  };
}
