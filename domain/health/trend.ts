/** One figure in this window and the one before it; `change` is current − previous (null when either is null). */
export type Change = { current: number | null; previous: number | null; change: number | null };

export function changeOf(current: number | null, previous: number | null): Change {
  return { current, previous, change: current === null || previous === null ? null : current - previous };
}
