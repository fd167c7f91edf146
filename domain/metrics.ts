/**
 * What the domain counts for operators, as it happens: the use cases call these, and the process
 * that runs them decides where the counts go (lib/metrics/service-metrics.ts keeps them for
 * Prometheus). The domain never sees the exposition; without wiring, nothing is counted.
 */

/** How a scheduled-detection run ended. */
export type DetectionRunOutcome = 'completed' | 'shadow' | 'skipped' | 'failed';

export type DomainMetrics = {
  /** A detection run that ended now (a retry answering an earlier attempt's outcome is not counted again). */
  detectionRun(outcome: DetectionRunOutcome): void;
  /** Alerts a detection run stored: open ones raised, and those the noise budget suppressed. */
  alerts(raised: number, suppressed: number): void;
  /** One webhook delivery attempt: answered 2xx, or not (an error or another status). */
  webhookAttempt(delivered: boolean): void;
  /** A webhook delivery given up for good (retries exhausted, or the webhook removed). */
  webhookDeliveryFailed(): void;
  /** One batch of events: lines stored, and lines refused. */
  eventsIngested(accepted: number, rejected: number): void;
};

/** Counts nothing: the default where no process wired a recorder. */
export const noMetrics: DomainMetrics = {
  detectionRun() {},
  alerts() {},
  webhookAttempt() {},
  webhookDeliveryFailed() {},
  eventsIngested() {},
};
