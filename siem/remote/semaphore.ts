/** At most `limit` tasks at once; the rest wait in arrival order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`A concurrency limit is a positive integer, not ${limit}`);
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    // A released slot passes straight to the first waiter (the count never drops in between), so
    // no newcomer slips past the queue and the limit holds.
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Tasks running now (tests and metrics). */
  get inFlight(): number {
    return this.active;
  }
}
