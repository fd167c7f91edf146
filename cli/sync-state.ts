import { ApiError, type ApiClient } from './api-client';
import { mapConcurrent } from './concurrency';
import type { DeploymentView, DriftItem } from './wait';

/**
 * The states in which a rule is on its target, as the API documents them: `active` alerts, `demoted`
 * runs in shadow until promoted. Either way the rule is deployed, so a sync neither creates it
 * again nor leaves it when the folder lacks it.
 */
export const DEPLOYED_STATUSES: ReadonlySet<string> = new Set(['active', 'demoted']);
/** A deployment on its way, which a sync must join rather than start a second time. */
const IN_FLIGHT_STATUSES = ['pending_approval', 'deploying'] as const;

/** Enough requests in flight to hide the round trip, few enough not to crowd a shared service. */
export const CONCURRENT_REQUESTS = 8;
/** The most a list endpoint answers per page. */
const PAGE = 500;

type Page<T> = { items: T[]; next_cursor: string | null };

async function allPages<T>(client: ApiClient, path: string): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page: Page<T> = (await client.request<Page<T>>('GET', `${path}${sep}limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
    out.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

/** What the target holds: per rule id, the deployment live on it and any deployment on its way. */
export type TargetState = { deployed: Map<string, DeploymentView>; inFlight: Map<string, DeploymentView[]> };

export async function readTargetState(client: ApiClient, target: string): Promise<TargetState> {
  const statuses = [...DEPLOYED_STATUSES, ...IN_FLIGHT_STATUSES];
  const lists = await Promise.all(statuses.map((s) => allPages<DeploymentView>(client, `/deployments?target=${encodeURIComponent(target)}&status=${s}`)));
  const deployed = new Map<string, DeploymentView>();
  const inFlight = new Map<string, DeploymentView[]>();
  // Lists come newest first: should a rule have two live deployments for a moment, the newest is what the target runs.
  for (const d of lists.flat()) {
    if (DEPLOYED_STATUSES.has(d.status)) {
      if (!deployed.has(d.rule_id)) deployed.set(d.rule_id, d);
    } else {
      inFlight.set(d.rule_id, [...(inFlight.get(d.rule_id) ?? []), d]);
    }
  }
  return { deployed, inFlight };
}

/** Objects on the target under detflow's naming scheme that no live deployment accounts for, as the last drift check found them. */
export async function readUnmanaged(client: ApiClient, target: string): Promise<DriftItem[]> {
  const report = (await client.request<{ items: DriftItem[] }>('GET', `/settings/targets/${encodeURIComponent(target)}/drift`)).body;
  return report.items.filter((d) => d.kind === 'unmanaged');
}

type VersionInfo = { version: number; content_sha256: string; title: string };

/** What the registry holds of one rule: its versions by content hash (none when the rule is new). */
export type RegistryRule = { versionBySha: Map<string, number> };

export async function readRegistry(client: ApiClient, ruleIds: readonly string[]): Promise<Map<string, RegistryRule>> {
  const entries = await mapConcurrent(ruleIds, CONCURRENT_REQUESTS, async (ruleId): Promise<[string, RegistryRule]> => {
    try {
      const versions = await allPages<VersionInfo>(client, `/rules/${encodeURIComponent(ruleId)}/versions`);
      return [ruleId, { versionBySha: new Map(versions.map((v) => [v.content_sha256, v.version])) }];
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return [ruleId, { versionBySha: new Map() }];
      throw err;
    }
  });
  return new Map(entries);
}

/** One stored version with its text, for a diff or a title. */
export type StoredText = { version: number; title: string; content: string };

export async function readVersion(client: ApiClient, ruleId: string, version: number): Promise<StoredText> {
  return (await client.request<StoredText>('GET', `/rules/${encodeURIComponent(ruleId)}/versions/${version}`)).body;
}
