import { promotedColumnsDdl, quoteIdentifier } from './fields';

/**
 * The local store's tables. One DuckDB file holds every tenant and every local target of a tenant:
 * queries always filter on `tenant_id` and `target_id`, and rows are appended in ingestion order, which for live feeds is roughly time
 * order, so DuckDB's per-row-group min/max statistics skip most row groups outside a time window.
 */

/** Events table shape; fixture tables are created with the same function so rules see one shape. */
export function eventsTableDdl(qualifiedName: string): string {
  return `CREATE TABLE IF NOT EXISTS ${qualifiedName} (
  seq BIGINT NOT NULL,            -- ingestion cursor: strictly increasing in commit order, store-wide
  tenant_id VARCHAR NOT NULL,
  event_id VARCHAR NOT NULL,      -- from the batch's id field when given, else a generated UUID
  event_time TIMESTAMP NOT NULL,  -- UTC
  ingested_at TIMESTAMP NOT NULL, -- UTC, commit time of the batch
  ls_product VARCHAR,             -- Sigma logsource, lower-cased
  ls_category VARCHAR,
  ls_service VARCHAR,
  raw_bytes INTEGER NOT NULL,     -- strlen(raw), for bytes-scanned figures
  raw VARCHAR NOT NULL,           -- the event as received (strict JSON object text)
  ${promotedColumnsDdl()},
  target_id VARCHAR               -- the target the event was sent to (service's target id); last, where
                                  -- ALTER TABLE put it in files written before targets (NULL there until adopted)
)`;
}

export const EVENTS_TABLE = 'events';
export const FIXTURE_SCHEMA = 'fixtures';
export const EVENT_HOURS_TABLE = 'event_hours';
export const STORE_META_TABLE = 'store_meta';
/** store_meta key present while events written before targets (target_id NULL) await their owner. */
export const UNTARGETED_EVENTS_KEY = 'untargeted-events';

export const STORE_DDL: readonly string[] = [
  eventsTableDdl(EVENTS_TABLE),
  `CREATE TABLE IF NOT EXISTS ingest_batches (
  batch_id VARCHAR PRIMARY KEY,
  tenant_id VARCHAR NOT NULL,
  first_seq BIGINT,               -- NULL when no line of the batch was accepted
  last_seq BIGINT,
  high_water_seq BIGINT NOT NULL, -- store-wide cursor after this batch (== last_seq when accepted > 0)
  accepted INTEGER NOT NULL,
  rejected INTEGER NOT NULL,
  ingested_at TIMESTAMP NOT NULL
)`,
  `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(FIXTURE_SCHEMA)}`,
  // Events per target per UTC hour, so planning a replay reads a few hundred rows instead of
  // scanning the events table. Appended per ingest batch (a (tenant, target, hour) triple can have
  // several rows; readers sum them) and rewritten by retention, in the same transaction as the events.
  `CREATE TABLE IF NOT EXISTS ${EVENT_HOURS_TABLE} (
  tenant_id VARCHAR NOT NULL,
  hour TIMESTAMP NOT NULL,        -- date_trunc('hour', event_time)
  events BIGINT NOT NULL,
  target_id VARCHAR               -- as events.target_id
)`,
  `CREATE TABLE IF NOT EXISTS ${STORE_META_TABLE} (
  key VARCHAR PRIMARY KEY,
  value VARCHAR
)`,
];

/**
 * Files written before events had a target: the column is added (at the end, as the current DDL
 * has it) and the rows keep a NULL target, which no query reads, until the service names each
 * tenant's owner of them (LocalEventStore.adoptUntargetedEvents). Run in one transaction with the
 * insert of the UNTARGETED_EVENTS_KEY marker.
 */
export const ADD_TARGET_COLUMNS: readonly string[] = [
  `ALTER TABLE ${EVENTS_TABLE} ADD COLUMN IF NOT EXISTS target_id VARCHAR`,
  `ALTER TABLE ${EVENT_HOURS_TABLE} ADD COLUMN IF NOT EXISTS target_id VARCHAR`,
];
