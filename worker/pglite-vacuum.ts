import type { Logger } from 'pino';
import type { Database } from '../db/client';
import { runPeriodically } from './periodic';

/**
 * The autovacuum the embedded database lacks. PGlite runs PostgreSQL as one backend inside this
 * process, without the autovacuum launcher (and without the statistics collector it reads), so
 * left alone no table is ever analyzed or vacuumed: the planner keeps the estimates of an empty
 * table however large the table grows, and dead row versions pile up. Measured in the soak (decision
 * record 0088): after five minutes the alert list read 5,600 alerts in a bitmap scan and sorted
 * them for a page of 20 (130 ms) where, once analyzed, it reads the page from its index (7 ms), and
 * PGlite's share of the service's time grew minute by minute.
 *
 * Each pass is one VACUUM (ANALYZE) of the whole database, on the database's own queue (queries
 * wait for it, as they do for a transaction); PostgreSQL's lazy vacuum skips the pages it found
 * all visible before, and ANALYZE samples at most 30,000 rows a table, so a pass stays short as
 * the database grows. Passes never overlap: the next is timed from the end of the last.
 */
export type PeriodicVacuum = {
  /** Passes finished so far. */
  readonly passes: number;
  /** Stops the schedule and waits for a pass under way. */
  stop(): Promise<void>;
};

export type PeriodicVacuumOptions = {
  /** Time between the end of one pass and the start of the next. */
  everyMs: number;
  /** Time to the first pass (default: a minute, or everyMs when shorter), so a fresh database's tables get statistics once filled. */
  firstAfterMs?: number;
  logger: Pick<Logger, 'debug' | 'error'>;
};

export function startPeriodicVacuum(database: Required<Pick<Database, 'vacuum'>>, options: PeriodicVacuumOptions): PeriodicVacuum {
  let passes = 0;
  const schedule = runPeriodically(
    async () => {
      const started = performance.now();
      try {
        await database.vacuum();
        passes++;
        options.logger.debug({ ms: Math.round(performance.now() - started) }, 'vacuumed and analyzed the embedded database');
      } catch (err) {
        // Logged, and tried again at the next pass: a failed pass leaves the database as it was.
        options.logger.error({ err }, 'VACUUM (ANALYZE) of the embedded database failed; trying again at the next pass');
      }
    },
    { firstAfterMs: options.firstAfterMs ?? Math.min(60_000, options.everyMs), everyMs: options.everyMs },
  );

  return {
    get passes() {
      return passes;
    },
    stop: () => schedule.stop(),
  };
}
