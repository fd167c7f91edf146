import type { TakeBackup } from './settings/backup.routes';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/env';
import type { DomainDeps, TemporalContext } from '../domain/deps';
import type { ServiceMetrics } from '../lib/metrics/service-metrics';
import type { DependencyMonitor } from '../lib/dependency-monitor';

/** What the API needs from the outside world, wired by the process that runs it: the domain's dependencies, and its own. */
export type ApiDeps = DomainDeps & {
  /** Settings left out take their defaults (config/env.ts). */
  config: Pick<AppConfig, 'bodyLimit' | 'publicUrl' | 'ingestLimitBytes'> & Partial<Pick<AppConfig, 'metricsToken' | 'maxEventBytes' | 'bodyTimeoutSeconds'>>;
  logger: Logger;
  /** This process's metrics, exposed at /metrics; the domain counts into them too. Made by buildApp when the process gives none. */
  metrics?: ServiceMetrics;
  /**
   * The process's watch over its dependencies (database, Temporal, event store), which /readyz
   * reads; startApi makes and runs one over the database and Temporal when the process gives none.
   */
  readiness?: DependencyMonitor;
  /** Takes a backup of the embedded default (`POST /settings/backup`); absent, that answers 409. */
  backup?: TakeBackup;
};

export function runLink(temporal: TemporalContext, workflowId: string, runId: string | null): string | undefined {
  if (!temporal.uiUrl) return undefined;
  const base = `${temporal.uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}
