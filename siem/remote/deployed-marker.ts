import { createHash } from 'node:crypto';
import type { TargetKind } from '../adapter';
import { SiemRequestError } from './errors';

/**
 * How detflow recognises what it deployed on a remote SIEM. Each rule has one object there, named
 * from the rule id (so a redeploy updates it rather than adding another), whose description ends
 * with a marker line carrying the deployment id, the version and a hash of the query detflow wrote.
 * Listing the SIEM's objects under the naming scheme and reading the markers back gives what is
 * deployed; a query whose hash differs from its marker was edited in the SIEM (drift).
 */
export const NAME_PREFIX = 'detflow-';

export interface DeployedMarker {
  readonly deploymentId: string;
  readonly tenantId: string;
  readonly targetId: string;
  readonly version: number;
  /** sha256 of the query text as deployed, hex, first 16 characters. */
  readonly queryHash: string;
}

/** The SIEM object's name for a rule: stable per rule id, safe in URLs and every vendor's naming rules. */
export function objectName(ruleId: string): string {
  return `${NAME_PREFIX}${ruleId.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`;
}

export function queryHash(query: string): string {
  return createHash('sha256').update(query, 'utf8').digest('hex').slice(0, 16);
}

// Tenant ids are slugs (`default`, `acme-soc`); deployment and target ids are UUIDs.
const MARKER = /\[detflow deployment=([0-9a-f-]{36}) tenant=([A-Za-z0-9_.-]{1,128}) target=([0-9a-f-]{36}) version=(\d+) query=([0-9a-f]{16})\]\s*$/;

export function formatMarker(m: DeployedMarker): string {
  return `[detflow deployment=${m.deploymentId} tenant=${m.tenantId} target=${m.targetId} version=${m.version} query=${m.queryHash}]`;
}

/** A description for the SIEM object: the rule's title, then the marker on its own line. */
export function describeDeployment(title: string | undefined, marker: DeployedMarker): string {
  return `${title ? `${title}\n\n` : ''}Managed by detflow; edits made here are reported as drift.\n${formatMarker(marker)}`;
}

export function readMarker(description: string | undefined | null): DeployedMarker | null {
  const m = MARKER.exec(description ?? '');
  if (!m) return null;
  return { deploymentId: m[1]!, tenantId: m[2]!, targetId: m[3]!, version: Number(m[4]), queryHash: m[5]! };
}

/**
 * Refuses to write over an object another detflow target deployed: two targets pointed at the same
 * SIEM namespace (app, space, workspace) would otherwise replace each other's rules back and forth.
 */
export function refuseForeignObject(kind: TargetKind, name: string, marker: DeployedMarker | null, request: { tenantId: string; targetId: string }): void {
  if (!marker || (marker.tenantId === request.tenantId && marker.targetId === request.targetId)) return;
  throw new SiemRequestError(
    kind,
    'rejected',
    `${kind}: ${name} on the SIEM is deployment ${marker.deploymentId} of another detflow target (${marker.targetId}); two targets on one ${kind} namespace would overwrite each other's rules — give each target its own app, space or workspace`,
  );
}

/** Whether an object belongs to this target in an inventory: its marker names it, or it carries none (then it is this target's to report). */
export function ownedOrUnmarked(marker: DeployedMarker | null, tenantId: string, targetId: string): boolean {
  return !marker || (marker.tenantId === tenantId && marker.targetId === targetId);
}
