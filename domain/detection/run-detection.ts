import { ApplicationFailure } from '@temporalio/common';
import { and, eq, gte, inArray, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { alerts, deployments, detectionRuns, ruleVersions, targets, type Deployment } from '../../db/schema';
import { storableJson } from '../../lib/storable-text';
import { cursorAfterRun, detectionModeOf, type DetectionMode } from './detection-run';
import { alertsAllowedToOpen, budgetVerdict, budgetWindowStart, type DemotionRecord } from './noise-budget-policy';
import type { CursorEvent, LiveEvaluationResult } from '../../siem/adapter';
import type { SiemAdapters } from '../../siem/adapters';
import { compileRuleForTarget, targetAdapter } from '../rules/rule-compilation';
import { FailureType } from '../../workflows/contracts';
import { FINAL_DEPLOYMENT_STATUSES, type NoiseBudgetPolicy } from '../statuses';
import { noMetrics, type DomainMetrics } from '../metrics';

export { budgetWindowStart } from './noise-budget-policy';

/** Matched events handled per run; more wait for the next run (the cursor stops at the last one). */
export const MAX_EVENTS_PER_RUN = 5_000;

export type DetectionOutcome = {
  skipped: string | null;
  scanned: number;
  matches: number;
  raised: number;
  suppressed: number;
  /** True on the run that first went over the noise budget of the current UTC day. */
  budgetExceededNow: boolean;
  budget: number | null;
  /** The deployment's policy for going over its budget (absent in runs recorded before policies existed). */
  onExceed?: NonNullable<NoiseBudgetPolicy['on_exceed']>;
  /** `shadow` while the deployment is demoted: matches are counted and no alert is raised. */
  mode?: 'alert' | 'shadow';
  /** True on the run that demoted the deployment (`on_exceed: demote`). */
  demoted?: boolean;
  alertsToday: number;
  tenantId: string;
  ruleId: string;
  version: number;
  target: string;
};

/** What a run evaluates: the deployment, its rule version's text and its target. */
type DeploymentToEvaluate = { d: Deployment; content: string; targetKind: string; targetName: string; environment: string; resolvedPlaceholders: Record<string, string[]> };

/** One run of one live deployment, as it began. */
type DetectionRun = {
  deploymentId: string;
  d: Deployment;
  mode: DetectionMode;
  /** Where the evaluation starts: events committed after it are this run's. */
  cursor: number;
  startedAt: Date;
  /** performance.now() at the start, for the run's duration. */
  t0: number;
  activityKey: string | null;
};

/** Read: the deployment to evaluate; a deployment that does not exist is permanent (DeploymentNotFound). */
async function readDeployment(db: Db, deploymentId: string): Promise<DeploymentToEvaluate> {
  const [row] = await db
    .select({
      d: deployments,
      content: ruleVersions.content,
      targetKind: targets.kind,
      targetName: targets.name,
      environment: targets.environment,
      resolvedPlaceholders: targets.resolvedPlaceholders,
    })
    .from(deployments)
    .innerJoin(targets, eq(targets.id, deployments.targetId))
    .innerJoin(ruleVersions, and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)))
    .where(eq(deployments.id, deploymentId));
  if (!row) throw ApplicationFailure.nonRetryable(`No deployment ${deploymentId}`, FailureType.DeploymentNotFound);
  return row;
}

/** The outcome an earlier attempt of this very activity committed, if one did. */
async function recordedOutcome(q: Pick<Db, 'select'>, key: string | null): Promise<DetectionOutcome | undefined> {
  if (key === null) return undefined;
  const [row] = await q.select({ outcome: detectionRuns.outcome }).from(detectionRuns).where(eq(detectionRuns.activityKey, key));
  return row?.outcome as DetectionOutcome | undefined;
}

