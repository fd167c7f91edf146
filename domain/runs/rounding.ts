/** `x` rounded to `places` decimals: how run figures (noise ratios, costs, latencies) are reported. */
export const round = (x: number, places = 4) => Math.round(x * 10 ** places) / 10 ** places;
