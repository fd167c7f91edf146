/** The service long-polls at most this long per request (`?wait=N`, N ≤ 60). */
const MAX_LONG_POLL_SECONDS = 60;

/** A deadline `seconds` from now (a `--wait`'s `--timeout`), and how much of it each long-poll may use. */
export class Deadline {
  private readonly at: number;
  constructor(readonly seconds: number) {
    this.at = Date.now() + seconds * 1000;
  }
  get passed(): boolean {
    return Date.now() >= this.at;
  }
  get remainingMs(): number {
    return Math.max(0, this.at - Date.now());
  }
  /** Seconds for the next `?wait=`: what is left, at least 1, at most what the service allows. */
  get pollSeconds(): number {
    return Math.max(1, Math.min(MAX_LONG_POLL_SECONDS, Math.floor((this.at - Date.now()) / 1000)));
  }
}
