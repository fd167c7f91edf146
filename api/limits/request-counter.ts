import type { Logger } from 'pino';
import type { Database } from '../../db/client';

/** Counts requests per bucket per UTC day; `increment` returns the count including this request. */
export interface RequestCounter {
  increment(bucket: string, day: string): Promise<number>;
  /** Writes whatever is held in memory; called before reads of the counters and at shutdown. */
  flush(): Promise<void>;
}

const UPSERT_MANY = `
  insert into rate_limit_counters (bucket, day, count) values ($1, $2, $3)
  on conflict (bucket, day) do update set count = rate_limit_counters.count + excluded.count
  returning count`;

/**
 * PostgreSQL: counts are atomic upserts in the shared table, so every API process sharing the
 * database shares the count and the limit holds exactly across them. Requests for the same bucket
 * that arrive in the same event-loop turn are counted by one upsert of `+n` (group commit): the
 * database answers the new total C, and the n requests take C-n+1 … C in arrival order, exactly
 * the counts n separate upserts would have given them.
 */
export class SharedRequestCounter implements RequestCounter {
  private pending = new Map<string, { bucket: string; day: string; waiters: Array<{ resolve: (n: number) => void; reject: (e: unknown) => void }> }>();
  private scheduled = false;
  private inFlight = new Set<Promise<void>>();

  constructor(private readonly database: Database) {}

  increment(bucket: string, day: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const key = `${day}\u0000${bucket}`;
      let group = this.pending.get(key);
      if (!group) {
        group = { bucket, day, waiters: [] };
        this.pending.set(key, group);
      }
      group.waiters.push({ resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.writeGroups());
      }
    });
  }

  async flush(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  private writeGroups(): void {
    this.scheduled = false;
    const groups = [...this.pending.values()];
    this.pending.clear();
    for (const group of groups) {
      const n = group.waiters.length;
      const write = this.database
        .queryPrepared<{ count: number }>('detflow_count_requests', UPSERT_MANY, [group.bucket, group.day, n])
        .then(
          ([row]) => {
            const total = Number(row!.count);
            group.waiters.forEach((w, i) => w.resolve(total - n + 1 + i));
          },
          (err: unknown) => group.waiters.forEach((w) => w.reject(err)),
        )
        .finally(() => this.inFlight.delete(write));
      this.inFlight.add(write);
    }
  }
}

/**
 * PGlite: the database lives inside this one process, so no other process can count against it and
 * the in-memory count is exact. Counts are loaded from the database on first use and written back
 * every FLUSH_MS, which keeps a database write off every request; a crash loses at most FLUSH_MS of
 * counts (never the limit itself).
 */
export class InProcessRequestCounter implements RequestCounter {
  private static readonly FLUSH_MS = 200;
  private readonly counts = new Map<string, { bucket: string; day: string; count: number; dirty: boolean }>();
  private readonly loading = new Map<string, Promise<number>>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  async increment(bucket: string, day: string): Promise<number> {
    const key = `${day}\u0000${bucket}`;
    let entry = this.counts.get(key);
    if (!entry) {
      let load = this.loading.get(key);
      if (!load) {
        load = this.database
          .queryPrepared<{ count: number }>('detflow_load_count', 'select count from rate_limit_counters where bucket = $1 and day = $2', [bucket, day])
          .then((rows) => Number(rows[0]?.count ?? 0));
        this.loading.set(key, load);
      }
      const stored = await load;
      this.loading.delete(key);
      entry = this.counts.get(key);
      if (!entry) {
        entry = { bucket, day, count: stored, dirty: false };
        this.dropOtherDays(day);
        this.counts.set(key, entry);
      }
    }
    entry.count += 1;
    entry.dirty = true;
    this.timer ??= setTimeout(() => void this.flush(), InProcessRequestCounter.FLUSH_MS);
    return entry.count;
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const dirty = [...this.counts.values()].filter((e) => e.dirty);
    for (const e of dirty) e.dirty = false;
    if (dirty.length === 0) return this.writing;
    this.writing = this.writing.then(async () => {
      for (const e of dirty) {
        try {
          await this.database.queryPrepared(
            'detflow_store_count',
            'insert into rate_limit_counters (bucket, day, count) values ($1, $2, $3) on conflict (bucket, day) do update set count = greatest(rate_limit_counters.count, excluded.count)',
            [e.bucket, e.day, e.count],
          );
        } catch (err) {
          e.dirty = true;
          this.logger.error({ err, bucket: e.bucket, day: e.day }, 'failed to store a rate-limit count; will retry');
        }
      }
    });
    return this.writing;
  }

  private dropOtherDays(day: string): void {
    for (const [key, e] of this.counts) if (e.day !== day && !e.dirty) this.counts.delete(key);
  }
}

export function createRequestCounter(database: Database, logger: Logger): RequestCounter {
  return database.kind === 'postgres' ? new SharedRequestCounter(database) : new InProcessRequestCounter(database, logger);
}
