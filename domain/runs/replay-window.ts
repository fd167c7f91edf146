import { isoDurationToMs } from '../../config/iso-duration';
import { invalidRequest, resourceLimit } from '../errors';

const DAY_MS = 86_400_000;

/** A replay's window as asked for: from/to (RFC 3339), or a lookback (ISO 8601 duration) ending now. */
export type WindowRequest = { from?: string | undefined; to?: string | undefined; lookback?: string | undefined };

/** The window asked for: from/to, or lookback ending `at`; 400 when malformed, 403 beyond the tier. */
export function replayWindow(body: WindowRequest, at: Date, tierDays: number, tier: string): { from: Date; to: Date } {
  let from: Date;
  let to: Date;
  if (body.lookback !== undefined) {
    if (body.from !== undefined || body.to !== undefined)
      throw invalidRequest('Give from/to or lookback, not both', [{ pointer: '/body/lookback', message: 'conflicts with from/to' }]);
    to = at;
    from = new Date(at.getTime() - isoDurationToMs(body.lookback)!);
  } else {
    if (body.from === undefined || body.to === undefined) {
      throw invalidRequest('A replay needs a window: from and to (RFC 3339), or lookback (ISO 8601 duration)', [
        { pointer: body.from === undefined ? '/body/from' : '/body/to', message: 'required unless lookback is given' },
      ]);
    }
    from = new Date(body.from);
    to = new Date(body.to);
    if (from.getTime() >= to.getTime()) throw invalidRequest('from must be before to', [{ pointer: '/body/from', message: 'not before to' }]);
    if (to.getTime() > at.getTime())
      throw invalidRequest('A replay covers the past: to may not be in the future (use a shadow evaluation for live data)', [
        { pointer: '/body/to', message: 'in the future' },
      ]);
  }
  const days = (to.getTime() - from.getTime()) / DAY_MS;
  if (days > tierDays) throw resourceLimit(`The window is ${Math.round(days * 100) / 100} days; the ${tier} tier replays up to ${tierDays} days`);
  return { from, to };
}
