import type { DuckDBConnection } from '@duckdb/node-api';
import { exec, rows as queryRows, transaction } from './duckdb';
import { ADD_TARGET_COLUMNS, EVENT_HOURS_TABLE, EVENTS_TABLE, STORE_DDL, STORE_META_TABLE, UNTARGETED_EVENTS_KEY } from './schema';

/**
 * The store's file format across versions: tables created when missing, files written before
 * events had a target upgraded (their events adopted by a target at start-up), and the hourly
 * summary filled for files written before it existed.
 */

/** Creates the tables a new file needs, and upgrades a file written before events had a target. */
export async function createOrUpgradeTables(con: DuckDBConnection): Promise<void> {
  const beforeTargets = await hasEventsWithoutTargets(con);
  for (const ddl of STORE_DDL) await con.run(ddl);
  if (beforeTargets) await addTargetColumns(con);
}

/** Fills the hourly summary of a store whose events were written without it (older files). */
export async function backfillEventHours(con: DuckDBConnection): Promise<void> {
  const state = (await queryRows(con, `SELECT EXISTS (FROM ${EVENTS_TABLE}) AS events, EXISTS (FROM ${EVENT_HOURS_TABLE}) AS hours`))[0]!;
  if (state.events !== true || state.hours === true) return;
  await exec(
    con,
    `INSERT INTO ${EVENT_HOURS_TABLE} (tenant_id, target_id, hour, events) SELECT tenant_id, target_id, date_trunc('hour', event_time), count(*) FROM ${EVENTS_TABLE} GROUP BY ALL`,
  );
}

/** Whether the file holds events written before events had a target, not yet adopted. */
export async function untargetedEventsPending(con: DuckDBConnection): Promise<boolean> {
  return (await queryRows(con, `SELECT 1 FROM ${STORE_META_TABLE} WHERE key = $1`, [UNTARGETED_EVENTS_KEY])).length > 0;
}

/**
 * Gives the events written before events had a target (target_id NULL) to their tenant's target
 * in `owners` — the service passes each tenant's built-in local target, where every event went
 * then. Runs once per file: later calls (and files created with targets) change nothing. Events
 * of a tenant missing from `owners` keep no target, so no query reads them; retention still
 * deletes them. Returns how many events were adopted.
 */
export async function adoptUntargetedEvents(con: DuckDBConnection, owners: ReadonlyArray<{ tenantId: string; targetId: string }>): Promise<number> {
  const marker = await queryRows(con, `SELECT 1 FROM ${STORE_META_TABLE} WHERE key = $1`, [UNTARGETED_EVENTS_KEY]);
  if (marker.length === 0) return 0;
  const deployedRules = await tableExists(con, 'deployed_rules');
  let adopted = 0;
  for (const { tenantId, targetId } of owners) {
    const params = [targetId, tenantId];
    adopted += Number((await queryRows(con, `UPDATE ${EVENTS_TABLE} SET target_id = $1 WHERE target_id IS NULL AND tenant_id = $2`, params))[0]?.Count ?? 0);
    await exec(con, `UPDATE ${EVENT_HOURS_TABLE} SET target_id = $1 WHERE target_id IS NULL AND tenant_id = $2`, params);
    if (deployedRules) await exec(con, `UPDATE deployed_rules SET target_id = $1 WHERE target_id IS NULL AND tenant_id = $2`, params);
  }
  await exec(con, `DELETE FROM ${STORE_META_TABLE} WHERE key = $1`, [UNTARGETED_EVENTS_KEY]);
  return adopted;
}

async function tableExists(con: DuckDBConnection, name: string): Promise<boolean> {
  return (await queryRows(con, `SELECT 1 FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = $1`, [name])).length > 0;
}

/** A file written before events had a target: it has an events table without target_id. */
async function hasEventsWithoutTargets(con: DuckDBConnection): Promise<boolean> {
  if (!(await tableExists(con, EVENTS_TABLE))) return false;
  const column = await queryRows(con, `SELECT 1 FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = $1 AND column_name = 'target_id'`, [EVENTS_TABLE]);
  return column.length === 0;
}

/** Adds the target columns to a file written before targets, and marks its events for adoption. */
async function addTargetColumns(con: DuckDBConnection): Promise<void> {
  await transaction(con, async () => {
    for (const ddl of ADD_TARGET_COLUMNS) await exec(con, ddl);
    if (await tableExists(con, 'deployed_rules')) await exec(con, `ALTER TABLE deployed_rules ADD COLUMN IF NOT EXISTS target_id VARCHAR`);
    await exec(con, `INSERT INTO ${STORE_META_TABLE} VALUES ($1, now()::VARCHAR) ON CONFLICT DO NOTHING`, [UNTARGETED_EVENTS_KEY]);
  });
}
