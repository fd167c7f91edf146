import type { Logger } from 'pino';
import type { Db } from '../db/client';
import type { SecretBox } from '../config/secret-box';
import type { WebhookRetry } from '../config/env';
import type { SiemAdapters } from '../siem/adapters';
import type { DomainMetrics } from '../domain/metrics';
import { createDeploymentActivities } from './deployments';
import { createNotificationActivities } from './notifications';
import { createDetectionActivities } from './detection';
import { createApprovalActivities } from './approvals';
import { createRetentionActivities } from './retention';
import { createScheduleActivities, type DetectionScheduleMode, type TemporalDeps } from './schedules';
import { createReplayActivities } from './replay';
import { createShadowActivities } from './shadow';
import { createRollbackPlanActivities } from './rollback-plan';
import { createHealthActivities } from './health';
import { createDriftActivities } from './drift';
import { createSettingsChangeActivities } from './settings-changes';
import { withSiemFailures } from './siem-failures';

export type ActivityDeps = {
  db: Db;
  logger: Logger;
  secrets: SecretBox;
  siem: SiemAdapters;
  temporal: TemporalDeps;
  /** What the activities' use cases count (detection runs, alerts, webhook deliveries); nothing without it. */
  metrics?: DomainMetrics;
  /** How webhook deliveries are retried (DETFLOW_WEBHOOK_RETRY_*); the default schedule without it. */
  webhookRetry?: WebhookRetry;
  /** How scheduled detection is scheduled (DETFLOW_DETECTION_SCHEDULES); `per-target` without it. */
  detectionSchedules?: DetectionScheduleMode;
};

/** Every activity the worker registers, built from explicit dependencies so tests wire real ones. */
export function createActivities(deps: ActivityDeps) {
  // A remote SIEM's failures become Temporal's (permanent, or retried after its Retry-After) in one place.
  return withSiemFailures({
    ...createDeploymentActivities(deps),
    ...createNotificationActivities(deps),
    ...createDetectionActivities(deps),
    ...createApprovalActivities(deps),
    ...createRetentionActivities(deps),
    ...createScheduleActivities({ ...deps, ...(deps.detectionSchedules ? { mode: deps.detectionSchedules } : {}) }),
    ...createReplayActivities(deps),
    ...createShadowActivities(deps),
    ...createRollbackPlanActivities(deps),
    ...createHealthActivities(deps),
    ...createDriftActivities(deps),
    ...createSettingsChangeActivities(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;
export type { ReplayActivities } from './replay';
export type { ShadowActivities } from './shadow';
