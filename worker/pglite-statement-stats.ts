import type { Logger } from 'pino';
import type { Database } from '../db/client';
import { runPeriodically } from './periodic';

/**
 * Reports the embedded database's busiest statements (DETFLOW_PGLITE_STATEMENT_STATS_MINUTES): every
 * period, one log line with the statements that took the most time in it (planning and execution), then the
 * counters start again. PGlite runs in the service's own thread, so no outside tool can watch it;
 * comparing these lines between periods shows which statement grows with the data (decision record
 * 0092). Logged at info whatever LOG_LEVEL says: an operator who turns this on wants to see it.
 */
export type StatementStatsReporter = {
  /** Reports logged so far. */
  readonly reports: number;
  /** Stops the schedule and waits for a report under way. */
  stop(): Promise<void>;
};

export function startStatementStatsReports(
  database: Required<Pick<Database, 'takeStatementStats'>>,
  options: { everyMs: number; top?: number; logger: Pick<Logger, 'child'> },
): StatementStatsReporter {
  const logger = options.logger.child({ component: 'pglite-statement-stats' }, { level: 'info' });
  const top = options.top ?? 15;
  let reports = 0;

  const report = async () => {
    try {
      const statements = await database.takeStatementStats(top);
      reports++;
      logger.info(
        {
          periodMinutes: options.everyMs / 60_000,
          totalMs: Math.round(statements.reduce((sum, s) => sum + s.totalMs, 0)),
          statements: statements.map((s) => ({
            ...s,
            totalMs: Math.round(s.totalMs),
            planMs: Math.round(s.planMs),
            meanMs: Number(s.meanMs.toFixed(3)),
            query: s.query.replace(/\s+/g, ' ').slice(0, 400),
          })),
        },
        `the embedded database's ${statements.length} busiest statements of the period`,
      );
    } catch (err) {
      logger.error({ err }, 'reading pg_stat_statements of the embedded database failed; trying again at the next period');
    }
  };
  const schedule = runPeriodically(report, { firstAfterMs: options.everyMs, everyMs: options.everyMs });

  return {
    get reports() {
      return reports;
    },
    stop: () => schedule.stop(),
  };
}
