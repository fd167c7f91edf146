import { randomUUID } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { exec, rows as queryRows } from './duckdb';
import { guard } from './event-sql';
import { promotedExtraction, promotedItems, quoteIdentifier, sqlLiteral } from './fields';
import { eventsTableDdl, FIXTURE_SCHEMA } from './schema';
import { checkValue } from './sources';
import type { FixtureTable } from './store-types';

/**
 * Loads `events` into a new table of the events table's shape on `con`, runs fn on it and drops
 * it, so rule tests never see real data and real data never sees fixtures. Fixture events need no
 * timestamp; their event_time is the time of the call. The caller owns (and closes) `con`.
 */
export async function withFixtureTable<T>(con: DuckDBConnection, events: readonly Record<string, unknown>[], fn: (table: FixtureTable) => Promise<T>): Promise<T> {
  const id = randomUUID().replace(/-/g, '');
  const name = `${quoteIdentifier(FIXTURE_SCHEMA)}.fixture_${id}`;
  const stage = `fixture_stage_${id}`;
  try {
    await con.run(eventsTableDdl(name));
    await con.run(`CREATE TEMP TABLE ${stage} (line BIGINT NOT NULL, raw VARCHAR NOT NULL)`);
    const appender = await con.createAppender(stage);
    try {
      events.forEach((event, i) => {
        const c = checkValue(event);
        if (!c.ok) throw new RangeError(`fixture event ${i + 1}: ${c.error}`);
        appender.appendBigInt(BigInt(i + 1));
        appender.appendVarchar(c.raw);
        appender.endRow();
      });
    } finally {
      appender.closeSync();
    }
    await exec(
      con,
      `INSERT INTO ${name} SELECT line, 'fixture', 'fixture-' || line, now()::TIMESTAMP, now()::TIMESTAMP, NULL, NULL, NULL, strlen(raw), raw, ${promotedItems('__p')}, 'fixture'
       FROM (SELECT line, raw, ${promotedExtraction('raw')} AS __p FROM ${stage})`,
    );
    return await fn({
      name,
      matching: async (where) => (await queryRows(con, `SELECT seq FROM ${name} WHERE ${guard(where)} ORDER BY seq`)).map((r) => Number(r.seq)),
    });
  } finally {
    await con.run(`DROP TABLE IF EXISTS ${name}`);
    await con.run(`DROP TABLE IF EXISTS ${stage}`);
  }
}

/** Fixture tables outlive a crash of the process that made them; they are never needed later. */
export async function dropLeftoverFixtures(con: DuckDBConnection): Promise<void> {
  const rows = await queryRows(con, `SELECT table_name FROM duckdb_tables() WHERE schema_name = ${sqlLiteral(FIXTURE_SCHEMA)} AND NOT temporary`);
  for (const r of rows) await con.run(`DROP TABLE IF EXISTS ${quoteIdentifier(FIXTURE_SCHEMA)}.${quoteIdentifier(String(r.table_name))}`);
}
