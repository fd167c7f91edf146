import type { TemporalContext } from '../../domain/deps';
import type { ApprovalRecord } from '../../domain/approvals/approvals';
import { runLink } from '../context';
import { recordedImpact } from '../runs/projection.view';

/** How the API shows an approval: the record, with links to itself, its deployments and its run. */
export function approvalView(temporal: TemporalContext, a: ApprovalRecord) {
  const run = runLink(temporal, a.workflowId, null);
  return {
    id: a.id,
    rule_id: a.ruleId,
    version: a.version,
    targets: a.targets,
    status: a.status,
    description: a.description,
    link: a.link,
    noise_budget: a.noiseBudget ?? null,
    impact: recordedImpact(a.impact),
    requested_by: a.requestedBy,
    requested_by_principal: a.requestedByPrincipal,
    decided_by: a.decidedBy,
    decided_by_principal: a.decidedByPrincipal,
    decision: a.decision,
    comment: a.comment,
    deployment_ids: a.deploymentIds,
    workflow_id: a.workflowId,
    created_at: a.createdAt.toISOString(),
    decided_at: a.decidedAt?.toISOString() ?? null,
    expires_at: a.expiresAt?.toISOString() ?? null,
    links: { self: `/api/v1/approvals/${a.id}`, deployments: a.deploymentIds.map((d) => `/api/v1/deployments/${d}`), ...(run ? { run } : {}) },
  };
}
