import { Context } from '@temporalio/activity';

/**
 * Runs `work` while heartbeating, so that when the activity has a heartbeat timeout the server
 * notices a dead worker within that timeout and retries elsewhere, instead of waiting out the whole
 * start-to-close timeout. The SDK throttles what reaches the server; ticking at a third of the
 * timeout leaves room for a busy event loop. Ticking stops once the attempt is cancelled, which
 * includes its own worker shutting down: a worker that is going away must not keep alive an
 * attempt it may never finish — the server hands it to another worker, so what `work` does must be
 * safe to do twice (the adapter deploy is keyed by the deployment id; a replay chunk only counts).
 * Outside an activity (a direct call) there is nothing to heartbeat to.
 */
export async function withHeartbeat<T>(work: () => Promise<T>, details?: unknown): Promise<T> {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return work();
  }
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  if (!timeoutMs) return work();
  ctx.heartbeat(details);
  const signal = ctx.cancellationSignal;
  const ticker = setInterval(() => ctx.heartbeat(details), Math.max(100, Math.floor(timeoutMs / 3)));
  const stop = () => clearInterval(ticker);
  signal.addEventListener('abort', stop, { once: true });
  try {
    return await work();
  } finally {
    stop();
    signal.removeEventListener('abort', stop);
  }
}
