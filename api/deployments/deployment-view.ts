import { and, eq, gte, sql } from 'drizzle-orm';
import type { ApiDeps } from '../context';
import { runLink } from '../context';
import { approvals, deployments, detectionRuns, targets, type Demotion } from '../../db/schema';

/** How the API shows a deployment: the record, its target, its approval and its last demotion. */
export function deploymentViewer(deps: ApiDeps) {
  const { db } = deps.database;
  const { temporal } = deps;

  async function deploymentView(id: string, tenantId: string) {
    const [row] = await db
      .select({ d: deployments, targetName: targets.name, environment: targets.environment, approvalId: approvals.id })
      .from(deployments)
      .innerJoin(targets, eq(targets.id, deployments.targetId))
      .leftJoin(approvals, eq(approvals.workflowId, deployments.workflowId))
      .where(and(eq(deployments.id, id), eq(deployments.tenantId, tenantId)));
    if (!row) return undefined;
    const d = row.d;
    return {
      id: d.id,
      rule_id: d.ruleId,
      version: d.version,
      target: row.targetName,
      environment: row.environment,
      status: d.status,
      approval_required: d.approvalRequired,
      noise_budget: d.noiseBudget ?? null,
      demotion: await demotionView(d.id, d.demotion),
      requested_by: d.requestedBy,
      error: d.error,
      workflow_id: d.workflowId,
      run_id: d.runId,
      created_at: d.createdAt.toISOString(),
      updated_at: d.updatedAt.toISOString(),
      activated_at: d.activatedAt?.toISOString() ?? null,
      ended_at: d.endedAt?.toISOString() ?? null,
      links: {
        self: `/api/v1/deployments/${d.id}`,
        ...(row.approvalId ? { approval: `/api/v1/approvals/${row.approvalId}` } : {}),
        ...optionalRun(d.workflowId, d.runId),
      },
    };
  }

  function optionalRun(workflowId: string, runId: string | null) {
    const run = runLink(temporal, workflowId, runId);
    return run ? { run } : {};
  }

  /** The demotion with what the rule matched in shadow since: what it would have raised. */
  async function demotionView(deploymentId: string, demotion: Demotion | null) {
    if (!demotion) return null;
    const [shadow] = await db
      .select({ runs: sql<number>`count(*)::int`, matches: sql<number>`coalesce(sum(${detectionRuns.matches}), 0)::int` })
      .from(detectionRuns)
      .where(and(eq(detectionRuns.deploymentId, deploymentId), eq(detectionRuns.mode, 'shadow'), gte(detectionRuns.startedAt, new Date(demotion.demoted_at))));
    return { ...demotion, shadow_runs: shadow?.runs ?? 0, shadow_matches: shadow?.matches ?? 0 };
  }

  return deploymentView;
}
