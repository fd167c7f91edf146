import type { TimePartValue } from '../model';

/** Event timestamps for time-part modifiers and correlation windows; a bare date-time is UTC. */
export function parseTimestamp(raw: unknown): Date | undefined {
  if (raw instanceof Date) return raw;
  if (typeof raw === 'number') return new Date(raw);
  if (typeof raw !== 'string') return undefined;
  let text = raw.trim().replace(' ', 'T');
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(text)) text += 'Z';
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

function isoWeek(d: Date): number {
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - day);
  const yearStart = Date.UTC(t.getUTCFullYear(), 0, 1);
  return Math.ceil(((t.getTime() - yearStart) / 86_400_000 + 1) / 7);
}

export function timePartOf(d: Date, part: TimePartValue['part']): number {
  switch (part) {
    case 'minute':
      return d.getUTCMinutes();
    case 'hour':
      return d.getUTCHours();
    case 'day':
      return d.getUTCDate();
    case 'week':
      return isoWeek(d);
    case 'month':
      return d.getUTCMonth() + 1;
    case 'year':
      return d.getUTCFullYear();
  }
}
