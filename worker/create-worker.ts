import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { Db } from '../db/client';
import { createActivities } from '../activities';
import { ensureDriftSchedule, ensureRetentionSchedule, migrateDetectionSchedules, type DetectionScheduleMode } from '../activities/schedules';
import type { SecretBox } from '../config/secret-box';
import type { WebhookRetry } from '../config/env';
import type { SiemAdapters } from '../siem/adapters';
import type { DomainMetrics } from '../domain/metrics';
import { databaseOutageInterceptor } from './database-outage-interceptor';

export type WorkerWiring = {
  address: string;
  namespace: string;
  taskQueue: string;
  db: Db;
  logger: Logger;
  secrets: SecretBox;
  siem: SiemAdapters;
  /** For activities that manage schedules and start runs (scheduled detection). */
  client: Client;
  /** Where the activities count what happens (the process's metrics); nothing is counted without it. */
  metrics?: DomainMetrics;
  /** How often the scheduled drift check runs (DETFLOW_DRIFT_CHECK_MINUTES). */
  driftCheckMinutes?: number;
  /** How webhook deliveries are retried (DETFLOW_WEBHOOK_RETRY_*). */
  webhookRetry?: WebhookRetry;
  /** How scheduled detection is scheduled (DETFLOW_DETECTION_SCHEDULES); `per-target` without it. */
  detectionSchedules?: DetectionScheduleMode;
  /** On shutdown, how long activity attempts in flight may run before they are cancelled (default: none). */
  shutdownGraceMs?: number;
  /** A prebuilt bundle (tests build it once); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
};

export const WORKFLOWS_PATH = require.resolve('../workflows');

export async function createWorker(wiring: WorkerWiring): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: wiring.address });
  try {
    const worker = await Worker.create({
      connection,
      namespace: wiring.namespace,
      taskQueue: wiring.taskQueue,
      interceptors: { activity: [databaseOutageInterceptor(wiring.logger)] },
      ...(wiring.shutdownGraceMs !== undefined ? { shutdownGraceTime: wiring.shutdownGraceMs } : {}),
      activities: createActivities({
        db: wiring.db,
        logger: wiring.logger,
        secrets: wiring.secrets,
        siem: wiring.siem,
        temporal: { client: wiring.client, taskQueue: wiring.taskQueue },
        ...(wiring.metrics ? { metrics: wiring.metrics } : {}),
        ...(wiring.webhookRetry ? { webhookRetry: wiring.webhookRetry } : {}),
        ...(wiring.detectionSchedules ? { detectionSchedules: wiring.detectionSchedules } : {}),
      }),
      ...(wiring.workflowBundle ? { workflowBundle: wiring.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    });
    await ensureRetentionSchedule({ client: wiring.client, taskQueue: wiring.taskQueue });
    await ensureDriftSchedule({ client: wiring.client, taskQueue: wiring.taskQueue }, wiring.driftCheckMinutes ?? 15);
    // The live deployments' schedules in the configured mode (a switch of DETFLOW_DETECTION_SCHEDULES takes effect at start).
    await migrateDetectionSchedules(wiring.db, { client: wiring.client, taskQueue: wiring.taskQueue }, wiring.detectionSchedules ?? 'per-target');
    return { worker, connection };
  } catch (err) {
    await connection.close();
    throw err;
  }
}
