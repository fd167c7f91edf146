import type { Client } from '@temporalio/client';
import type { Database } from '../db/client';
import type { SecretBox } from '../config/secret-box';
import type { SiemAdapters } from '../siem/adapters';
import type { DomainMetrics } from './metrics';

export type TemporalContext = {
  client: Client;
  namespace: string;
  taskQueue: string;
  /** Base URL of the Temporal Web UI, for links to runs; absent when unknown. */
  uiUrl: string | undefined;
};

/** What the use cases need from the outside world, wired by the process that runs them. */
export type DomainDeps = {
  database: Database;
  temporal: TemporalContext;
  /** Encrypts secrets stored in the database (webhook secrets, target credentials). */
  secrets: SecretBox;
  /** The SIEM adapters of this process (the embedded local store among them). */
  siem: SiemAdapters;
  /** The clock for records and limits; tests may pin it. */
  now?: () => Date;
  /** Where the use cases count what happens, for operators (domain/metrics.ts); nothing is counted without it. */
  metrics?: DomainMetrics;
};
