/** How a live deployment is evaluated: raising alerts, or in shadow (demoted: counted, no alert). */
export type DetectionMode = 'alert' | 'shadow';

/** The mode of a deployment in `status`; null when a deployment in it is not evaluated at all. */
export function detectionModeOf(status: string): DetectionMode | null {
  if (status === 'active') return 'alert';
  if (status === 'demoted') return 'shadow';
  return null;
}

/**
 * Where a deployment's cursor moves after a run. A run handles a bounded number of matches: when
 * there were more, the cursor stops at the last one handled and the rest wait for the next run.
 */
export function cursorAfterRun(evaluation: { readonly cursor: number; readonly truncated: boolean; readonly events: ReadonlyArray<{ readonly seq: number }> }): number {
  const last = evaluation.events.at(-1);
  return evaluation.truncated && last ? last.seq : evaluation.cursor;
}
