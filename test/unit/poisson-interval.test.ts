import { chiSquareQuantile, gammaQuantile, logGamma, normalQuantile, poissonInterval, regularizedGammaP } from '../../lib/poisson-interval';

describe('gamma and chi-square quantiles', () => {
  it('matches ln Γ at known points', () => {
    expect(logGamma(1)).toBeCloseTo(0, 12);
    expect(logGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 12);
    expect(logGamma(11)).toBeCloseTo(Math.log(3_628_800), 10); // 10!
  });

  it('P(1, x) is the exponential distribution function, and P(a, x) is 0 at 0', () => {
    for (const x of [0.01, 0.5, 1, 3, 30]) expect(regularizedGammaP(1, x)).toBeCloseTo(1 - Math.exp(-x), 12);
    expect(regularizedGammaP(4, 0)).toBe(0);
  });

  it('answers the tabulated chi-square quantiles', () => {
    // Values of a standard chi-square table, to their printed digits.
    const table: Array<[p: number, df: number, q: number]> = [
      [0.95, 1, 3.841],
      [0.975, 2, 7.378],
      [0.025, 2, 0.0506],
      [0.975, 10, 20.483],
      [0.025, 10, 3.247],
      [0.999, 3, 16.266],
      [0.001, 3, 0.024],
      [0.5, 100, 99.334],
      [0.99, 50, 76.154],
    ];
    for (const [p, df, q] of table) expect(chiSquareQuantile(p, df)).toBeCloseTo(q, q < 0.1 ? 3 : 2);
  });

  it('inverts the distribution function it is built on', () => {
    for (const a of [0.3, 1, 2.5, 17, 400, 5_000]) for (const p of [0.001, 0.025, 0.5, 0.975, 0.999]) expect(regularizedGammaP(a, gammaQuantile(p, a))).toBeCloseTo(p, 10);
  });

  it('the exponential case has a closed form: the p-quantile of gamma(1) is −ln(1 − p)', () => {
    for (const p of [0.025, 0.5, 0.975]) expect(gammaQuantile(p, 1)).toBeCloseTo(-Math.log(1 - p), 12);
  });

  it('the normal quantile is right at its known points', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 6);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 6);
  });

  it('refuses what has no answer', () => {
    expect(() => gammaQuantile(1, 2)).toThrow(RangeError);
    expect(() => gammaQuantile(0.5, 0)).toThrow(RangeError);
    expect(() => poissonInterval(-1)).toThrow(RangeError);
    expect(() => poissonInterval(1.5)).toThrow(RangeError);
  });
});

describe('exact Poisson (Garwood) interval', () => {
  it('for 0 events is [0, −ln 0.025 ≈ 3.689]', () => {
    const { low, high } = poissonInterval(0);
    expect(low).toBe(0);
    expect(high).toBeCloseTo(-Math.log(0.025), 10);
    expect(high).toBeCloseTo(3.689, 3);
  });

  it('matches the tabulated exact limits', () => {
    const published: Array<[k: number, low: number, high: number]> = [
      [1, 0.0253, 5.5716],
      [2, 0.2422, 7.2247],
      [5, 1.6235, 11.6683],
      [10, 4.7954, 18.3904],
      [100, 81.364, 121.6268],
    ];
    for (const [k, low, high] of published) {
      const ci = poissonInterval(k);
      expect(ci.low).toBeCloseTo(low, 3);
      expect(ci.high).toBeCloseTo(high, 3);
    }
  });

  it('each limit is where the tail of the Poisson distribution is 2.5%', () => {
    // P(X ≥ k | μ = low) = 0.025 and P(X ≤ k | μ = high) = 0.025, summed directly for k = 7.
    const k = 7;
    const { low, high } = poissonInterval(k);
    const pmf = (mu: number, i: number) => Math.exp(-mu + i * Math.log(mu) - logGamma(i + 1));
    let upperTail = 1;
    for (let i = 0; i < k; i++) upperTail -= pmf(low, i);
    let lowerTail = 0;
    for (let i = 0; i <= k; i++) lowerTail += pmf(high, i);
    expect(upperTail).toBeCloseTo(0.025, 10);
    expect(lowerTail).toBeCloseTo(0.025, 10);
  });

  it('approaches the normal interval k ± 1.96 √k for large counts, continuously across the large-shape shortcut', () => {
    for (const k of [10_000, 99_999, 100_000, 100_001, 1_000_000]) {
      const ci = poissonInterval(k);
      const half = 1.959964 * Math.sqrt(k);
      // The exact interval sits about one count above the symmetric normal one (skew of the Poisson).
      expect(Math.abs(ci.low - (k - half))).toBeLessThan(1.5);
      expect(Math.abs(ci.high - (k + half))).toBeLessThan(2.5);
      expect((ci.high - ci.low) / (2 * half)).toBeCloseTo(1, 2);
    }
    const below = poissonInterval(100_000);
    const above = poissonInterval(100_001);
    expect(above.low - below.low).toBeGreaterThan(0.9);
    expect(above.low - below.low).toBeLessThan(1.1);
    expect(above.high - below.high).toBeGreaterThan(0.9);
    expect(above.high - below.high).toBeLessThan(1.1);
  });
});
