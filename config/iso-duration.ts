/**
 * ISO 8601 durations of weeks, days, hours, minutes and seconds (`P7D`, `PT30M`; no years or
 * months: their length varies), the one parser of every duration the service takes. Up to 6 digits
 * a part: enough for any window or interval a request may ask for, never an overflowing number.
 */
const ISO_DURATION = /^P(?!$)(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?=\d)(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,6})S)?)?$/;

/** The duration in milliseconds, or undefined when the text is not one. */
export function isoDurationToMs(text: string): number | undefined {
  const m = ISO_DURATION.exec(text);
  if (!m) return undefined;
  const [w, d, h, min, s] = m.slice(1).map((v) => Number(v ?? 0)) as [number, number, number, number, number];
  return ((((w * 7 + d) * 24 + h) * 60 + min) * 60 + s) * 1000;
}

/** The duration in milliseconds of a text already validated as one (a stored setting). */
export function isoDurationMs(text: string): number {
  const ms = isoDurationToMs(text);
  if (ms === undefined) throw new Error(`Not an ISO 8601 duration such as P7D or PT5M: ${text}`);
  return ms;
}
