import { ApplicationFailure, type Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, Next } from '@temporalio/worker';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/unavailable';

/** Failure type of an attempt that ended because the database stayed away: always retried. */
export const DATABASE_UNAVAILABLE = 'DatabaseUnavailable';

/** Margin kept before the attempt's start-to-close deadline, so the attempt ends on our terms. */
const MARGIN_MS = 2_000;
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 4_000;

/**
 * An activity whose database is away (restarting, failing over) waits for it inside the attempt and
 * runs again, instead of spending the workflow's few retries (detection allows five) on an outage
 * that is none of the activity's doing. Running again is what a Temporal retry would do, so
 * activities already written for retries stay exactly once. Past the attempt's deadline, or for an
 * activity that heartbeats (its details must not be overwritten, and its timeout is not known
 * here), the attempt fails as `DatabaseUnavailable`, which no workflow lists as non-retryable.
 */
export function databaseOutageInterceptor(logger: Logger): ActivityInterceptorsFactory {
  return (ctx) => ({ inbound: new WaitForDatabase(ctx, logger) });
}

class WaitForDatabase implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly ctx: Context,
    private readonly logger: Logger,
  ) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const { info } = this.ctx;
    const deadline = info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs - MARGIN_MS;
    let wait = FIRST_WAIT_MS;
    for (let tries = 1; ; tries++) {
      try {
        return await next(input);
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        const canWait = !info.heartbeatTimeoutMs && Date.now() + wait < deadline && !this.ctx.cancellationSignal.aborted;
        if (!canWait) {
          this.logger.warn(
            { activity: info.activityType, workflowId: info.workflowExecution?.workflowId, err: (err as Error).message },
            'the database is unavailable; the activity is retried by Temporal',
          );
          throw ApplicationFailure.create({
            message: `the database is unavailable: ${(err as Error).message}`,
            type: DATABASE_UNAVAILABLE,
            nonRetryable: false,
            cause: err as Error,
          });
        }
        if (tries === 1)
          this.logger.warn(
            { activity: info.activityType, workflowId: info.workflowExecution?.workflowId, err: (err as Error).message },
            'the database is unavailable; the activity waits for it',
          );
        await this.ctx.sleep(wait);
        wait = Math.min(wait * 2, MAX_WAIT_MS);
      }
    }
  }
}
