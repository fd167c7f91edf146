/**
 * The soak's statistics (bench/soak.ts), pure so a unit test can check them: percentiles of a
 * window, a least-squares slope, and the verdicts against the soak's targets.
 */

/** The p-th percentile (0–100) of `values` by the nearest-rank method; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The least-squares slope of y over x; NaN for fewer than two distinct x. */
export function leastSquaresSlope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx === 0 ? Number.NaN : sxy / sxx;
}

export type Verdict = { target: string; pass: boolean; figures: string };

export type SoakTargets = {
  /** Each window's p99 within ±this share of the median window's (after warm-up). */
  p99Band: number;
  /** |RSS slope| under this share of the mean RSS per hour (after warm-up). */
  rssSlopeShare: number;
};

export const DEFAULT_TARGETS: SoakTargets = { p99Band: 0.2, rssSlopeShare: 0.05 };

/**
 * The verdicts: no error or drop in any window; p99 per window (warm-up left out) within the band
 * around their median; RSS slope (samples after warm-up, MB per hour) under the share of the mean.
 */
export function soakVerdicts(
  input: {
    errors: number;
    drops: number;
    /** p99 (ms) of each window after warm-up. */
    windowP99: readonly number[];
    /** The client's request timeout (ms): a p99 at it is a service that did not answer, not a stable one. */
    timeoutMs?: number;
    /** [hours since start, MB] samples after warm-up, per process. */
    rss: Record<string, ReadonlyArray<readonly [number, number]>>;
  },
  targets: SoakTargets = DEFAULT_TARGETS,
): Verdict[] {
  const verdicts: Verdict[] = [{ target: 'no error', pass: input.errors === 0 && input.drops === 0, figures: `${input.errors} errors, ${input.drops} drops` }];
  const p99s = input.windowP99.filter((v) => Number.isFinite(v));
  if (p99s.length === 0) {
    verdicts.push({ target: `p99 within ±${targets.p99Band * 100}% of the median window`, pass: false, figures: 'no window after warm-up' });
  } else {
    const m = median(p99s);
    const worst = Math.max(...p99s.map((v) => Math.abs(v - m) / m));
    const atTimeout = input.timeoutMs !== undefined && m >= 0.95 * input.timeoutMs;
    verdicts.push({
      target: `p99 within ±${targets.p99Band * 100}% of the median window`,
      pass: worst <= targets.p99Band && !atTimeout,
      figures: `median ${m.toFixed(1)} ms, range ${Math.min(...p99s).toFixed(1)}–${Math.max(...p99s).toFixed(1)} ms, worst ${(worst * 100).toFixed(0)}% off${atTimeout ? ' (the median is the client timeout: requests went unanswered)' : ''}`,
    });
  }
  for (const [name, samples] of Object.entries(input.rss)) {
    const slope = leastSquaresSlope(samples);
    const mean = samples.reduce((s, [, y]) => s + y, 0) / Math.max(1, samples.length);
    const limit = targets.rssSlopeShare * mean;
    verdicts.push({
      target: `${name} RSS slope after warm-up < ${targets.rssSlopeShare * 100}% of RSS per hour`,
      pass: Number.isFinite(slope) && Math.abs(slope) < limit,
      figures: Number.isFinite(slope)
        ? `${slope >= 0 ? '+' : ''}${slope.toFixed(1)} MB/h on a mean of ${mean.toFixed(0)} MB (limit ±${limit.toFixed(1)} MB/h)`
        : 'too few samples',
    });
  }
  return verdicts;
}
