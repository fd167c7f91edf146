import { ApplicationFailure } from '@temporalio/activity';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { shadowRuns, targets, type RunStatus } from '../db/schema';
import { projectCost, type CostModel } from '../domain/detection/cost-projection';
import { adapterFor, type SiemAdapters } from '../siem/adapters';
import { compileRuleForTarget } from '../domain/rules/rule-compilation';

/** What a shadow evaluation has accumulated; carried across continue-as-new. */
export type ShadowState = {
  startedAt: string;
  endsAt: string;
  /** Store cursor when the shadow started: events committed after it are the shadow's. */
  startCursor: number;
  cursor: number;
  evaluations: number;
  eventsScanned: number;
  /** Matches: the alerts the rule would have raised. None is written. */
  matches: number;
  bytesScanned: number;
  evaluationMsTotal: number;
  evaluationMsMax: number;
  /** Workflow runs so far (1 + continue-as-new count). */
  workflowRuns: number;
  stoppedEarly: boolean;
};

export type ShadowSlice = { cursor: number; scanned: number; matched: number; bytesScanned: number; durationMs: number };

const DAY_MS = 86_400_000;
const round = (x: number, places = 4) => Math.round(x * 10 ** places) / 10 ** places;

/** The final figures of a shadow evaluation from its accumulated state (see the README). */
export function shadowFigures(state: ShadowState, endedAt: string, costModel: CostModel) {
  const observedMs = Math.max(0, new Date(endedAt).getTime() - new Date(state.startedAt).getTime());
  const observedDays = observedMs / DAY_MS;
  return {
    started_at: state.startedAt,
    ended_at: endedAt,
    observed_seconds: round(observedMs / 1000, 3),
    stopped_early: state.stoppedEarly,
    evaluations: state.evaluations,
    workflow_runs: state.workflowRuns,
    cursor: { from: state.startCursor, to: state.cursor },
    events_scanned: state.eventsScanned,
    bytes_scanned: state.bytesScanned,
    alerts: {
      projected_total: state.matches,
      projected_per_day: observedDays > 0 ? round(state.matches / observedDays) : 0,
      written: 0,
    },
    latency: {
      total_ms: round(state.evaluationMsTotal, 3),
      mean_evaluation_ms: state.evaluations ? round(state.evaluationMsTotal / state.evaluations, 3) : 0,
      max_evaluation_ms: round(state.evaluationMsMax, 3),
    },
    cost: projectCost(costModel, state.bytesScanned, state.matches, observedMs),
  };
}

export function createShadowActivities({ db, siem }: { db: Db; siem: SiemAdapters }) {
  async function loadShadow(shadowId: string) {
    const [row] = await db
      .select({ s: shadowRuns, kind: targets.kind, costModel: targets.costModel })
      .from(shadowRuns)
      .innerJoin(targets, eq(targets.id, shadowRuns.targetId))
      .where(eq(shadowRuns.id, shadowId));
    if (!row) throw ApplicationFailure.nonRetryable(`No shadow evaluation ${shadowId}`, 'ShadowNotFound');
    if (row.kind !== 'local') throw ApplicationFailure.nonRetryable(`Shadow evaluation needs live data; targets of kind ${row.kind} have none here`, 'UnsupportedTargetKind');
    return row;
  }

  /** The shadow's rule as its target runs it; a rule that does not compile is permanent (RuleDoesNotCompile). */
  function compileShadowRule(s: { ruleContent: string; ruleId: string; version: number | null }, kind: string) {
    return compileRuleForTarget(siem, s.ruleContent, s.ruleId, s.version ?? 0, kind);
  }

  return {
    /** Where the shadow starts reading: the target's cursor now, so only events ingested from now on count. */
    async beginShadow({ shadowId }: { shadowId: string }): Promise<{ cursor: number }> {
      const { s, kind } = await loadShadow(shadowId);
      compileShadowRule(s, kind);
      return { cursor: await adapterFor(siem, kind).latestCursor(s.tenantId) };
    },

    /**
     * Evaluates the events committed after `cursor`: counts only (no event is read out, no alert is
     * written). Read-only, so a retry after a crash evaluates the same slice again with the same answer.
     */
    async shadowSlice({ shadowId, cursor }: { shadowId: string; cursor: number }): Promise<ShadowSlice> {
      const { s, kind } = await loadShadow(shadowId);
      const rule = compileShadowRule(s, kind);
      const t0 = performance.now();
      const found = await adapterFor(siem, kind).evaluateSince(s.tenantId, rule, cursor, { limit: 0 });
      return { cursor: found.cursor, scanned: found.scanned, matched: found.matched, bytesScanned: found.bytesScanned, durationMs: round(performance.now() - t0, 3) };
    },

    /** Writes the shadow's final figures and status; returns the figures. */
    async recordShadowResult(input: { shadowId: string; status: Extract<RunStatus, 'completed' | 'failed'>; error: string | null; state: ShadowState | null; endedAt: string }): Promise<Record<string, unknown> | null> {
      const { costModel } = await loadShadow(input.shadowId);
      const result = input.state ? shadowFigures(input.state, input.endedAt, costModel) : null;
      await db
        .update(shadowRuns)
        .set({ status: input.status, error: input.error, result, updatedAt: sql`now()`, endedAt: sql`now()` })
        .where(and(eq(shadowRuns.id, input.shadowId), eq(shadowRuns.status, 'running')));
      return result;
    },
  };
}

export type ShadowActivities = ReturnType<typeof createShadowActivities>;
