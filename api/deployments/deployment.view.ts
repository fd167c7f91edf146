import type { DeploymentRecord } from '../../domain/changes/deployments';
import { runLink, type ApiDeps } from '../context';

/** How the API shows a deployment. */
export function deploymentView(temporal: ApiDeps['temporal'], record: DeploymentRecord) {
  const d = record.deployment;
  const run = runLink(temporal, d.workflowId, d.runId);
  return {
    id: d.id,
    rule_id: d.ruleId,
    version: d.version,
    target: record.targetName,
    environment: record.environment,
    status: d.status,
    approval_required: d.approvalRequired,
    noise_budget: d.noiseBudget ?? null,
    demotion: record.demotion,
    drift: record.drift,
    mapping: d.mapping ?? null,
    requested_by: d.requestedBy,
    requested_by_principal: d.requestedByPrincipal,
    error: d.error,
    workflow_id: d.workflowId,
    run_id: d.runId,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    activated_at: d.activatedAt?.toISOString() ?? null,
    ended_at: d.endedAt?.toISOString() ?? null,
    approval_id: record.approvalId,
    links: {
      self: `/api/v1/deployments/${d.id}`,
      ...(record.approvalId ? { approval: `/api/v1/approvals/${record.approvalId}` } : {}),
      ...(run ? { run } : {}),
    },
  };
}
