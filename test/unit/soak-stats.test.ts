import { leastSquaresSlope, median, percentile, soakVerdicts } from '../../bench/soak-stats';

describe('the soak statistics', () => {
  it('takes percentiles by nearest rank, whatever the order of the values', () => {
    const values = Array.from({ length: 200 }, (_, i) => 200 - i); // 200 … 1
    expect(percentile(values, 50)).toBe(100);
    expect(percentile(values, 99)).toBe(198);
    expect(percentile(values, 100)).toBe(200);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 99)).toBeNaN();
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });

  it('fits a least-squares slope', () => {
    expect(
      leastSquaresSlope([
        [0, 100],
        [1, 110],
        [2, 120],
      ]),
    ).toBeCloseTo(10);
    expect(
      leastSquaresSlope([
        [0, 5],
        [1, 7],
        [2, 5],
        [3, 7],
      ]),
    ).toBeCloseTo(0.4);
    expect(leastSquaresSlope([[1, 5]])).toBeNaN();
    expect(
      leastSquaresSlope([
        [1, 5],
        [1, 6],
      ]),
    ).toBeNaN();
  });

  it('passes a steady run and fails on an error, a drop, an unstable p99 or a growing RSS', () => {
    const flat: Array<[number, number]> = [
      [0.1, 500],
      [0.5, 502],
      [1, 499],
    ];
    const steady = soakVerdicts({ errors: 0, drops: 0, windowP99: [40, 44, 38, 42], rss: { service: flat } });
    expect(steady.map((v) => v.pass)).toEqual([true, true, true]);

    const bad = soakVerdicts({
      errors: 1,
      drops: 0,
      windowP99: [40, 41, 60],
      rss: {
        service: [
          [0.1, 500],
          [0.5, 540],
          [1, 580],
        ],
      },
    });
    expect(bad.map((v) => v.pass)).toEqual([false, false, false]);
    expect(bad[1]!.figures).toContain('worst 46% off');
    expect(bad[2]!.figures).toContain('+88.5 MB/h');
    expect(soakVerdicts({ errors: 0, drops: 3, windowP99: [40], rss: {} })[0]!.pass).toBe(false);
    // Steady at the client's timeout is a service that did not answer.
    const stuck = soakVerdicts({ errors: 0, drops: 0, windowP99: [30_100, 30_050], rss: {}, timeoutMs: 30_000 });
    expect(stuck[1]).toMatchObject({ pass: false, figures: expect.stringContaining('client timeout') });
  });
});