/** Read: the open alerts of the budget window, and the alerts earlier runs of it suppressed. */
async function readBudgetUsage(tx: Pick<Db, 'select'>, deploymentId: string, windowStart: Date): Promise<{ openAlerts: number; suppressedEarlier: number }> {
  const [{ n }] = (await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(alerts)
    .where(and(eq(alerts.deploymentId, deploymentId), gte(alerts.createdAt, windowStart), ne(alerts.status, 'suppressed')))) as [{ n: number }];
  const [{ earlier }] = (await tx
    .select({ earlier: sql<number>`coalesce(sum(${detectionRuns.alertsSuppressed}), 0)::int` })
    .from(detectionRuns)
    .where(and(eq(detectionRuns.deploymentId, deploymentId), gte(detectionRuns.startedAt, windowStart)))) as [{ earlier: number }];
  return { openAlerts: n, suppressedEarlier: earlier };
}

/** Alerts written per statement (PostgreSQL takes at most 65,535 parameters in one). */
const ALERTS_PER_STATEMENT = 1_000;

/**
 * Record: one alert per matched event, the first `allowedOpen` new ones open and the rest
 * suppressed, in a statement per thousand. Keyed by (deployment, event), so an event already
 * alerted is skipped and counts for neither.
 */
async function storeAlerts(
  tx: Pick<Db, 'insert' | 'select'>,
  run: DetectionRun,
  events: readonly CursorEvent[],
  allowedOpen: number,
): Promise<{ raised: number; suppressed: number }> {
  const { d } = run;
  if (events.length === 0) return { raised: 0, suppressed: 0 };
  // The run holds the deployment's row lock, so what is alerted already cannot change under it.
  const alerted = new Set<number>();
  for (let i = 0; i < events.length; i += ALERTS_PER_STATEMENT) {
    const seqs = events.slice(i, i + ALERTS_PER_STATEMENT).map((ev) => ev.seq);
    const rows = await tx
      .select({ seq: alerts.eventSeq })
      .from(alerts)
      .where(and(eq(alerts.deploymentId, run.deploymentId), inArray(alerts.eventSeq, seqs)));
    for (const r of rows) alerted.add(Number(r.seq));
  }
  const fresh = events.filter((ev) => !alerted.has(ev.seq));
  let raised = 0;
  let suppressed = 0;
  for (let i = 0; i < fresh.length; i += ALERTS_PER_STATEMENT) {
    const values = fresh.slice(i, i + ALERTS_PER_STATEMENT).map((ev, k) => ({
      tenantId: d.tenantId,
      deploymentId: run.deploymentId,
      ruleId: d.ruleId,
      version: d.version,
      targetId: d.targetId,
      eventSeq: ev.seq,
      eventId: ev.eventId,
      eventTime: ev.time,
      // Events stored before ingestion refused U+0000 and unpaired surrogates: made storable
      // rather than failing (and so stopping) this deployment's detection for good.
      event: storableJson(ev.event),
      status: i + k < allowedOpen ? ('open' as const) : ('suppressed' as const),
      createdAt: run.startedAt,
    }));
    const inserted = await tx.insert(alerts).values(values).onConflictDoNothing().returning({ status: alerts.status });
    for (const r of inserted) {
      if (r.status === 'open') raised++;
      else suppressed++;
    }
  }
  return { raised, suppressed };
}

/** Record: the deployment's cursor moves past the run, and a demotion, when the policy decided one, is applied with it. */
async function advanceDeployment(tx: Pick<Db, 'update'>, deploymentId: string, cursor: number, demotion: DemotionRecord | null): Promise<void> {
  await tx
    .update(deployments)
    .set({ detectionCursor: cursor, ...(demotion ? { status: 'demoted' as const, demotion, updatedAt: sql`now()` } : {}) })
    .where(eq(deployments.id, deploymentId));
}

/** Record: the run and its outcome (the outcome is what a retried attempt answers). */
async function recordRun(tx: Pick<Db, 'insert'>, run: DetectionRun, found: LiveEvaluationResult, cursorTo: number, outcome: DetectionOutcome): Promise<DetectionOutcome> {
  await tx.insert(detectionRuns).values({
    tenantId: run.d.tenantId,
    deploymentId: run.deploymentId,
    ruleId: run.d.ruleId,
    startedAt: run.startedAt,
    durationMs: Math.round(performance.now() - run.t0),
    eventsScanned: found.scanned,
    matches: found.matched,
    alertsRaised: outcome.raised,
    alertsSuppressed: outcome.suppressed,
    mode: run.mode,
    cursorFrom: run.cursor,
    cursorTo,
    error: null,
    activityKey: run.activityKey,
    outcome,
  });
  return outcome;
}

