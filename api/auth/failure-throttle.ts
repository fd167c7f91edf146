/**
 * Throttles token guessing per client address: at most MAX_FAILURES failed authentications (a
 * well-formed token that is unknown, revoked or expired) per WINDOW_MS. Past that, a token from the
 * address is not looked up but answered 429 until the oldest failure leaves the window — unless that
 * token was already answered from the same address before, so the tenant's own clients behind the
 * address (a CI runner behind the same NAT as the guesser) keep working.
 *
 * A new token arriving while the address is throttled waits like a guess: if it were looked up, a
 * throttled guesser would learn from a 200 instead of a 429 that a guess was right, and the throttle
 * would throttle nothing.
 *
 * Kept in this process: several API processes each allow MAX_FAILURES per window (docs/decisions/0047).
 */
export class FailureThrottle {
  static readonly MAX_FAILURES = 20;
  static readonly WINDOW_MS = 10_000;
  /** Failure times per address, oldest first, at most MAX_FAILURES each. */
  private readonly failures = new Map<string, number[]>();
  /** `address \0 token hash` of tokens answered from an address, least recently used first. */
  private readonly working = new Map<string, true>();

  constructor(
    private readonly maxAddresses = 10_000,
    private readonly maxWorking = 50_000,
  ) {}

  /** Seconds to wait if a lookup of this token from this address is refused now, else null. */
  refusal(address: string, tokenHash: string, now: Date): number | null {
    const times = this.recent(address, now.getTime());
    if (times.length < FailureThrottle.MAX_FAILURES) return null;
    if (this.working.has(`${address}\u0000${tokenHash}`)) return null;
    return Math.max(1, Math.ceil((times[0]! + FailureThrottle.WINDOW_MS - now.getTime()) / 1000));
  }

  failed(address: string, now: Date): void {
    const times = this.recent(address, now.getTime());
    this.failures.delete(address);
    if (this.failures.size >= this.maxAddresses) this.failures.delete(this.failures.keys().next().value!);
    times.push(now.getTime());
    if (times.length > FailureThrottle.MAX_FAILURES) times.shift();
    this.failures.set(address, times);
  }

  succeeded(address: string, tokenHash: string): void {
    const key = `${address}\u0000${tokenHash}`;
    if (this.working.delete(key)) {
      this.working.set(key, true);
      return;
    }
    if (this.working.size >= this.maxWorking) this.working.delete(this.working.keys().next().value!);
    this.working.set(key, true);
  }

  private recent(address: string, now: number): number[] {
    const times = this.failures.get(address);
    if (!times) return [];
    while (times.length && times[0]! <= now - FailureThrottle.WINDOW_MS) times.shift();
    if (times.length === 0) this.failures.delete(address);
    return times;
  }
}
