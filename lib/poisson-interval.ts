/**
 * Exact (Garwood) confidence intervals for a Poisson count, from quantiles of the gamma
 * distribution (a chi-square with ν degrees of freedom is a gamma of shape ν/2 and scale 2).
 * Small and self-contained: the regularized incomplete gamma by its series and continued fraction
 * (Numerical Recipes §6.2), inverted by safeguarded Newton steps.
 */

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
  1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0 (Lanczos, g = 7: about 15 significant digits). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

const EPS = 1e-15;
const MAX_ITERATIONS = 100_000;
/** Above this shape gammaQuantile answers with the Wilson–Hilferty approximation. */
const LARGE_SHAPE = 1e5;

/** P(a, x) = γ(a, x) / Γ(a): the gamma(a, 1) distribution function at x. */
export function regularizedGammaP(a: number, x: number): number {
  if (!(a > 0)) throw new RangeError(`gamma shape must be positive, got ${a}`);
  if (x <= 0) return 0;
  const logPrefix = a * Math.log(x) - x - logGamma(a);
  if (x < a + 1) {
    // Series: P = e^{-x} x^a / Γ(a) · Σ x^n / (a (a+1) … (a+n)).
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < MAX_ITERATIONS; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPS) break;
    }
    return Math.min(1, sum * Math.exp(logPrefix));
  }
  // Continued fraction for Q = 1 − P (modified Lentz).
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < MAX_ITERATIONS; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return Math.max(0, 1 - Math.exp(logPrefix) * h);
}

/** The p-quantile of the gamma distribution of shape a and scale 1: the x with P(a, x) = p. */
export function gammaQuantile(p: number, a: number): number {
  if (!(p >= 0 && p < 1)) throw new RangeError(`probability must be in [0, 1), got ${p}`);
  if (!(a > 0)) throw new RangeError(`gamma shape must be positive, got ${a}`);
  if (p === 0) return 0;
  const z = normalQuantile(p);
  const wh = a * (1 - 1 / (9 * a) + z / (3 * Math.sqrt(a))) ** 3;
  // For a large shape the Wilson–Hilferty cube-root approximation is already exact to about 1e-9
  // relative (its error falls as 1/a), and the series would need O(√a) terms.
  if (a > LARGE_SHAPE) return wh;
  // Start from the Wilson–Hilferty approximation; keep a bracket [lo, hi] so Newton never leaves it.
  let x = wh > 0 ? wh : Math.max(1e-12, (p * Math.exp(logGamma(a + 1))) ** (1 / a));
  let lo = 0;
  let hi = Infinity;
  for (let i = 0; i < 200; i++) {
    const f = regularizedGammaP(a, x) - p;
    if (f < 0) lo = x;
    else hi = x;
    if (Math.abs(f) < 1e-14) break;
    const density = Math.exp((a - 1) * Math.log(x) - x - logGamma(a));
    let next = density > 0 ? x - f / density : NaN;
    if (!(next > lo && next < hi)) next = hi === Infinity ? Math.max(2 * x, lo + 1) : (lo + hi) / 2;
    if (Math.abs(next - x) <= 1e-14 * Math.max(1, x)) {
      x = next;
      break;
    }
    x = next;
  }
  return x;
}

/** The p-quantile of the chi-square distribution with ν degrees of freedom. */
export function chiSquareQuantile(p: number, degreesOfFreedom: number): number {
  return 2 * gammaQuantile(p, degreesOfFreedom / 2);
}

/** The standard normal p-quantile (Acklam's rational approximation, relative error below 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = 0.02425;
  const poly = (k: number[], x: number) => k.reduce((s, v) => s * x + v, 0);
  if (p < tail) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - tail) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -poly(c, q) / (poly(d, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}

/**
 * The exact (Garwood) two-sided interval of confidence `level` for the mean of a Poisson count
 * observed as `count`: lower = χ²(α/2; 2k)/2 (0 when k = 0), upper = χ²(1 − α/2; 2k + 2)/2. It
 * covers the true mean at least `level` of the time, for every mean.
 */
export function poissonInterval(count: number, level = 0.95): { low: number; high: number } {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`a Poisson count is a whole number ≥ 0, got ${count}`);
  const alpha = 1 - level;
  return { low: count === 0 ? 0 : gammaQuantile(alpha / 2, count), high: gammaQuantile(1 - alpha / 2, count + 1) };
}
