import { techniquesOfTags } from './attack-tags';
import type { DeploymentSpan } from './deployment-history';

/**
 * Coverage deltas: the ATT&CK techniques (from `attack.tNNNN[.NNN]` tags) of the rules alerting
 * on the actor's targets at the window's start and at its end, and what changed, with the
 * deployments responsible. A demoted deployment alerts on nothing, so it covers nothing while
 * demoted (known from its last demotion: an earlier demotion and promotion are not recorded).
 */

const demotedAt = (d: DeploymentSpan, t: number): boolean => {
  if (!d.demotion) return false;
  const demoted = new Date(d.demotion.demoted_at).getTime();
  const promoted = d.demotion.promoted_at ? new Date(d.demotion.promoted_at).getTime() : Infinity;
  return demoted <= t && t < promoted;
};

/** Whether the deployment was alerting at instant `t`. */
export const alertingAt = (d: DeploymentSpan, t: Date): boolean =>
  d.activatedAt.getTime() <= t.getTime() && (d.endedAt === null || d.endedAt.getTime() > t.getTime()) && !demotedAt(d, t.getTime());

/** Technique → the deployments covering it at `t`. */
export function coverageAt(history: readonly DeploymentSpan[], t: Date): Map<string, DeploymentSpan[]> {
  const covered = new Map<string, DeploymentSpan[]>();
  for (const d of history) {
    if (!alertingAt(d, t)) continue;
    for (const technique of techniquesOfTags(d.tags)) {
      const by = covered.get(technique);
      if (by) by.push(d);
      else covered.set(technique, [d]);
    }
  }
  return covered;
}

export type TechniqueDelta = { technique: string; deployments: DeploymentSpan[] };
export type CoverageDeltas = { atStart: number; atEnd: number; gained: TechniqueDelta[]; lost: TechniqueDelta[] };

/** Gained: covered at the end and not at the start (with the deployments covering it now); lost: the reverse (with those that covered it). */
export function coverageDeltas(history: readonly DeploymentSpan[], from: Date, to: Date): CoverageDeltas {
  const start = coverageAt(history, from);
  const end = coverageAt(history, to);
  const only = (a: Map<string, DeploymentSpan[]>, b: Map<string, DeploymentSpan[]>) =>
    [...a.entries()]
      .filter(([t]) => !b.has(t))
      .sort(([x], [y]) => x.localeCompare(y))
      .map(([technique, deployments]) => ({ technique, deployments }));
  return { atStart: start.size, atEnd: end.size, gained: only(end, start), lost: only(start, end) };
}
