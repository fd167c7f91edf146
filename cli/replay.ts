import fs from 'node:fs';
import { newIdempotencyKey, type ApiClient } from './api-client';
import { UsageError } from './io';
import { pushRuleFile, type StoredVersion } from './push';
import { ruleFiles } from './rule-files';
import { pause, WaitTimeout, type Deadline } from './wait';

/** The parts of a replay (GET /replays/{id}) the CLI reports; JSON output carries all of it. */
export type ReplayView = {
  id: string;
  rule_id: string;
  version: number | null;
  target: string;
  window: { from: string; to: string };
  status: 'running' | 'completed' | 'cancelled' | 'failed';
  result: {
    events_scanned: number;
    alerts: { total: number; mean_per_day: number; peak_per_day: number };
    noise: { noise_ratio: number; budget: { max_alerts_per_day: number; days_over_budget: number; within_budget: boolean } | null };
    cost: { currency: string; total: number; per_month: number; per_month_ci95: { low: number; high: number } | null; window_days: number };
    alerts_per_day: { estimate: number; ci95: { low: number; high: number }; method: string } | null;
    low_confidence: boolean | null;
    low_confidence_reasons: string[] | null;
  } | null;
  error: string | null;
  links: { self: string; run?: string };
};

/** What the command line names: rule files (pushed first) and ids of rules already stored. */
export type ReplaySubject = { kind: 'file'; file: string } | { kind: 'id'; ruleId: string };

export type ReplayOutcome = { subject: ReplaySubject; seconds: number } & (
  | { kind: 'ran'; pushed?: StoredVersion; replay: ReplayView }
  /** The registry refused the rule file: nothing was replayed. */
  | { kind: 'rule-rejected'; error: string }
);

/**
 * Expands the arguments: an existing file or folder gives its rule files, anything else that does
 * not look like a file name is a rule id. A missing `x.yml` is a typo, not a rule id.
 */
export function replaySubjects(args: readonly string[]): ReplaySubject[] {
  const out: ReplaySubject[] = [];
  for (const arg of args) {
    if (fs.existsSync(arg)) {
      const files = ruleFiles([arg]);
      if (files.length === 0) throw new UsageError(`No .yml/.yaml rule files in ${arg}`);
      out.push(...files.map((file) => ({ kind: 'file' as const, file })));
    } else if (/\.ya?ml$/i.test(arg) || arg.includes('/')) {
      throw new UsageError(`No such rule file or directory: ${arg}`);
    } else {
      out.push({ kind: 'id', ruleId: arg });
    }
  }
  return out;
}

export type ReplayRequest = { target: string; window: string; budget?: number };

/**
 * Replays one rule and waits for the end: a file is pushed first, so the version replayed is
 * exactly the text on disk. The service refusing the replay itself (no such target or rule, a
 * window beyond the tier, every run slot taken) is thrown: it is not about this rule, and the next
 * would fare no better.
 */
export async function replayOne(client: ApiClient, subject: ReplaySubject, request: ReplayRequest, deadline: Deadline): Promise<ReplayOutcome> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  let rule: { rule_id: string; version?: number };
  let pushed: StoredVersion | undefined;
  if (subject.kind === 'file') {
    const result = await pushRuleFile(client, subject.file);
    if (!result.ok) return { subject, seconds: seconds(), kind: 'rule-rejected', error: result.error };
    pushed = result.stored;
    rule = { rule_id: pushed.rule_id, version: pushed.version };
  } else {
    rule = { rule_id: subject.ruleId };
  }
  const { body: run } = await client.request<{ id: string }>(
    'POST',
    '/rules/replay',
    { ...rule, target: request.target, lookback: request.window, ...(request.budget !== undefined ? { noise_budget: { max_alerts_per_day: request.budget } } : {}) },
    // A resent request (after a dropped connection) then finds this replay instead of starting another.
    { idempotencyKey: newIdempotencyKey() },
  );
  const replay = await waitForReplay(client, run.id, deadline);
  return { subject, seconds: seconds(), kind: 'ran', ...(pushed ? { pushed } : {}), replay };
}

/**
 * Long-polls the replay until it ends (completed, cancelled or failed), or the deadline passes. A
 * replay the job gives up on is cancelled: nobody would read its figures, and it would hold one of
 * the tier's run slots (and scan the target) for nothing.
 */
export async function waitForReplay(client: ApiClient, id: string, deadline: Deadline): Promise<ReplayView> {
  for (;;) {
    const { body: replay } = await client.request<ReplayView>('GET', `/replays/${id}?wait=${deadline.pollSeconds}`);
    if (replay.status !== 'running') return replay;
    if (deadline.passed)
      throw new WaitTimeout(
        `Gave up after ${deadline.seconds} s: replay ${replay.id} of ${replay.rule_id} on ${replay.target} was still running; ${await cancelGivenUp(client, replay)} (${client.linkTo(replay.links.self)})`,
      );
    // The service answers at once when the run cannot be asked (no worker up yet): do not spin.
    await pause(250);
  }
}

/** Cancels a replay given up on; what became of it, for the message (a failed cancel is said, not thrown). */
async function cancelGivenUp(client: ApiClient, replay: ReplayView): Promise<string> {
  try {
    const { status } = await client.request('POST', `/replays/${replay.id}/cancel`, undefined, { idempotencyKey: newIdempotencyKey() });
    return status === 202 ? 'cancelled it' : 'it had ended meanwhile';
  } catch (err) {
    return `cancelling it failed (${(err as Error).message}): cancel it with POST /replays/${replay.id}/cancel`;
  }
}

/** Whether the replay ended with figures, and (with a budget) within it. */
export function replayPassed(o: ReplayOutcome): boolean {
  return o.kind === 'ran' && o.replay.status === 'completed' && o.replay.result?.noise.budget?.within_budget !== false;
}
