import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * The contract of the runs, shared by the workflows and everyone who starts, queries, signals or
 * reports on them: workflow type names and ids, search attributes, query/signal/update names and
 * failure types. It lives with the workflows (which may import values only from workflows/ and the
 * Temporal SDK) and imports nothing but the SDK, so the domain, the activities and the API read the
 * same constants the workflows define their runs with.
 */

// ── Search attributes ───────────────────────────────────────────────────────────────────────────

/**
 * Every run carries these, so an operator can filter runs in the Temporal UI, e.g.
 * `DetflowRuleId = "…" AND DetflowStatus = "pending_approval"`.
 */
export const TENANT = defineSearchAttributeKey('DetflowTenant', SearchAttributeType.KEYWORD);
export const RULE_ID = defineSearchAttributeKey('DetflowRuleId', SearchAttributeType.KEYWORD);
export const TARGET = defineSearchAttributeKey('DetflowTarget', SearchAttributeType.KEYWORD);
export const KIND = defineSearchAttributeKey('DetflowKind', SearchAttributeType.KEYWORD);
export const STATUS = defineSearchAttributeKey('DetflowStatus', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [TENANT, RULE_ID, TARGET, KIND, STATUS] as const;

/** The search attributes a Rollback run starts with, whoever starts it (a person, or a noise budget). */
export function rollbackSearchAttributes(input: { tenantId: string; ruleId: string; targetName: string }) {
  return [
    { key: TENANT, value: input.tenantId },
    { key: RULE_ID, value: input.ruleId },
    { key: TARGET, value: input.targetName },
    { key: KIND, value: 'rollback' },
    { key: STATUS, value: 'running' },
  ];
}

/** The values of `DetflowKind`. */
export type RunKind = 'deploy' | 'approval' | 'replay' | 'shadow' | 'rollback' | 'notify' | 'detect' | 'retention' | 'drift';

// ── Workflow types ──────────────────────────────────────────────────────────────────────────────

/** The names runs are started by (each is the exported workflow function of the same name). */
export const WorkflowType = {
  DeployWithApproval: 'DeployWithApproval',
  Rollback: 'Rollback',
  Replay: 'Replay',
  ShadowEvaluation: 'ShadowEvaluation',
  Notify: 'Notify',
  Redeliver: 'Redeliver',
  DetectionRun: 'DetectionRun',
  DetectionBatch: 'DetectionBatch',
  ApplyRetention: 'ApplyRetention',
  DriftCheck: 'DriftCheck',
  RestoreDeployment: 'RestoreDeployment',
  SettingsChange: 'SettingsChange',
} as const;

/**
 * The messages runs answer and accept. Workflows define their queries, signals and updates under
 * these names; the domain, which imports only types from workflows/, sends them by name.
 */
export const RunQuery = {
  deploymentState: 'deploymentState',
  replayProgress: 'replayProgress',
  shadowProgress: 'shadowProgress',
  /** Every run's step in words (also its current details in the Temporal UI). */
  currentStep: 'currentStep',
} as const;
export const RunSignal = { stopShadow: 'stopShadow' } as const;
export const RunUpdate = { decide: 'decide' } as const;

// ── Workflow and schedule ids ───────────────────────────────────────────────────────────────────
// Readable ids (`deploy/<tenant>/<rule>/<target>/<id>`): an operator finds a run by what it is about,
// and an id derived from a stored key makes a retried start land on the same run.

export const workflowIds = {
  /** A change deployed without approval, to one target. */
  deploy: (tenantId: string, ruleId: string, targetName: string, changeId: string) => `deploy/${tenantId}/${ruleId}/${targetName}/${changeId}`,
  /** A change waiting for a reviewer, to one or more targets. */
  approval: (tenantId: string, ruleId: string, approvalId: string) => `approval/${tenantId}/${ruleId}/${approvalId}`,
  replay: (tenantId: string, ruleId: string, targetName: string, replayId: string) => `replay/${tenantId}/${ruleId}/${targetName}/${replayId}`,
  shadow: (tenantId: string, ruleId: string, targetName: string, shadowId: string) => `shadow/${tenantId}/${ruleId}/${targetName}/${shadowId}`,
  /** Rollback runs are keyed per rule and target by who asked: an idempotency key, a request, a noise budget. */
  rollback: (tenantId: string, ruleId: string, targetName: string, key: string) => `rollback/${tenantId}/${ruleId}/${targetName}/${key}`,
  /** One notification, keyed by what caused it so it is sent once. */
  notify: (tenantId: string, event: string, ...key: string[]) => [`notify/${tenantId}/${event}`, ...key].join('/'),
  /** A re-send of a given-up delivery, keyed by the attempts it had: repeated requests join one run. */
  redeliver: (tenantId: string, deliveryId: string, attempts: number) => `notify/${tenantId}/redeliver/${deliveryId}/${attempts}`,
  /** The schedule (and the id of each run it starts) of a deployment's scheduled detection. */
  detectionSchedule: (tenantId: string, deploymentId: string) => `detect/${tenantId}/${deploymentId}`,
  /** The schedule (and the id of each run it starts) of the batched detection of every live deployment of a tenant on a target. */
  detectionBatchSchedule: (tenantId: string, targetId: string) => `detect/${tenantId}/target/${targetId}`,
  retentionSchedule: 'retention/daily',
  /** The scheduled drift check of every target with something deployed. */
  driftSchedule: 'drift/scheduled',
  /** A drift check of one target asked for through the API. */
  driftCheck: (tenantId: string, targetId: string, requestId: string) => `drift/${tenantId}/${targetId}/${requestId}`,
  /** A live deployment put back on its target as detflow deployed it. */
  restore: (tenantId: string, deploymentId: string, requestId: string) => `restore/${tenantId}/${deploymentId}/${requestId}`,
} as const;

// ── Failure types ───────────────────────────────────────────────────────────────────────────────

/**
 * `ApplicationFailure` types. Activities throw the permanent ones as non-retryable; workflows list
 * them in their retry policies; the API turns the decision ones into answers.
 */
export const FailureType = {
  RuleDoesNotCompile: 'RuleDoesNotCompile',
  UnsupportedTargetKind: 'UnsupportedTargetKind',
  /** A remote target's stored settings its kind refuses (or credentials that no longer open). */
  TargetMisconfigured: 'TargetMisconfigured',
  /** A remote SIEM refused the credentials (401/403) or the request itself (400/409/422): retrying cannot help. */
  SiemRefused: 'SiemRefused',
  DeploymentNotFound: 'DeploymentNotFound',
  ReplayNotFound: 'ReplayNotFound',
  ShadowNotFound: 'ShadowNotFound',
  DeliveryNotFound: 'DeliveryNotFound',
  WebhookRemoved: 'WebhookRemoved',
  WebhookDeliveryFailed: 'WebhookDeliveryFailed',
  DetectionQueryFailed: 'DetectionQueryFailed',
  /** A change overtaken by a newer one (or a removal by a newer version): not applied. */
  LiveVersionChanged: 'LiveVersionChanged',
  /** Thrown by the local event store's query layer (its error class's name). */
  EventStoreQueryError: 'EventStoreQueryError',
  /** Decisions refused by a deploy run's update handler. */
  AlreadyDecided: 'AlreadyDecided',
  SelfApproval: 'SelfApproval',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];
