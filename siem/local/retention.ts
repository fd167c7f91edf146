import type { DuckDBConnection } from '@duckdb/node-api';
import { exec, rows as queryRows } from './duckdb';
import { EVENT_HOURS_TABLE, EVENTS_TABLE } from './schema';

const DAY_MS = 86_400_000;

/** The time before which a retention of `days` days deletes events, as of `now`. */
export function retentionCutoff(days: number, now: Date): Date {
  if (!Number.isFinite(days) || days <= 0) throw new RangeError(`retention days must be a positive number, got ${days}`);
  return new Date(now.getTime() - days * DAY_MS);
}

/**
 * Deletes the tenant's events before `cutoff`, on every target of the tenant (the retention period
 * is the tenant's), and brings the hourly summary in line; returns how many events. Runs on the
 * writer, inside the caller's transaction.
 */
export async function deleteEventsBefore(con: DuckDBConnection, tenantId: string, cutoff: Date): Promise<number> {
  const params = [tenantId, cutoff.toISOString()];
  const deleted = Number((await queryRows(con, `DELETE FROM ${EVENTS_TABLE} WHERE tenant_id = $1 AND event_time < $2::TIMESTAMP`, params))[0]?.Count ?? 0);
  // Hours wholly before the cutoff are gone; the cutoff's own hour is recounted from what is left.
  await exec(con, `DELETE FROM ${EVENT_HOURS_TABLE} WHERE tenant_id = $1 AND hour <= date_trunc('hour', $2::TIMESTAMP)`, params);
  await exec(
    con,
    `INSERT INTO ${EVENT_HOURS_TABLE} (tenant_id, target_id, hour, events) SELECT tenant_id, target_id, date_trunc('hour', event_time), count(*) FROM ${EVENTS_TABLE}
     WHERE tenant_id = $1 AND event_time >= date_trunc('hour', $2::TIMESTAMP) AND event_time < date_trunc('hour', $2::TIMESTAMP) + INTERVAL 1 HOUR GROUP BY ALL`,
    params,
  );
  return deleted;
}
