import type { DayCount, TimeWindow, WindowChunk } from '../adapter';

const DAY_MS = 86_400_000;

/** The UTC days a window touches, YYYY-MM-DD, in order. */
export function daysOf(window: TimeWindow): string[] {
  const days: string[] = [];
  for (let t = Math.floor(window.from.getTime() / DAY_MS) * DAY_MS; t < window.to.getTime(); t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** Per-day counts over every day of the window, zero where the SIEM reported none. */
export function fillDays(window: TimeWindow, counts: ReadonlyMap<string, { scanned: number; matched: number }>): DayCount[] {
  return daysOf(window).map((day) => ({ day, scanned: counts.get(day)?.scanned ?? 0, matched: counts.get(day)?.matched ?? 0 }));
}

/**
 * A remote SIEM's window in day-aligned slices of at most `maxDays` days: remote searches have no
 * cheap event estimate, so a replay step is a time slice (the SIEM's own limits bound its cost).
 */
export function sliceWindow(window: TimeWindow, maxDays = 1): WindowChunk[] {
  const chunks: WindowChunk[] = [];
  let from = window.from.getTime();
  const end = window.to.getTime();
  while (from < end) {
    const nextBoundary = (Math.floor(from / DAY_MS) + maxDays) * DAY_MS;
    const to = Math.min(end, nextBoundary);
    chunks.push({ from: new Date(from), to: new Date(to), events: 0 });
    from = to;
  }
  return chunks;
}

/**
 * Live evaluation on a remote SIEM is by event time: the cursor is a time in epoch milliseconds,
 * and a slice ends `lagMs` before now so that events still being indexed are read by the next
 * slice, not missed. Consecutive slices [cursor, next) cover time without gap or overlap.
 */
export function liveSlice(cursor: number, now: Date, lagMs: number): TimeWindow | null {
  const to = now.getTime() - lagMs;
  if (to <= cursor) return null;
  return { from: new Date(cursor), to: new Date(to) };
}
