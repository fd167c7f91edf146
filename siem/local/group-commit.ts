/**
 * The store's single writer: exclusive tasks run one after another, and ingest batches that are
 * ready close together share one transaction (a group commit).
 *
 * Why group: DuckDB writes a transaction that appends fewer rows than a row group (122,880) to the
 * write-ahead log and compresses it into the file again at the next checkpoint; a larger one is
 * compressed and written once. Two 100,000-line requests committed together cost about a quarter
 * less DuckDB CPU than each committed alone.
 *
 * How: the writer opens a transaction, writes every ready batch into it, and while the group is
 * smaller than a row group and other batches are still being read (announced, not yet submitted),
 * keeps the transaction open for them (at most `maxWaitMs` at a time with nothing to write); then
 * it commits. With a few clients
 * each sending one request at a time the writer is usually idle when a batch becomes ready, so
 * grouping only what already waits would commit nearly every batch alone; writing the first batch
 * while the next is still being read keeps the writer busy instead of idle.
 *
 * A batch is acknowledged (its promise settles) only once the transaction holding it has
 * committed. When a group fails (one batch's statement, or the commit), it is rolled back and each
 * of its batches is written again alone, so only a failing batch fails.
 */

/** A group stays open (waiting or writing) at most this many `maxWaitMs`, however many batches keep arriving. */
const GROUP_OPEN_WAITS = 10;

export interface GroupCommitOptions {
  /** Rows at which a group is committed without waiting for batches still being read. */
  readonly fullGroupRows: number;
  /** Longest time a group stays open, with nothing to write, for batches still being read. */
  readonly maxWaitMs: number;
}

/** The transactional writes a group commit is made of, on the store's writer connection. */
export interface GroupWriter<J, R> {
  begin(): Promise<void>;
  /** Writes jobs, in order, inside the open transaction (their results in the same order); a throw fails the group. */
  add(jobs: readonly J[]): Promise<R[]>;
  commit(): Promise<void>;
  /** Ends the open (or failed) transaction without keeping anything; must not throw. */
  rollback(): Promise<void>;
  /** Writes a job in a transaction of its own (after its group failed). */
  alone(job: J): Promise<R>;
}

interface Pending<J, R> {
  readonly job: J;
  readonly rows: number;
  readonly resolve: (value: R) => void;
  readonly reject: (error: unknown) => void;
}

export class GroupCommitQueue<J, R> {
  private tail: Promise<unknown> = Promise.resolve();
  private ready: Pending<J, R>[] = [];
  /** A flush is queued on `tail` and has not yet taken the ready jobs. */
  private flushQueued = false;
  /** Batches being read or staged, which a group may wait for. */
  private preparing = 0;
  private wake: (() => void) | undefined;

  constructor(
    private readonly writer: GroupWriter<J, R>,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Runs fn alone, after every task and group queued before it, whatever their outcome. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /**
   * Announces a batch that will be submitted (or will fail) soon, so a group may wait for it.
   * Call the returned function once the batch is submitted or has failed; extra calls do nothing.
   */
  announce(): () => void {
    this.preparing++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.preparing--;
      this.poke();
    };
  }

  /** Queues a ready batch of `rows` rows; settles when the transaction holding it commits or fails. */
  submit(job: J, rows: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.ready.push({ job, rows, resolve, reject });
      this.poke();
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    void this.exclusive(() => this.flush());
  }

  private async flush(): Promise<void> {
    const group: Pending<J, R>[] = [];
    const results: R[] = [];
    try {
      await this.writer.begin();
      await this.fill(group, results);
    } catch {
      // Jobs not taken yet when the transaction could not even begin must not wait for a flush
      // that fails the same way: they are settled here too, each alone.
      if (group.length === 0) group.push(...this.ready.splice(0));
      this.endIntake();
      await this.settleAlone(group);
      return;
    }
    this.endIntake();
    try {
      await this.writer.commit();
    } catch {
      await this.settleAlone(group);
      return;
    }
    group.forEach((p, i) => p.resolve(results[i]!));
  }

  /**
   * Writes ready jobs into the open transaction, and keeps it open for announced batches while
   * the group is smaller than `fullGroupRows`: at most `maxWaitMs` at a time with nothing to write
   * (counted from the last write, since on a busy machine writing a batch can take longer than
   * the next one takes to arrive), at most `maxWaitMs` of such waiting in all, and at most
   * GROUP_OPEN_WAITS × `maxWaitMs` open in all.
   *
   * Why the waits are budgeted in all: with small batches arriving steadily (a few dozen a second,
   * each read while the writer writes the last one) there is nearly always one being read, so a
   * group waited for the next again and again; every batch in it stayed unacknowledged for up to
   * the 10 s cap (the soak's 20-event batches answered in 12 s at the 50th percentile). Waiting
   * pays off only for large batches, and those spend their time writing, not waiting.
   */
  private async fill(group: Pending<J, R>[], results: R[]): Promise<void> {
    let idleBudget = this.options.maxWaitMs;
    const openedAt = performance.now();
    let idleSince = openedAt;
    let rows = 0;
    for (;;) {
      // Taken into the group before writing, so a failure settles every one of them.
      const taken = this.ready.splice(0);
      group.push(...taken);
      // All ready jobs in one call: the writer may write them together, at a cost that hardly
      // grows with their number, so a writer that fell behind catches up.
      if (taken.length > 0) {
        for (const p of taken) rows += p.rows;
        results.push(...(await this.writer.add(taken.map((p) => p.job))));
      }
      if (taken.length > 0) idleSince = performance.now();
      if (rows >= this.options.fullGroupRows) return;
      // A steady trickle of small batches would otherwise keep the group open (and every batch in
      // it unacknowledged) until it fills a row group: minutes at a few hundred events a second.
      if (performance.now() - openedAt >= GROUP_OPEN_WAITS * this.options.maxWaitMs) return;
      if (this.ready.length > 0) continue;
      const left = Math.min(idleSince + this.options.maxWaitMs - performance.now(), idleBudget);
      if (this.preparing === 0 || left <= 0) return;
      const waited = performance.now();
      await this.changeOrTimeout(left);
      idleBudget -= performance.now() - waited;
    }
  }

  /** The group takes no more jobs: those submitted from now on go to the next one. */
  private endIntake(): void {
    this.flushQueued = false;
    if (this.ready.length > 0) this.scheduleFlush();
  }

  /** After a failed group: rolls it back and writes each of its jobs alone. */
  private async settleAlone(group: readonly Pending<J, R>[]): Promise<void> {
    await this.writer.rollback();
    for (const p of group) {
      try {
        p.resolve(await this.writer.alone(p.job));
      } catch (e) {
        p.reject(e);
      }
    }
  }

  private changeOrTimeout(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        if (self.wake === done) self.wake = undefined;
        resolve();
      }
      this.wake = done;
    });
  }

  private poke(): void {
    this.wake?.();
  }
}
