import type { DuckDBConnection } from '@duckdb/node-api';
import type { RuleLogsource as Logsource, TimeWindow, WindowChunk } from '../adapter';
import { rows as queryRows } from './duckdb';
import { EVENT_COLUMNS, guard, isWholeHour, logsourceScope, scope, targetScope, timeLiteral, toStoredEvent } from './event-sql';
import { fieldExpression, sqlLiteral } from './fields';
import { EVENT_HOURS_TABLE, EVENTS_TABLE } from './schema';
import type { SinceResult, TenantStats, WindowCount, WindowSearch } from './store-types';

/**
 * The store's reads, each on a connection the caller gives (a consistent snapshot). WHERE
 * expressions are SQL produced by the rule compiler; they are trusted code, never user text.
 */

/** Store-wide cursor: the seq of the last committed event (0 when empty). */
export async function readCommittedCursor(con: DuckDBConnection): Promise<number> {
  return Number((await queryRows(con, `SELECT coalesce(max(high_water_seq), 0) AS c FROM ingest_batches`))[0]!.c);
}

/** Counts the target's events of the window matching `where`, with per-day figures. */
export async function countEvents(con: DuckDBConnection, tenantId: string, targetId: string, where: string, window: TimeWindow, logsource?: Logsource): Promise<WindowCount> {
  const started = performance.now();
  // One scan: volume and matches together, the rule in a FILTER clause. Grouping on the DATE
  // cast (whose range DuckDB knows from the column statistics, so it aggregates into a small
  // array instead of a hash table) and formatting only the ~30 result rows keep the query within
  // a few percent of a bare `count(*) WHERE rule`; formatting every row's day with strftime, or
  // a second scan for the volume, cost more than the rule itself.
  const days = await queryRows(
    con,
    `SELECT strftime(day, '%Y-%m-%d') AS day, scanned, bytes, matched FROM (
       SELECT event_time::DATE AS day, count(*) AS scanned, sum(raw_bytes) AS bytes, count(*) FILTER (WHERE ${guard(where)}) AS matched
       FROM ${EVENTS_TABLE} WHERE ${scope(tenantId, targetId, window, logsource)} GROUP BY 1
     ) ORDER BY 1`,
  );
  const perDay = days.map((r) => ({ day: String(r.day), scanned: Number(r.scanned), matched: Number(r.matched) }));
  return {
    matched: perDay.reduce((s, d) => s + d.matched, 0),
    scanned: perDay.reduce((s, d) => s + d.scanned, 0),
    bytesScanned: days.reduce((s, r) => s + Number(r.bytes), 0),
    perDay,
    durationMs: performance.now() - started,
  };
}

/** Like countEvents, plus the matched events themselves (at most `limit`, in time order). */
export async function searchEvents(
  con: DuckDBConnection,
  tenantId: string,
  targetId: string,
  where: string,
  window: TimeWindow,
  options: { limit?: number; logsource?: Logsource } = {},
): Promise<WindowSearch> {
  const limit = options.limit ?? 100;
  const started = performance.now();
  const counted = await countEvents(con, tenantId, targetId, where, window, options.logsource);
  const rows = await queryRows(
    con,
    `SELECT ${EVENT_COLUMNS} FROM ${EVENTS_TABLE} WHERE ${scope(tenantId, targetId, window, options.logsource)} AND ${guard(where)} ORDER BY event_time, seq LIMIT ${limit}`,
  );
  return { ...counted, events: rows.map(toStoredEvent), truncated: counted.matched > rows.length, durationMs: performance.now() - started };
}

/**
 * The target's events of the window per UTC hour, in order (hours without events left out).
 *
 * Whole hours come from the hourly summary (a few hundred rows, not a scan of the events); only
 * an hour the window cuts (a `from`/`to` not on the hour) is counted on the events table, a
 * time-range scan the row groups' min/max statistics keep short.
 */
export async function hourlyEventCounts(con: DuckDBConnection, tenantId: string, targetId: string, window: TimeWindow): Promise<Array<{ hourMs: number; events: number }>> {
  const within = scope(tenantId, targetId, window);
  const from = timeLiteral(window.from, 'from');
  const to = timeLiteral(window.to, 'to');
  const whole = `SELECT hour, sum(events) AS n FROM ${EVENT_HOURS_TABLE}
                 WHERE ${targetScope(tenantId, targetId)} AND hour >= ${from} AND hour + INTERVAL 1 HOUR <= ${to} GROUP BY hour`;
  // The hours the window only partly covers: at most two, counted exactly.
  const cut = `SELECT date_trunc('hour', event_time) AS hour, count(*) AS n FROM ${EVENTS_TABLE}
               WHERE ${within} AND (event_time < date_trunc('hour', ${from}) + INTERVAL 1 HOUR OR event_time >= date_trunc('hour', ${to}))
                 AND NOT (date_trunc('hour', event_time) >= ${from} AND date_trunc('hour', event_time) + INTERVAL 1 HOUR <= ${to})
               GROUP BY 1`;
  const partial = isWholeHour(window.from) && isWholeHour(window.to) ? '' : ` UNION ALL ${cut}`;
  const hours = await queryRows(con, `SELECT epoch_ms(hour) AS h, n FROM (${whole}${partial}) ORDER BY 1`);
  return hours.map((r) => ({ hourMs: Number(r.h), events: Number(r.n) }));
}

