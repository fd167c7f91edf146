import crypto from 'node:crypto';
import type { NoiseBudgetPolicy } from '../statuses';

/**
 * A noise budget as compared: absent and null are the same (no budget), and an absent `on_exceed`
 * is `suppress`, the policy detection applies when none is named.
 */
export function canonicalBudget(budget: NoiseBudgetPolicy | null | undefined): string {
  if (!budget) return 'none';
  return `${budget.max_alerts_per_day}/${budget.on_exceed ?? 'suppress'}`;
}

/**
 * What makes two changes equal: the same tenant's rule (ids compare case-insensitively), the same
 * resolved version, the same set of targets (by id: order and repeats do not count) and the same
 * noise budget (see `canonicalBudget`). Description, link, expiry and who asked do not count: a
 * re-run CI job asks for the same change with a new link or token. The key is stored on the
 * approval, where a partial unique index allows one pending approval per key.
 */
export function changeKey(change: { ruleId: string; version: number; targetIds: readonly string[]; noiseBudget: NoiseBudgetPolicy | null }): string {
  const targets = [...new Set(change.targetIds)].sort().join(',');
  const text = `${change.ruleId.toLowerCase()}@${change.version}|${targets}|${canonicalBudget(change.noiseBudget)}`;
  return crypto.createHash('sha256').update(text).digest('hex');
}
