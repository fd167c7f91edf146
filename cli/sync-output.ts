import { findingLine } from './lint-report';
import type { FolderProblem } from './sync-folder';
import { ACTIONS, countsOf, hasChanges, isInvalid, type DeploymentRef, type Plan, type PlanItem } from './sync-plan';

/** Under an item's line, aligned with the text after the 10-column verb. */
const INDENT = ' '.repeat(10);
const verb = (word: string) => word.padEnd(9) + ' ';

const versionLabel = (i: PlanItem) => (i.version === null ? 'a new version' : `v${i.version}`);
const liveLabel = (d: DeploymentRef) => `v${d.version}${d.status === 'active' ? '' : ` (${d.status})`}`;
const refLabel = (d: DeploymentRef) => `deployment ${d.id} of v${d.version} is ${d.status}${d.approval_id ? ` (approval ${d.approval_id})` : ''}`;

function itemHead(i: PlanItem): string {
  switch (i.action) {
    case 'create':
      return `${verb('create')}${i.ruleId} ${versionLabel(i)} from ${i.file}: ${i.title}`;
    case 'update':
      return `${verb('update')}${i.ruleId} ${liveLabel(i.deployed!)} → ${versionLabel(i)} from ${i.file}: ${i.title}`;
    case 'restore':
      return `${verb('restore')}${i.ruleId} ${liveLabel(i.deployed!)} from ${i.file}: the target drifted from it; apply puts it back as deployed`;
    case 'delete':
      return `${verb('delete')}${i.ruleId} ${liveLabel(i.deployed!)}: ${i.title}`;
    case 'unchanged':
      return `${verb('unchanged')}${i.ruleId} ${liveLabel(i.deployed!)} from ${i.file}`;
  }
}

function itemText(i: PlanItem): string[] {
  const notes = [
    ...(i.joining ? [`${INDENT}already on its way: ${refLabel(i.joining)}; apply follows it`] : []),
    // Approved later, an older request would replace what this sync deploys: the reviewer should know.
    ...i.otherInFlight.map((d) => `${INDENT}note: ${refLabel(d)}; once it completes, it replaces this`),
    ...i.lintErrors.map((f) => `${INDENT}${findingLine(i.file!, f)}`),
    ...i.drift.map((d) => `${INDENT}drift: ${d.kind}: ${d.detail}`),
  ];
  // A repository of hundreds of rules would bury its changes under the unchanged ones; JSON lists them all.
  // A demoted one stays in view: deployed as the folder says, but raising no alert.
  if (i.action === 'unchanged' && notes.length === 0 && i.deployed!.status === 'active') return [];
  const diff = i.diff
    ? i.diff
        .trimEnd()
        .split('\n')
        .map((l) => `    ${l}`)
    : [];
  return [itemHead(i), ...notes, ...diff];
}

export function planSummary(plan: Plan): string {
  const c = countsOf(plan);
  // Restores show only when there is drift to undo: the usual line stays as CI logs know it.
  return `Plan: ${c.create} to create, ${c.update} to update, ${c.restore ? `${c.restore} to restore, ` : ''}${c.delete} to delete, ${c.unchanged} unchanged`;
}

export function problemsText(problems: readonly FolderProblem[]): string {
  return problems.map((p) => `${p.file}: error ${p.error}\n`).join('');
}

/** The plan for a person: each change with its diff, then the summary line and what it means. */
export function planText(plan: Plan, applying: boolean): string {
  const lines = [...plan.items.flatMap(itemText), ...plan.unmanaged.map((d) => `${verb('unmanaged')}${d.object}: ${d.detail} (left as it is)`)];
  const withLint = plan.items.filter((i) => i.lintErrors.length > 0).length;
  const why = [...(plan.problems.length ? [`${plan.problems.length} file(s) refused`] : []), ...(withLint ? [`${withLint} rule(s) with lint errors for ${plan.target}`] : [])];
  const tail = isInvalid(plan)
    ? `The folder cannot be applied: ${why.join(', ')}.`
    : hasChanges(plan)
      ? applying
        ? `Applying to ${plan.target}:`
        : `Run again with --apply to make ${plan.target} match ${plan.dir}.`
      : `${plan.target} matches ${plan.dir}: nothing to do.`;
  return problemsText(plan.problems) + (lines.length ? lines.join('\n') + '\n' : '') + `${planSummary(plan)}\n${tail}\n`;
}

/** The plan for a machine: every rule, unchanged ones included, in snake_case like the API. */
export function planJson(plan: Plan) {
  return {
    target: plan.target,
    directory: plan.dir,
    changes: hasChanges(plan),
    valid: !isInvalid(plan),
    summary: Object.fromEntries(ACTIONS.map((a) => [a, countsOf(plan)[a]])),
    problems: plan.problems,
    rules: plan.items.map((i) => ({
      action: i.action,
      rule_id: i.ruleId,
      title: i.title,
      file: i.file,
      deployed: i.deployed,
      version: i.version,
      new_version: i.action !== 'delete' && i.version === null,
      diff: i.diff,
      joining: i.joining,
      other_in_flight: i.otherInFlight,
      lint_errors: i.lintErrors,
      drift: i.drift,
    })),
    unmanaged: plan.unmanaged,
  };
}