/** Record: a run whose query failed; the cursor stays where it was. */
async function recordFailedRun(db: Db, run: DetectionRun, error: string): Promise<void> {
  await db.insert(detectionRuns).values({
    tenantId: run.d.tenantId,
    deploymentId: run.deploymentId,
    ruleId: run.d.ruleId,
    startedAt: run.startedAt,
    durationMs: Math.round(performance.now() - run.t0),
    eventsScanned: 0,
    matches: 0,
    alertsRaised: 0,
    alertsSuppressed: 0,
    mode: run.mode,
    cursorFrom: run.cursor,
    cursorTo: run.cursor,
    error,
  });
}

/** What a detection run needs: the records, the target's adapter, the clock, and a way to remove a schedule. */
export type DetectionDeps = {
  db: Db;
  siem: SiemAdapters;
  now: () => Date;
  /**
   * Removes the deployment's own detection schedule: a schedule whose deployment has ended (one
   * that leaked when its removal was lost to a retry or a race) removes itself at its next run
   * instead of running for ever.
   */
  removeSchedule: (tenantId: string, deploymentId: string) => Promise<void>;
  /** Counts runs by outcome and the alerts they stored (domain/metrics.ts). */
  metrics?: DomainMetrics;
};

/**
 * One scheduled-detection run of one deployment on a local target: evaluates the events sent to
 * that target and committed since the deployment's cursor and stores an alert per match, in one transaction with
 * the new cursor and the run record. Alerts are keyed by (deployment, event), so a run repeated
 * after a crash raises nothing twice. Alerts beyond the day's noise budget are stored as
 * `suppressed` and counted.
 *
 * Steps: read the deployment; evaluate its rule through the target's adapter; in one
 * transaction, apply the noise-budget policy (domain/detection) and record alerts, cursor and run.
 */
export async function runDetection(
  deps: DetectionDeps,
  { deploymentId, activityKey: key, evaluated }: { deploymentId: string; activityKey: string | null; evaluated?: PriorEvaluation },
): Promise<DetectionOutcome> {
  const metrics = deps.metrics ?? noMetrics;
  const earlier = await recordedOutcome(deps.db, key);
  if (earlier) return earlier;
  const outcome = await evaluateAndRecord(deps, deploymentId, key, evaluated);
  // Counted once the run's records are committed; an outcome an earlier attempt committed was counted by it.
  if (!outcome.fresh) return outcome.outcome;
  const o = outcome.outcome;
  metrics.detectionRun(o.skipped !== null ? 'skipped' : o.mode === 'shadow' ? 'shadow' : 'completed');
  if (o.raised > 0 || o.suppressed > 0) metrics.alerts(o.raised, o.suppressed);
  return o;
}

/**
 * The deployment's evaluation already made by a shared scan of a detection pass (from `cursor`): used
 * when the run starts from that very cursor, else the run evaluates the rule itself.
 */
export type PriorEvaluation = { cursor: number; result: LiveEvaluationResult };

