import type { ApiClient } from './api-client';
import { EXIT, type Io } from './io';
import { appliedSummary, applyPlan, type Applied } from './sync-apply';
import { readFolder } from './sync-folder';
import { planJson, planText, problemsText } from './sync-output';
import { buildPlan, hasChanges, isInvalid } from './sync-plan';

export type SyncOptions = {
  target: string;
  apply?: boolean;
  /** false with --no-approval; a reviewer decides otherwise. */
  approval?: boolean;
  budget?: number;
  allowDelete?: boolean;
  reason?: string;
  wait?: boolean;
  timeout: number;
  format: 'text' | 'json';
};

/**
 * Exit code of a plan with changes to make, and of an apply that left some undone by choice
 * (deletes without --allow-delete): the target differs from the folder. Not terraform's 2, which
 * every detflow command already uses for "could not run" (usage, connection, token): a CI job must
 * tell "there is drift" from "the token expired".
 */
export const EXIT_CHANGES = 3;

/**
 * `detflow sync <dir> --target t [--apply]`: the folder is the source of truth for the target.
 * Plans (exit 0 in sync, 3 changes, 1 folder unusable); with --apply carries the plan out
 * (exit 0 all applied, 1 something refused or, with --wait, not live, 2 --wait gave up first,
 * 3 deletes skipped).
 */
export async function syncCommand(io: Io, client: ApiClient, dir: string, options: SyncOptions): Promise<number> {
  const json = options.format === 'json';
  // With --format json, stdout carries one JSON document; what happens meanwhile goes to stderr.
  const progress = json ? io.err : io.out;
  const folder = readFolder(dir);
  if (folder.problems.length > 0) {
    // Nothing is asked of the service: a folder whose ids are unknown or ambiguous says nothing reliable about deletes.
    if (json) io.out(JSON.stringify({ target: options.target, directory: dir, valid: false, problems: folder.problems }, null, 2) + '\n');
    else io.out(problemsText(folder.problems) + `${folder.problems.length} file(s) cannot be synced: nothing was planned or applied.\n`);
    return EXIT.failed;
  }

  const plan = await buildPlan(client, dir, options.target, folder.rules);
  const document = planJson(plan);
  if (!json) io.out(planText(plan, options.apply === true));
  if (isInvalid(plan)) {
    if (json) io.out(JSON.stringify(document, null, 2) + '\n');
    else if (options.apply) io.out('Nothing was applied.\n');
    return EXIT.failed;
  }
  if (!options.apply || !hasChanges(plan)) {
    if (json) io.out(JSON.stringify(document, null, 2) + '\n');
    return hasChanges(plan) ? EXIT_CHANGES : EXIT.ok;
  }

  const results = await applyPlan(
    client,
    plan,
    {
      approval: options.approval !== false,
      budget: options.budget,
      allowDelete: options.allowDelete === true,
      reason: options.reason ?? `not in ${dir} (detflow sync)`,
      waitSeconds: options.wait ? options.timeout : undefined,
    },
    progress,
    io.err,
  );
  const summary = appliedSummary(plan.target, results, options.wait === true);
  if (json) io.out(JSON.stringify({ ...document, applied: results, applied_summary: summary }, null, 2) + '\n');
  else io.out(`${summary}\n`);
  return applyExit(results);
}

function applyExit(results: readonly Applied[]): number {
  if (results.some((r) => r.outcome === 'failed')) return EXIT.failed;
  // The wait gave up: the outcome is unknown, as for every other command's --wait timeout.
  if (results.some((r) => r.outcome === 'pending')) return EXIT.unusable;
  return results.some((r) => r.outcome === 'skipped') ? EXIT_CHANGES : EXIT.ok;
}
