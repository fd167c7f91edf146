import type { AlertOnTarget } from '../../domain/alerts/alerts';

export function alertView({ alert: a, target }: AlertOnTarget) {
  return {
    id: a.id,
    rule_id: a.ruleId,
    version: a.version,
    deployment_id: a.deploymentId,
    target,
    event_id: a.eventId,
    event_time: a.eventTime.toISOString(),
    event: a.event,
    status: a.status,
    disposition: a.disposition,
    assignee: a.assignee,
    team: a.team,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
    acknowledged_at: a.acknowledgedAt?.toISOString() ?? null,
    closed_at: a.closedAt?.toISOString() ?? null,
  };
}
