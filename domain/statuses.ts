/**
 * The statuses of the records and the policies people choose, as the database stores them and the
 * API answers them. Workflows read them only as types.
 */

export const DEPLOYMENT_STATUSES = [
  'pending_approval',
  'deploying',
  'active',
  'superseded',
  'rolled_back',
  'rejected',
  'changes_requested',
  'expired',
  'failed',
  'demoted',
  /** Not applied: a newer version of the rule, requested after this change, went live on the target first. */
  'overtaken',
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/**
 * The states in which a rule is on its target: `active` alerts; `demoted` (its noise budget was
 * exceeded under `on_exceed: demote`) keeps running in shadow, raising no alert, until promoted.
 */
export const LIVE_DEPLOYMENT_STATUSES = ['active', 'demoted'] as const satisfies readonly DeploymentStatus[];

/** Terminal states: a deployment in one never changes again, and nothing of it runs any more. */
export const FINAL_DEPLOYMENT_STATUSES = [
  'superseded',
  'rolled_back',
  'rejected',
  'changes_requested',
  'expired',
  'failed',
  'overtaken',
] as const satisfies readonly DeploymentStatus[];

/** What happens when scheduled detection goes over the budget of a UTC day. */
export const ON_EXCEED_POLICIES = ['suppress', 'demote', 'rollback'] as const;
export type NoiseBudgetPolicy = { max_alerts_per_day: number; on_exceed?: (typeof ON_EXCEED_POLICIES)[number] };

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'changes_requested', 'expired', 'cancelled'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** What a reviewer decides on an approval. */
export const APPROVAL_DECISIONS = ['approve', 'reject', 'request_changes'] as const;
export type Decision = (typeof APPROVAL_DECISIONS)[number];

export const ALERT_STATUSES = ['open', 'acknowledged', 'closed', 'suppressed'] as const;
export const DISPOSITIONS = ['true_positive', 'false_positive', 'benign', 'duplicate'] as const;

/** Replays and shadow evaluations. */
export const RUN_STATUSES = ['running', 'completed', 'cancelled', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