/**
 * Splits a window into contiguous chunks of about `targetEvents` events each (whole UTC hours),
 * from its hourly counts. Always at least one chunk. Each chunk's `events` is exact.
 */
export function chunksOf(window: TimeWindow, hours: ReadonlyArray<{ hourMs: number; events: number }>, targetEvents: number): WindowChunk[] {
  const chunks: WindowChunk[] = [];
  let chunkFrom = window.from;
  let n = 0;
  for (const r of hours) {
    n += r.events;
    if (n >= targetEvents) {
      const end = new Date(Math.min(r.hourMs + 3_600_000, window.to.getTime()));
      chunks.push({ from: chunkFrom, to: end, events: n });
      chunkFrom = end;
      n = 0;
    }
  }
  if (chunkFrom.getTime() < window.to.getTime() || chunks.length === 0) chunks.push({ from: chunkFrom, to: window.to, events: n });
  else if (n > 0) {
    const lastChunk = chunks.pop()!;
    chunks.push({ ...lastChunk, events: lastChunk.events + n });
  }
  return chunks;
}

/**
 * The target's events committed after `cursor` that match `where` (scheduled detection, shadow).
 * The returned cursor is the store-wide cursor read at the start of the call, so events committed
 * during the call are left for the next one and none is seen twice or skipped.
 */
export async function eventsSince(
  con: DuckDBConnection,
  tenantId: string,
  targetId: string,
  where: string,
  cursor: number,
  options: { limit?: number; logsource?: Logsource } = {},
): Promise<SinceResult> {
  const target = targetScope(tenantId, targetId);
  const limit = options.limit ?? 1000;
  const started = performance.now();
  const upTo = await readCommittedCursor(con);
  const filter = `${target} AND seq > ${Math.trunc(cursor)} AND seq <= ${upTo}${logsourceScope(options.logsource)}`;
  const agg = (
    await queryRows(
      con,
      `SELECT count(*) AS scanned, coalesce(sum(raw_bytes), 0) AS bytes, count(*) FILTER (WHERE ${guard(where)}) AS matched FROM ${EVENTS_TABLE} WHERE ${filter}`,
    )
  )[0]!;
  const matched = Number(agg.matched);
  const rows =
    matched === 0 || limit === 0 ? [] : await queryRows(con, `SELECT ${EVENT_COLUMNS} FROM ${EVENTS_TABLE} WHERE ${filter} AND ${guard(where)} ORDER BY seq LIMIT ${limit}`);
  return {
    cursor: Math.max(upTo, Math.trunc(cursor)),
    scanned: Number(agg.scanned),
    bytesScanned: Number(agg.bytes),
    matched,
    durationMs: performance.now() - started,
    events: rows.map(toStoredEvent),
    truncated: matched > rows.length,
  };
}

/**
 * Volume and freshness of the events of one target of a tenant, or of all the tenant's targets
 * when `targetId` is left out (data-quality and health reports).
 */
export async function tenantStats(con: DuckDBConnection, tenantId: string, targetId?: string): Promise<TenantStats> {
  const which = targetId === undefined ? `tenant_id = ${sqlLiteral(tenantId)}` : targetScope(tenantId, targetId);
  const r = (
    await queryRows(
      con,
      `SELECT count(*) AS n, coalesce(sum(raw_bytes), 0) AS bytes, epoch_ms(min(event_time)) AS lo, epoch_ms(max(event_time)) AS hi, epoch_ms(max(ingested_at)) AS ing
     FROM ${EVENTS_TABLE} WHERE ${which}`,
    )
  )[0]!;
  const date = (v: unknown) => (v === null ? null : new Date(Number(v)));
  return { events: Number(r.n), bytes: Number(r.bytes), firstEventTime: date(r.lo), lastEventTime: date(r.hi), lastIngestedAt: date(r.ing) };
}

export type FieldPresence = { events: number; fields: Record<string, number>; newestEventTime: Date | null };

/**
 * Data quality of one logsource on one target: the events since `since`, how many of them carry
 * each field (its text value is not NULL: an own property whose value is not JSON null, read as the
 * rules read it), and the newest event time of the logsource at any time. The scan reads only the
 * row groups whose event times reach `since` (DuckDB prunes the rest by their min/max), not the
 * whole retention; only a logsource with no event since then is scanned again for its newest.
 */
export async function fieldPresence(
  con: DuckDBConnection,
  tenantId: string,
  targetId: string,
  logsource: Logsource,
  fields: readonly string[],
  since: Date,
): Promise<FieldPresence> {
  const scope = `${targetScope(tenantId, targetId)}${logsourceScope(logsource)}`;
  const perField = fields.map((f, i) => `, count(*) FILTER (WHERE ${fieldExpression(f)} IS NOT NULL) AS f${i}`).join('');
  const r = (
    await queryRows(
      con,
      `SELECT count(*) AS n, epoch_us(max(event_time)) AS newest${perField} FROM ${EVENTS_TABLE} WHERE ${scope} AND event_time >= ${timeLiteral(since, 'since')}`,
    )
  )[0]!;
  if (r.newest === null) r.newest = (await queryRows(con, `SELECT epoch_us(max(event_time)) AS newest FROM ${EVENTS_TABLE} WHERE ${scope}`))[0]!.newest;
  return {
    events: Number(r.n),
    fields: Object.fromEntries(fields.map((f, i) => [f, Number(r[`f${i}`])])),
    newestEventTime: r.newest === null ? null : new Date(Number(r.newest) / 1000),
  };
}
