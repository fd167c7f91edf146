import type { TargetObject } from '../../siem/adapter';
import type { DriftKind } from '../../db/schema';

/** A deployment the service's records say is live on the target. */
export type LiveOnTarget = { deploymentId: string; ruleId: string; version: number };

export type DriftFinding = {
  kind: DriftKind;
  objectName: string;
  ruleId: string | null;
  /** The live deployment it departs from; null for an unmanaged object. */
  deploymentId: string | null;
  detail: string;
};

/**
 * What the target holds against what detflow deployed there. Rules with a change in flight
 * (`settling`) are left out: their object is being rewritten and would look like another version.
 */
export function compareInventory(input: {
  live: readonly LiveOnTarget[];
  inventory: readonly TargetObject[];
  objectNameOf: (ruleId: string) => string;
  settling?: ReadonlySet<string>;
}): DriftFinding[] {
  const settling = input.settling ?? new Set<string>();
  const findings: DriftFinding[] = [];
  const liveRules = new Set(input.live.map((d) => d.ruleId));
  for (const d of input.live) {
    if (settling.has(d.ruleId)) continue;
    const objects = input.inventory.filter((o) => o.ruleId === d.ruleId);
    const about = { ruleId: d.ruleId, deploymentId: d.deploymentId };
    if (objects.length === 0) {
      findings.push({
        ...about,
        kind: 'missing',
        objectName: input.objectNameOf(d.ruleId),
        detail: `v${d.version} is live in detflow but the target has no ${input.objectNameOf(d.ruleId)}: it was deleted there`,
      });
      continue;
    }
    for (const o of objects) {
      if (o.deploymentId !== d.deploymentId) {
        const what = o.deploymentId === null ? 'carries no detflow marker' : `is deployment ${o.deploymentId}${o.version !== null ? ` (v${o.version})` : ''}`;
        findings.push({
          ...about,
          kind: 'other_version',
          objectName: o.name,
          detail: `v${d.version} (deployment ${d.deploymentId}) is live in detflow, but ${o.name} on the target ${what}`,
        });
        continue;
      }
      if (!o.queryUnchanged)
        findings.push({
          ...about,
          kind: 'edited',
          objectName: o.name,
          detail: `the query of ${o.name} was edited on the target; it is not the v${d.version} query detflow deployed`,
        });
      if (!o.enabled) findings.push({ ...about, kind: 'disabled', objectName: o.name, detail: `${o.name} (v${d.version}) is disabled on the target` });
    }
  }
  for (const o of input.inventory) {
    if (o.ruleId !== null && (liveRules.has(o.ruleId) || settling.has(o.ruleId))) continue;
    findings.push({
      kind: 'unmanaged',
      objectName: o.name,
      ruleId: o.ruleId,
      deploymentId: null,
      detail: `${o.name} follows detflow's naming scheme but no live deployment accounts for it${o.deploymentId ? ` (it says deployment ${o.deploymentId})` : ''}`,
    });
  }
  return findings;
}
