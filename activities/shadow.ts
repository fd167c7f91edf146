import { ApplicationFailure } from '@temporalio/activity';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { shadowRuns, targets } from '../db/schema';
import type { RunStatus } from '../domain/statuses';
import type { SiemAdapters } from '../siem/adapters';
import { targetAdapter } from '../domain/rules/rule-compilation';
import { round } from '../domain/runs/rounding';
import { shadowFigures, type ShadowState } from '../domain/runs/shadow-figures';
import { compileStoredRun } from '../domain/runs/stored-run-rule';

// The workflow carries this across continue-as-new and hands it back to recordShadowResult.
export type { ShadowState };

export type ShadowSlice = { cursor: number; scanned: number; matched: number; bytesScanned: number; durationMs: number };

export function createShadowActivities({ db, siem }: { db: Db; siem: SiemAdapters }) {
  async function loadShadow(shadowId: string) {
    const [row] = await db
      .select({
        s: shadowRuns,
        kind: targets.kind,
        name: targets.name,
        connection: targets.connection,
        resolvedPlaceholders: targets.resolvedPlaceholders,
        environment: targets.environment,
        costModel: targets.costModel,
      })
      .from(shadowRuns)
      .innerJoin(targets, eq(targets.id, shadowRuns.targetId))
      .where(eq(shadowRuns.id, shadowId));
    if (!row) throw ApplicationFailure.nonRetryable(`No shadow evaluation ${shadowId}`, 'ShadowNotFound');
    return {
      ...row,
      target: { id: row.s.targetId, name: row.name, kind: row.kind, connection: row.connection, environment: row.environment, resolvedPlaceholders: row.resolvedPlaceholders },
    };
  }

  return {
    /** Where the shadow starts reading: the target's cursor now, so only events sent to it from now on count. */
    async beginShadow({ shadowId }: { shadowId: string }): Promise<{ cursor: number }> {
      const { s, target } = await loadShadow(shadowId);
      compileStoredRun(siem, s, target);
      return { cursor: await targetAdapter(siem, target).latestCursor(s.tenantId, s.targetId) };
    },

    /**
     * Evaluates the events committed after `cursor`: counts only (no event is read out, no alert is
     * written). Read-only, so a retry after a crash evaluates the same slice again with the same answer.
     */
    async shadowSlice({ shadowId, cursor }: { shadowId: string; cursor: number }): Promise<ShadowSlice> {
      const { s, target } = await loadShadow(shadowId);
      const rule = compileStoredRun(siem, s, target);
      const t0 = performance.now();
      const found = await targetAdapter(siem, target).evaluateSince(s.tenantId, s.targetId, rule, cursor, { limit: 0 });
      return { cursor: found.cursor, scanned: found.scanned, matched: found.matched, bytesScanned: found.bytesScanned, durationMs: round(performance.now() - t0, 3) };
    },

    /** Writes the shadow's final figures and status; returns the figures. */
    async recordShadowResult(input: {
      shadowId: string;
      status: Extract<RunStatus, 'completed' | 'failed'>;
      error: string | null;
      state: ShadowState | null;
      endedAt: string;
    }): Promise<Record<string, unknown> | null> {
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
