import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/env';
import type { Database } from '../db/client';
import type { SecretBox } from '../config/secret-box';
import type { SiemAdapters } from '../siem/adapters';

/** What the API needs from the outside world, wired by the process that runs it. */
export type TemporalContext = {
  client: Client;
  namespace: string;
  taskQueue: string;
  /** Base URL of the Temporal Web UI, for links to runs; absent when unknown. */
  uiUrl: string | undefined;
};

export type ApiDeps = {
  config: Pick<AppConfig, 'bodyLimit' | 'publicUrl' | 'ingestLimitBytes'>;
  database: Database;
  temporal: TemporalContext;
  logger: Logger;
  /** Encrypts secrets stored in the database (webhook secrets, target credentials). */
  secrets: SecretBox;
  /** The SIEM adapters of this process (the embedded local store among them). */
  siem: SiemAdapters;
  /** The clock for records and limits; tests may pin it. */
  now?: () => Date;
};

export function runLink(temporal: TemporalContext, workflowId: string, runId: string | null): string | undefined {
  if (!temporal.uiUrl) return undefined;
  const base = `${temporal.uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}
