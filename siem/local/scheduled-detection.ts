import { randomUUID } from 'node:crypto';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import type { AlertStats, RunStats, TimeWindow } from '../adapter';
import { exec, rows, transaction } from './duckdb';
import type { ActiveDeployment, DeploymentRegistry } from './deployments';
import type { LocalEventStore } from './event-store';

/**
 * Scheduled detection on the local target: each run evaluates every active deployment of a tenant
 * over the events committed since that deployment's cursor, stores one alert per matched event and
 * records the run. The worker decides when runs happen; this module only makes one run correct:
 * alerts, the run record and the cursor move together in one transaction, so a crash repeats the
 * run rather than losing or duplicating alerts.
 */

export const DETECTION_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS alerts (
  alert_id VARCHAR PRIMARY KEY,
  tenant_id VARCHAR NOT NULL,
  deployment_id VARCHAR NOT NULL,
  rule_id VARCHAR NOT NULL,
  version INTEGER NOT NULL,
  event_seq BIGINT NOT NULL,
  event_id VARCHAR NOT NULL,
  event_time TIMESTAMP NOT NULL,
  created_at TIMESTAMP NOT NULL
)`,
  `CREATE TABLE IF NOT EXISTS detection_runs (
  run_id VARCHAR PRIMARY KEY,
  tenant_id VARCHAR NOT NULL,
  deployment_id VARCHAR NOT NULL,
  rule_id VARCHAR NOT NULL,
  started_at TIMESTAMP NOT NULL,
  duration_ms DOUBLE NOT NULL,
  events_scanned BIGINT NOT NULL,
  matched BIGINT NOT NULL,
  alerts_created BIGINT NOT NULL,  -- matched beyond maxAlertsPerRun are counted, not stored
  cursor_from BIGINT NOT NULL,
  cursor_to BIGINT NOT NULL,
  error VARCHAR                    -- NULL on success; the cursor does not move on failure
)`,
];

export interface DetectionRunOutcome {
  readonly deploymentId: string;
  readonly ruleId: string;
  readonly scanned: number;
  readonly matched: number;
  readonly alertsCreated: number;
  readonly error: string | null;
}

export class ScheduledDetection {
  private ready: Promise<void> | undefined;

  constructor(
    private readonly store: LocalEventStore,
    private readonly deployments: DeploymentRegistry,
    private readonly maxAlertsPerRun = 10_000,
  ) {}

  private init(): Promise<void> {
    this.ready ??= this.store.write(async (con) => {
      for (const ddl of DETECTION_DDL) await exec(con, ddl);
    });
    return this.ready;
  }

  /** One detection pass over every active deployment of the tenant. */
  async run(tenantId: string, now: Date = new Date()): Promise<DetectionRunOutcome[]> {
    await this.init();
    const outcomes: DetectionRunOutcome[] = [];
    for (const d of await this.deployments.listActive(tenantId)) outcomes.push(await this.runOne(d, now));
    return outcomes;
  }

  private async runOne(d: ActiveDeployment, now: Date): Promise<DetectionRunOutcome> {
    const started = performance.now();
    const base = { deploymentId: d.deploymentId, ruleId: d.ruleId };
    let found;
    try {
      found = await this.store.since(d.tenantId, d.query, d.detectionCursor, { limit: this.maxAlertsPerRun, ...(d.logsource ? { logsource: d.logsource } : {}) });
    } catch (e) {
      // A failing query is a health signal, not a crash of the whole pass: record it and go on.
      const error = (e as Error).message;
      await this.record(d, now, performance.now() - started, { scanned: 0, matched: 0, alerts: 0, to: d.detectionCursor, error });
      return { ...base, scanned: 0, matched: 0, alertsCreated: 0, error };
    }
    const result = found;
    const applied = await this.store.write((con) =>
      transaction(con, async () => {
        if (!(await this.deployments.advanceCursor(con, d.deploymentId, d.detectionCursor, result.cursor))) return false;
        for (const ev of result.events) {
          await exec(con, `INSERT INTO alerts VALUES ($1, $2, $3, $4, $5, $6, $7, $8::TIMESTAMP, $9::TIMESTAMP)`, [
            randomUUID(),
            d.tenantId,
            d.deploymentId,
            d.ruleId,
            d.version,
            ev.seq,
            ev.eventId,
            ev.time.toISOString(),
            now.toISOString(),
          ] as DuckDBValue[]);
        }
        await this.insertRun(con, d, now, performance.now() - started, { scanned: result.scanned, matched: result.matched, alerts: result.events.length, to: result.cursor, error: null });
        return true;
      }),
    );
    if (!applied) return { ...base, scanned: 0, matched: 0, alertsCreated: 0, error: 'skipped: another run advanced this deployment first' };
    return { ...base, scanned: result.scanned, matched: result.matched, alertsCreated: result.events.length, error: null };
  }

  private record(d: ActiveDeployment, now: Date, ms: number, r: RunFigures): Promise<void> {
    return this.store.write((con) => this.insertRun(con, d, now, ms, r));
  }

  private insertRun(con: DuckDBConnection, d: ActiveDeployment, now: Date, ms: number, r: RunFigures): Promise<void> {
    return exec(con, `INSERT INTO detection_runs VALUES ($1, $2, $3, $4, $5::TIMESTAMP, $6, $7, $8, $9, $10, $11, $12)`, [
      randomUUID(),
      d.tenantId,
      d.deploymentId,
      d.ruleId,
      now.toISOString(),
      ms,
      r.scanned,
      r.matched,
      r.alerts,
      d.detectionCursor,
      r.to,
      r.error,
    ] as DuckDBValue[]);
  }

  /** Alerts of a tenant's rule (all its versions) created within the window. */
  async alertStats(tenantId: string, ruleId: string, window: TimeWindow): Promise<AlertStats> {
    await this.init();
    return this.store.read(async (con) => {
      const perDay = await rows(
        con,
        `SELECT strftime(created_at, '%Y-%m-%d') AS day, count(*) AS n, epoch_ms(min(created_at)) AS lo, epoch_ms(max(created_at)) AS hi
         FROM alerts WHERE tenant_id = $1 AND rule_id = $2 AND created_at >= $3::TIMESTAMP AND created_at < $4::TIMESTAMP GROUP BY 1 ORDER BY 1`,
        [tenantId, ruleId, window.from.toISOString(), window.to.toISOString()],
      );
      const lo = perDay[0]?.lo;
      const hi = perDay[perDay.length - 1]?.hi;
      return {
        ruleId,
        alerts: perDay.reduce((s, r) => s + Number(r.n), 0),
        perDay: perDay.map((r) => ({ day: String(r.day), alerts: Number(r.n) })),
        firstAlertAt: lo === undefined ? null : new Date(Number(lo)),
        lastAlertAt: hi === undefined ? null : new Date(Number(hi)),
      };
    });
  }

  /** Detection runs of a tenant's rule started within the window. */
  async runStats(tenantId: string, ruleId: string, window: TimeWindow): Promise<RunStats> {
    await this.init();
    return this.store.read(async (con) => {
      const params = [tenantId, ruleId, window.from.toISOString(), window.to.toISOString()];
      const scope = `tenant_id = $1 AND rule_id = $2 AND started_at >= $3::TIMESTAMP AND started_at < $4::TIMESTAMP`;
      const agg = (await rows(
        con,
        `SELECT count(*) AS runs, count(error) AS failed, coalesce(sum(events_scanned), 0) AS scanned, coalesce(avg(duration_ms), 0) AS mean_ms,
                coalesce(max(duration_ms), 0) AS max_ms, epoch_ms(max(started_at)) AS last_ms
         FROM detection_runs WHERE ${scope}`,
        params,
      ))[0]!;
      const lastError = (await rows(con, `SELECT error FROM detection_runs WHERE ${scope} AND error IS NOT NULL ORDER BY started_at DESC LIMIT 1`, params))[0];
      return {
        ruleId,
        runs: Number(agg.runs),
        failedRuns: Number(agg.failed),
        eventsScanned: Number(agg.scanned),
        meanDurationMs: Number(agg.mean_ms),
        maxDurationMs: Number(agg.max_ms),
        lastRunAt: agg.last_ms === null ? null : new Date(Number(agg.last_ms)),
        lastError: lastError ? String(lastError.error) : null,
      };
    });
  }
}

interface RunFigures {
  readonly scanned: number;
  readonly matched: number;
  readonly alerts: number;
  readonly to: number;
  readonly error: string | null;
}
