/**
 * Runs `pass` once after `firstAfterMs`, then again `everyMs` after the end of each pass, so passes
 * never overlap. The timer alone keeps no process alive. A pass handles its own errors: one that
 * rejects still leads to the next.
 */
export function runPeriodically(pass: () => Promise<void>, timing: { firstAfterMs: number; everyMs: number }): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(() => {
        running = undefined;
        schedule(timing.everyMs);
      });
    }, ms);
    timer.unref();
  };
  schedule(timing.firstAfterMs);
  return {
    /** Stops the schedule and waits for a pass under way. */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
