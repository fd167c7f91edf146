import { ratio } from './health-status';

/** The dispositions of a window's alerts, as counted. */
export type DispositionCounts = { truePositives: number; falsePositives: number; benign: number; duplicates: number; undispositioned: number };

export type Snr = DispositionCounts & {
  /** true positives / (false positives + benign); null when there is no noise to divide by. */
  ratio: number | null;
  /** true positives / (true positives + false positives + benign); null when none of them was given. */
  precision: number | null;
  reason: string | null;
};

/**
 * Signal to noise: true positives against the alerts that were noise (false positives and benign).
 * Duplicates and alerts without a disposition are neither: they are counted and shown, not used.
 */
export function snrOf(c: DispositionCounts): Snr {
  const noise = c.falsePositives + c.benign;
  const judged = c.truePositives + noise;
  const reason =
    judged === 0
      ? 'no alert of the window has a true_positive, false_positive or benign disposition'
      : noise === 0
        ? 'no alert of the window was dispositioned false_positive or benign: the ratio has no denominator'
        : null;
  return { ...c, ratio: ratio(c.truePositives, noise), precision: ratio(c.truePositives, judged), reason };
}
