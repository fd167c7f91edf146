import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { ImpactSummary } from '../domain/changes/impact-summary';
import { RunQuery, RunUpdate } from './contracts';
import type { Decision, DeploymentStatus, NoiseBudgetPolicy } from '../domain/statuses';

/** What a DeployWithApproval run is given, answers and accepts: its input, state query and decision update. */

export type DeploymentRef = { deploymentId: string; targetId: string; targetName: string };

export type DeployInput = {
  tenantId: string;
  ruleId: string;
  version: number;
  deployments: DeploymentRef[];
  noiseBudget: NoiseBudgetPolicy | null;
  /** When set, the deployments wait for a reviewer's decision on this approval. */
  approval: { approvalId: string; requestedBy: string | null; expiresInMs: number } | null;
};

/** What a SettingsChange run is given: a target's proposed settings version and its approval. */
export type SettingsChangeInput = {
  tenantId: string;
  targetId: string;
  targetName: string;
  version: number;
  approval: { approvalId: string; requestedBy: string | null; expiresInMs: number };
};

export type ApprovalState = {
  approval_id: string;
  status: 'pending' | 'approved' | 'rejected' | 'changes_requested' | 'expired' | 'cancelled';
  decision: Decision | null;
  comment: string | null;
  decided_by: string | null;
};

export type DeployState = {
  status: DeploymentStatus;
  version: number;
  impact: ImpactSummary | null;
  approval: ApprovalState | null;
  deployments: Array<{ deployment_id: string; target: string; status: DeploymentStatus; error: string | null }>;
};

export type DecisionInput = { decision: Decision; comment: string | null; decidedBy: string };

export const deploymentStateQuery = defineQuery<DeployState>(RunQuery.deploymentState);
/** A reviewer's decision. An update, not a signal, so the caller learns at once whether it was taken. */
export const decideUpdate = defineUpdate<ApprovalState, [DecisionInput]>(RunUpdate.decide);