/** A run that evaluates and records (`fresh`), or the outcome another attempt of the same activity committed. */
async function evaluateAndRecord(
  deps: DetectionDeps,
  deploymentId: string,
  key: string | null,
  evaluated?: PriorEvaluation,
): Promise<{ outcome: DetectionOutcome; fresh: boolean }> {
  const { db, siem, now, removeSchedule } = deps;
  const metrics = deps.metrics ?? noMetrics;
  const startedAt = now();
  const t0 = performance.now();

  const { d, content, targetKind, targetName, environment, resolvedPlaceholders } = await readDeployment(db, deploymentId);
  const budget = d.noiseBudget?.max_alerts_per_day ?? null;
  const onExceed = d.noiseBudget?.on_exceed ?? 'suppress';
  const base = { tenantId: d.tenantId, ruleId: d.ruleId, version: d.version, target: targetName, budget, onExceed };
  const idle = (skipped: string): DetectionOutcome => ({ ...base, skipped, scanned: 0, matches: 0, raised: 0, suppressed: 0, budgetExceededNow: false, alertsToday: 0 });
  const mode = detectionModeOf(d.status);
  if (!mode) {
    if ((FINAL_DEPLOYMENT_STATUSES as readonly string[]).includes(d.status)) await removeSchedule(d.tenantId, deploymentId);
    return { outcome: idle(`deployment is ${d.status}`), fresh: true };
  }
  if (targetKind !== 'local') return { outcome: idle(`${targetKind} targets run their own detection`), fresh: true };

  // Evaluate.
  const targetRef = { id: d.targetId, name: targetName, kind: targetKind, environment, resolvedPlaceholders };
  const target = targetAdapter(siem, targetRef);
  const run: DetectionRun = { deploymentId, d, mode, cursor: d.detectionCursor ?? (await target.latestCursor(d.tenantId, d.targetId)), startedAt, t0, activityKey: key };
  // An evaluation the pass made for this very cursor was compiled from this rule version already.
  const prior = evaluated?.cursor === run.cursor ? evaluated.result : null;
  const rule = prior ? null : compileRuleForTarget(siem, content, d.ruleId, d.version, targetRef);
  let found: LiveEvaluationResult;
  try {
    found = prior ?? (await target.evaluateSince(d.tenantId, d.targetId, rule!, run.cursor, { limit: MAX_EVENTS_PER_RUN }));
  } catch (err) {
    // A query that fails is a health signal of the rule: recorded as a failed run, not retried.
    await recordFailedRun(db, run, (err as Error).message);
    metrics.detectionRun('failed');
    throw ApplicationFailure.nonRetryable(`Detection query of deployment ${deploymentId} failed: ${(err as Error).message}`, FailureType.DetectionQueryFailed);
  }
  const next = cursorAfterRun(found);

  // Apply the policy and record, together.
  return db.transaction(async (tx): Promise<{ outcome: DetectionOutcome; fresh: boolean }> => {
    const [locked] = await tx
      .select({ cursor: deployments.detectionCursor, status: deployments.status })
      .from(deployments)
      .where(eq(deployments.id, deploymentId))
      .for('update');
    // An earlier attempt still running when this one started has committed meanwhile.
    const committed = await recordedOutcome(tx, key);
    if (committed) return { outcome: committed, fresh: false };
    if (locked!.status !== d.status) return { outcome: idle(`deployment is ${locked!.status}`), fresh: true };
    if ((locked!.cursor ?? run.cursor) !== run.cursor) return { outcome: idle('another run advanced this deployment first'), fresh: true };
    const evaluated = { ...base, skipped: null, scanned: found.scanned, matches: found.matched };
    if (mode === 'shadow') {
      // Demoted: the rule keeps being evaluated so a person can see what it would raise, but
      // no alert reaches anyone until it is promoted.
      await advanceDeployment(tx, deploymentId, next, null);
      return { outcome: await recordRun(tx, run, found, next, { ...evaluated, raised: 0, suppressed: 0, budgetExceededNow: false, alertsToday: 0, mode }), fresh: true };
    }
    const usage = await readBudgetUsage(tx, deploymentId, budgetWindowStart(startedAt, d.demotion));
    const { raised, suppressed } = await storeAlerts(tx, run, found.events, alertsAllowedToOpen(budget, usage.openAlerts));
    const verdict = budgetVerdict({ budget, onExceed, alertsBefore: usage.openAlerts, raised, suppressed, suppressedEarlierToday: usage.suppressedEarlier, at: startedAt });
    await advanceDeployment(tx, deploymentId, next, verdict.demotion);
    const outcome = await recordRun(tx, run, found, next, {
      ...evaluated,
      raised,
      suppressed,
      budgetExceededNow: verdict.budgetExceededNow,
      alertsToday: verdict.alertsToday,
      mode,
      demoted: verdict.demotion !== null,
    });
    return { outcome, fresh: true };
  });
}
