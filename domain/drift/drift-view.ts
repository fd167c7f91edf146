import type { DriftRow } from './drift-check';

/** An open departure as the API and notifications show it. */
export type DriftView = {
  id: string;
  kind: DriftRow['kind'];
  object: string;
  rule_id: string | null;
  deployment_id: string | null;
  detail: string;
  first_seen_at: string;
  last_seen_at: string;
};

export function driftView(r: DriftRow): DriftView {
  return {
    id: r.id,
    kind: r.kind,
    object: r.objectName,
    rule_id: r.ruleId,
    deployment_id: r.deploymentId,
    detail: r.detail,
    first_seen_at: r.firstSeenAt.toISOString(),
    last_seen_at: r.lastSeenAt.toISOString(),
  };
}
