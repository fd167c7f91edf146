import { ApplicationFailure, Context } from '@temporalio/activity';
import { and, eq, gte, ne, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { alerts, deployments, detectionRuns, FINAL_DEPLOYMENT_STATUSES, ruleVersions, targets, type Demotion, type Deployment, type NoiseBudgetPolicy } from '../db/schema';
import { ScheduleNotFoundError } from '@temporalio/client';
import { detectionScheduleId, type TemporalDeps } from './schedules';
import { adapterFor, type SiemAdapters } from '../siem/adapters';
import { compileRuleForTarget } from './rule-compilation';
import { storableJson } from '../db/storable-text';

/** Matched events handled per run; more wait for the next run (the cursor stops at the last one). */
const MAX_EVENTS_PER_RUN = 5_000;

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

/**
 * The activity execution this call is (the same for every attempt of it), or null outside an
 * activity (a direct call).
 */
function activityKey(): string | null {
  let info;
  try {
    info = Context.current().info;
  } catch {
    return null;
  }
  const run = info.workflowExecution;
  return run ? `${run.workflowId}/${run.runId}/${info.activityId}` : null;
}

function startOfUtcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

/**
 * Where today's budget starts counting: midnight UTC, or the promotion when a person promoted a
 * demoted deployment later that day: the promotion gives the rule the whole budget again.
 */
export function budgetWindowStart(at: Date, demotion: Demotion | null): Date {
  const day = startOfUtcDay(at);
  const promoted = demotion?.promoted_at ? new Date(demotion.promoted_at) : null;
  return promoted && promoted > day ? promoted : day;
}

const LIVE_MODES: Partial<Record<Deployment['status'], 'alert' | 'shadow'>> = { active: 'alert', demoted: 'shadow' };

export function createDetectionActivities({ db, siem, temporal, now = () => new Date() }: { db: Db; siem: SiemAdapters; temporal?: TemporalDeps; now?: () => Date }) {
  /**
   * A schedule whose deployment has ended (one that leaked when its removal was lost to a retry or
   * a race) removes itself at its next run instead of running for ever.
   */
  async function removeOwnSchedule(tenantId: string, deploymentId: string): Promise<void> {
    if (!temporal) return;
    try {
      await temporal.client.schedule.getHandle(detectionScheduleId(tenantId, deploymentId)).delete();
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
  }

  return {
    /**
     * One scheduled-detection run of one deployment on the local target: evaluates the events
     * committed since the deployment's cursor and stores an alert per match, in one transaction with
     * the new cursor and the run record. Alerts are keyed by (deployment, event), so a run repeated
     * after a crash raises nothing twice. Alerts beyond the day's noise budget are stored as
     * `suppressed` and counted.
     */
    async runDetection({ deploymentId }: { deploymentId: string }): Promise<DetectionOutcome> {
      const key = activityKey();
      // An earlier attempt of this very activity committed its run: the same outcome again.
      const recorded = async (q: Pick<Db, 'select'>) =>
        key === null ? undefined : ((await q.select({ outcome: detectionRuns.outcome }).from(detectionRuns).where(eq(detectionRuns.activityKey, key)))[0]?.outcome as DetectionOutcome | undefined);
      const earlier = await recorded(db);
      if (earlier) return earlier;
      const started = now();
      const t0 = performance.now();
      const [row] = await db
        .select({ d: deployments, content: ruleVersions.content, targetKind: targets.kind, targetName: targets.name })
        .from(deployments)
        .innerJoin(targets, eq(targets.id, deployments.targetId))
        .innerJoin(ruleVersions, and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)))
        .where(eq(deployments.id, deploymentId));
      if (!row) throw ApplicationFailure.nonRetryable(`No deployment ${deploymentId}`, 'DeploymentNotFound');
      const d = row.d;
      const onExceed = d.noiseBudget?.on_exceed ?? 'suppress';
      const base = { tenantId: d.tenantId, ruleId: d.ruleId, version: d.version, target: row.targetName, budget: d.noiseBudget?.max_alerts_per_day ?? null, onExceed };
      const idle = (skipped: string): DetectionOutcome => ({ ...base, skipped, scanned: 0, matches: 0, raised: 0, suppressed: 0, budgetExceededNow: false, alertsToday: 0 });
      const mode = LIVE_MODES[d.status];
      if (!mode) {
        if ((FINAL_DEPLOYMENT_STATUSES as readonly string[]).includes(d.status)) await removeOwnSchedule(d.tenantId, deploymentId);
        return idle(`deployment is ${d.status}`);
      }
      if (row.targetKind !== 'local') return idle(`${row.targetKind} targets run their own detection`);

      const compiled = compileRuleForTarget(siem, row.content, d.ruleId, d.version, row.targetKind);
      const target = adapterFor(siem, row.targetKind);
      const cursor = d.detectionCursor ?? (await target.latestCursor(d.tenantId));
      let found;
      try {
        found = await target.evaluateSince(d.tenantId, compiled, cursor, { limit: MAX_EVENTS_PER_RUN });
      } catch (err) {
        // A query that fails is a health signal of the rule: recorded as a failed run, not retried.
        await db.insert(detectionRuns).values({
          tenantId: d.tenantId, deploymentId, ruleId: d.ruleId, startedAt: started, durationMs: Math.round(performance.now() - t0),
          eventsScanned: 0, matches: 0, alertsRaised: 0, alertsSuppressed: 0, mode, cursorFrom: cursor, cursorTo: cursor, error: (err as Error).message,
        });
        throw ApplicationFailure.nonRetryable(`Detection query of deployment ${deploymentId} failed: ${(err as Error).message}`, 'DetectionQueryFailed');
      }
      const next = found.truncated && found.events.length > 0 ? found.events.at(-1)!.seq : found.cursor;
      const dayStart = budgetWindowStart(started, d.demotion);
      const recordRun = async (tx: Pick<Db, 'insert'>, outcome: DetectionOutcome): Promise<DetectionOutcome> => {
        await tx.insert(detectionRuns).values({
          tenantId: d.tenantId,
          deploymentId,
          ruleId: d.ruleId,
          startedAt: started,
          durationMs: Math.round(performance.now() - t0),
          eventsScanned: found.scanned,
          matches: found.matched,
          alertsRaised: outcome.raised,
          alertsSuppressed: outcome.suppressed,
          mode,
          cursorFrom: cursor,
          cursorTo: next,
          error: null,
          activityKey: key,
          outcome,
        });
        return outcome;
      };

      return db.transaction(async (tx) => {
        const [locked] = await tx.select({ cursor: deployments.detectionCursor, status: deployments.status }).from(deployments).where(eq(deployments.id, deploymentId)).for('update');
        // An earlier attempt still running when this one started has committed meanwhile.
        const committed = await recorded(tx);
        if (committed) return committed;
        if (locked!.status !== d.status) return idle(`deployment is ${locked!.status}`);
        if ((locked!.cursor ?? cursor) !== cursor) return idle('another run advanced this deployment first');
        if (mode === 'shadow') {
          // Demoted: the rule keeps being evaluated so a person can see what it would raise, but
          // no alert reaches anyone until it is promoted.
          await tx.update(deployments).set({ detectionCursor: next }).where(eq(deployments.id, deploymentId));
          return recordRun(tx, { ...base, skipped: null, scanned: found.scanned, matches: found.matched, raised: 0, suppressed: 0, budgetExceededNow: false, alertsToday: 0, mode });
        }
        const [{ n }] = (await tx
          .select({ n: sql<number>`count(*)::int` })
          .from(alerts)
          .where(and(eq(alerts.deploymentId, deploymentId), gte(alerts.createdAt, dayStart), ne(alerts.status, 'suppressed')))) as [{ n: number }];
        const budget = base.budget;
        let raised = 0;
        let suppressed = 0;
        for (const ev of found.events) {
          const overBudget = budget !== null && n + raised >= budget;
          const inserted = await tx
            .insert(alerts)
            .values({
              tenantId: d.tenantId,
              deploymentId,
              ruleId: d.ruleId,
              version: d.version,
              targetId: d.targetId,
              eventSeq: ev.seq,
              eventId: ev.eventId,
              eventTime: ev.time,
              // Events stored before ingestion refused U+0000 and unpaired surrogates: made storable
              // rather than failing (and so stopping) this deployment's detection for good.
              event: storableJson(ev.event),
              status: overBudget ? 'suppressed' : 'open',
              createdAt: started,
            })
            .onConflictDoNothing()
            .returning({ id: alerts.id });
          if (inserted.length === 0) continue;
          if (overBudget) suppressed++;
          else raised++;
        }
        // Only the run whose suppressions are the day's first ones reports the crossing. Counted from
        // the day's run records, which triage never changes (a suppressed alert closed by a person
        // is no longer `suppressed`, and must not make a later run look like the first).
        const [{ earlier }] = (await tx
          .select({ earlier: sql<number>`coalesce(sum(${detectionRuns.alertsSuppressed}), 0)::int` })
          .from(detectionRuns)
          .where(and(eq(detectionRuns.deploymentId, deploymentId), gte(detectionRuns.startedAt, dayStart)))) as [{ earlier: number }];
        const budgetExceededNow = suppressed > 0 && earlier === 0;
        const demoted = budgetExceededNow && onExceed === 'demote';
        const demotion: Demotion = {
          demoted_at: started.toISOString(),
          reason: `noise budget exceeded: ${n + raised + suppressed} alerts against ${budget}/day`,
          alerts: n + raised + suppressed,
          budget: budget ?? 0,
        };
        await tx
          .update(deployments)
          .set({ detectionCursor: next, ...(demoted ? { status: 'demoted' as const, demotion, updatedAt: sql`now()` } : {}) })
          .where(eq(deployments.id, deploymentId));
        return recordRun(tx, { ...base, skipped: null, scanned: found.scanned, matches: found.matched, raised, suppressed, budgetExceededNow, alertsToday: n + raised, mode, demoted });
      });
    },
  };
}

export type DetectionActivities = ReturnType<typeof createDetectionActivities>;
