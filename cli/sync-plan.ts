import { createTwoFilesPatch } from 'diff';
import type { LintFinding } from '../sigma';
import type { ApiClient } from './api-client';
import { mapConcurrent } from './concurrency';
import { lintThroughApi } from './lint';
import type { FolderProblem, FolderRule } from './sync-folder';
import { CONCURRENT_REQUESTS, readRegistry, readTargetState, readUnmanaged, readVersion, type TargetState } from './sync-state';
import type { DeploymentView, DriftItem } from './wait';

/** `restore`: the folder and the registry agree, but the target drifted from the live version (edited, disabled or deleted in the SIEM). */
export type PlanAction = 'create' | 'update' | 'restore' | 'delete' | 'unchanged';

/** A deployment the plan refers to, in the words the API uses. */
export type DeploymentRef = { id: string; version: number; status: string; approval_id: string | null };

export type PlanItem = {
  action: PlanAction;
  ruleId: string;
  title: string;
  /** The folder's file; null for a delete. */
  file: string | null;
  /** The file's text, pushed on apply when the registry does not hold it yet. */
  text: string | null;
  /** What the target runs now; null for a create. */
  deployed: DeploymentRef | null;
  /** The registry version whose text equals the file; null when apply must store a new one (or for a delete). */
  version: number | null;
  /** Unified diff, deployed version → file, for an update. */
  diff: string | null;
  /** A deployment of exactly the wanted version already on its way: apply follows it instead of starting another. */
  joining: DeploymentRef | null;
  /** Deployments of other versions on their way: if approved later, they replace what this sync deploys. */
  otherInFlight: DeploymentRef[];
  /** Lint errors for the target, which stop an apply. */
  lintErrors: LintFinding[];
  /** How the target departs from the live deployment (a `restore` puts it back). */
  drift: DriftItem[];
};

/** `unmanaged`: objects on the target under detflow's naming scheme that no live deployment accounts for (reported, never touched). */
export type Plan = { target: string; dir: string; items: PlanItem[]; problems: FolderProblem[]; unmanaged: DriftItem[] };

export const ACTIONS: readonly PlanAction[] = ['create', 'update', 'restore', 'delete', 'unchanged'];

export const countsOf = (plan: Plan): Record<PlanAction, number> =>
  Object.fromEntries(ACTIONS.map((a) => [a, plan.items.filter((i) => i.action === a).length])) as Record<PlanAction, number>;

export const hasChanges = (plan: Plan) => plan.items.some((i) => i.action !== 'unchanged');
/** Anything that makes the folder unfit to apply: unreadable files, duplicate ids, lint errors for the target. */
export const isInvalid = (plan: Plan) => plan.problems.length > 0 || plan.items.some((i) => i.lintErrors.length > 0);

const approvalIdOf = (d: DeploymentView) => d.links.approval?.split('/').at(-1) ?? null;
const refOf = (d: DeploymentView): DeploymentRef => ({ id: d.id, version: d.version, status: d.status, approval_id: approvalIdOf(d) });

/** The diff a reviewer of the plan reads: what the target runs, then the file that will replace it. */
function unifiedDiff(ruleId: string, target: string, deployed: { version: number; content: string }, rule: FolderRule): string {
  const patch = createTwoFilesPatch(`${ruleId}@v${deployed.version} (deployed on ${target})`, rule.file, deployed.content, rule.text, undefined, undefined, { context: 3 });
  // The library opens with a row of '=' meant for multi-file patches; one rule needs only ---/+++.
  return patch.replace(/^=+\n/, '');
}

function planRule(rule: FolderRule, state: TargetState, versionBySha: Map<string, number>): PlanItem {
  const live = state.deployed.get(rule.ruleId);
  const version = versionBySha.get(rule.sha256) ?? null;
  const inFlight = state.inFlight.get(rule.ruleId) ?? [];
  const joining = version === null ? undefined : inFlight.find((d) => d.version === version);
  const drift = live?.drift ?? [];
  const action: PlanAction = !live ? 'create' : live.version !== version ? 'update' : drift.length > 0 ? 'restore' : 'unchanged';
  return {
    action,
    ruleId: rule.ruleId,
    title: rule.title,
    file: rule.file,
    text: rule.text,
    deployed: live ? refOf(live) : null,
    version,
    diff: null,
    joining: action !== 'unchanged' && joining ? refOf(joining) : null,
    otherInFlight: inFlight.filter((d) => d !== joining).map(refOf),
    lintErrors: [],
    drift,
  };
}

/**
 * Compares a folder (read without problems, see readFolder) with the target: each rule by its id
 * against the version deployed there, by content (the registry's hash of the text), so a file
 * equal to any stored version is not stored again. The rules to create or update are linted for
 * the target — which is also how an unknown target is found out (404) before anything is planned
 * against it: the deployment list of a name that is no target is merely empty.
 */
export async function buildPlan(client: ApiClient, dir: string, target: string, rules: FolderRule[]): Promise<Plan> {
  const [state, unmanaged, registry] = await Promise.all([
    readTargetState(client, target),
    readUnmanaged(client, target),
    readRegistry(
      client,
      rules.map((r) => r.ruleId),
    ),
  ]);
  const items = rules.map((r) => planRule(r, state, registry.get(r.ruleId)!.versionBySha));
  const inFolder = new Set(rules.map((r) => r.ruleId));
  for (const [ruleId, live] of state.deployed) {
    if (inFolder.has(ruleId)) continue;
    items.push({
      action: 'delete',
      ruleId,
      title: '',
      file: null,
      text: null,
      deployed: refOf(live),
      version: null,
      diff: null,
      joining: null,
      otherInFlight: (state.inFlight.get(ruleId) ?? []).map(refOf),
      lintErrors: [],
      drift: live.drift ?? [],
    });
  }

  const byFile = new Map(rules.map((r) => [r.file, r]));
  await mapConcurrent(
    items.filter((i) => i.action === 'update' || i.action === 'delete'),
    CONCURRENT_REQUESTS,
    async (item) => {
      const stored = await readVersion(client, item.ruleId, item.deployed!.version);
      if (item.action === 'delete') item.title = stored.title;
      else item.diff = unifiedDiff(item.ruleId, target, stored, byFile.get(item.file!)!);
    },
  );

  const changing = items.filter((i) => i.action === 'create' || i.action === 'update');
  const lints = await lintThroughApi(
    client,
    changing.map((i) => i.file!),
    target,
  );
  const problems: FolderProblem[] = [];
  lints.forEach((lint, n) => {
    if (!lint.ok) problems.push({ file: lint.file, error: lint.error });
    else changing[n]!.lintErrors = lint.report.findings.filter((f) => f.severity === 'error');
  });

  const order = (i: PlanItem) => ACTIONS.indexOf(i.action);
  items.sort((a, b) => order(a) - order(b) || a.ruleId.localeCompare(b.ruleId));
  return { target, dir, items, problems, unmanaged };
}
