import fs from 'node:fs';
import path from 'node:path';
import { PGlite, parse, protocol } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import * as schema from './schema';
import { markDatabaseBusy, markDatabaseUnreachable } from './unavailable';

export type Schema = typeof schema;
/** The one database type the rest of the code sees, whichever driver is behind it. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export type Database = {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Applies pending migrations; safe to call from several processes at once. */
  migrate(): Promise<void>;
  /**
   * A named, prepared statement run directly on the driver, for the few queries on every request's
   * path where the query builder's per-call cost shows up in the API benchmark.
   */
  queryPrepared<T>(name: string, text: string, params: unknown[]): Promise<T[]>;
  /** Cheap round trip, for readiness checks. */
  ping(): Promise<void>;
  /**
   * PGlite only: the data folder as a tarball, taken between transactions while the service runs
   * (backups, written out by `writePgliteDataDir`; PostgreSQL is backed up with pg_dump).
   */
  dumpDataDir?(): Promise<Blob>;
  /**
   * PGlite only: VACUUM (ANALYZE) of the whole database. PGlite runs PostgreSQL as a single
   * backend without autovacuum, so no table is ever analyzed or vacuumed unless asked; see
   * worker/pglite-vacuum.ts. (PostgreSQL's own autovacuum does this on a server.)
   */
  vacuum?(): Promise<void>;
  /**
   * PGlite opened with `statementStats` only: the statements that took the most time (planning and
   * execution) since the last call (or since opening), busiest first, and the counters reset.
   */
  takeStatementStats?(limit: number): Promise<StatementStat[]>;
  close(): Promise<void>;
};

/**
 * One normalized statement's figures from pg_stat_statements: planning and execution time in
 * PostgreSQL (totalMs, of it planMs), not the protocol or parsing the rows in JavaScript.
 */
export type StatementStat = { query: string; calls: number; totalMs: number; planMs: number; meanMs: number; rows: number };

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

// Any fixed number works; it only has to be the same in every process that migrates this database.
const MIGRATION_LOCK_KEY = 7_424_311;

export type DatabaseOptions =
  | {
      kind: 'postgres';
      url: string;
      poolSize?: number;
      /** How long a query waits for a free connection of the pool before it is refused as busy. */
      poolWaitMs?: number;
    }
  /**
   * dataDir undefined keeps the database in memory (tests). statementStats loads pg_stat_statements
   * (DETFLOW_PGLITE_STATEMENT_STATS_MINUTES), which PostgreSQL servers configure themselves.
   */
  | { kind: 'pglite'; dataDir: string | undefined; statementStats?: boolean };

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.kind === 'postgres'
    ? openPostgres(options.url, options.poolSize ?? 20, options.poolWaitMs ?? POOL_WAIT_MS)
    : openPglite(options.dataDir, options.statementStats ?? false);
}

async function openPglite(dataDir: string | undefined, statementStats: boolean): Promise<Database> {
  if (dataDir) fs.mkdirSync(dataDir, { recursive: true });
  // PGlite names a preloaded library in the folder's postgresql.conf and cannot start that folder
  // without it: a folder once opened with statistics keeps the library, tracking nothing.
  const loadStatements = statementStats || (dataDir !== undefined && preloadsStatementStats(dataDir));
  // Its package types are ESM only, so it is imported where it is needed (and only then loaded).
  const extensions = loadStatements ? { pg_stat_statements: (await import('@electric-sql/pglite/contrib/pg_stat_statements')).pg_stat_statements } : undefined;
  const client = dataDir ? new PGlite(dataDir, { extensions }) : new PGlite({ extensions });
  await client.waitReady;
  if (statementStats) {
    await client.exec('create extension if not exists pg_stat_statements');
    // PGlite re-plans every query it is given: planning is part of what a statement costs here.
    await client.exec('set pg_stat_statements.track_planning = on');
  } else if (loadStatements) await client.exec(`set pg_stat_statements.track = 'none'`);
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  const statements = new PgliteStatements(client);
  return {
    db,
    kind: 'pglite',
    // PGlite lives inside this one process, so no other process can race the migration.
    migrate: () => migratePglite(drizzlePglite(client, { schema }), { migrationsFolder: MIGRATIONS_DIR }),
    queryPrepared: <T>(name: string, text: string, params: unknown[]) => statements.query<T>(name, text, params),
    ping: async () => {
      await client.query('select 1');
    },
    // Between transactions (and between queries, which dumpDataDir waits for), so no change is half in.
    dumpDataDir: () => client._runExclusiveTransaction(() => client.dumpDataDir('none')),
    vacuum: async () => {
      await client.exec('VACUUM (ANALYZE)');
    },
    ...(statementStats ? { takeStatementStats: (limit: number) => takeStatementStats(client, limit) } : {}),
    close: () => client.close(),
  };
}

function preloadsStatementStats(dataDir: string): boolean {
  let conf: string;
  try {
    conf = fs.readFileSync(path.join(dataDir, 'postgresql.conf'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  return /^\s*shared_preload_libraries\s*=.*pg_stat_statements/m.test(conf);
}

/** The busiest statements since the last reset (pg_stat_statements of this database), then a reset. */
async function takeStatementStats(client: PGlite, limit: number): Promise<StatementStat[]> {
  // One simple-query message (two statements): nothing runs between the read and the reset.
  const [read] = await client.exec(
    `select query, calls, total_plan_time + total_exec_time as total, total_plan_time as plan, rows from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database()) and query not like '%pg_stat_statements%'
      order by total_plan_time + total_exec_time desc limit ${Math.max(0, Math.trunc(limit))};
     select pg_stat_statements_reset();`,
  );
  return (read!.rows as Array<{ query: string; calls: string; total: number; plan: number; rows: string }>).map((r) => ({
    query: r.query,
    calls: Number(r.calls),
    totalMs: Number(r.total),
    planMs: Number(r.plan),
    meanMs: Number(r.calls) > 0 ? Number(r.total) / Number(r.calls) : 0,
    rows: Number(r.rows),
  }));
}

/** Writes a tarball from `Database.dumpDataDir` out as a PGlite data folder at `dir` (a new folder). */
export async function writePgliteDataDir(dir: string, tarball: Blob): Promise<void> {
  const copy = await PGlite.create(dir, { loadDataDir: tarball });
  await copy.close();
}

type BackendMessage = Parameters<typeof parse.parseResults>[0][number];
type PreparedStatement = { text: string; paramTypes: number[]; rowDescription: BackendMessage | undefined };

/**
 * Named prepared statements on PGlite. `PGlite.query` parses, analyses and plans its SQL on every
 * call and enters the WebAssembly backend six times (parse, describe, bind, describe, execute,
 * sync); for the queries on every API request that was most of the request's cost. Here a
 * statement is parsed once per name, and each call is one Bind + Execute + Sync message: about a
 * quarter of the CPU time of `query` for the rule read (bench/api.ts).
 *
 * Runs under the same two mutexes as `PGlite.query`, so it never interleaves with a transaction or
 * another query, and syncs to the file system afterwards as `query` does.
 */
class PgliteStatements {
  private readonly prepared = new Map<string, PreparedStatement>();

  constructor(private readonly client: PGlite) {}

  async query<T>(name: string, text: string, params: unknown[]): Promise<T[]> {
    await this.client._checkReady();
    return this.client._runExclusiveTransaction(() =>
      this.client._runExclusiveQuery(async () => {
        const statement = await this.prepare(name, text);
        const values = params.map((value, i) => {
          if (value === null || value === undefined) return null;
          const serialize = this.client.serializers[statement.paramTypes[i]!];
          return serialize ? serialize(value) : String(value);
        });
        const { messages } = await this.client.execProtocol(
          concatBytes([protocol.serialize.bind({ statement: name, values }), protocol.serialize.execute({}), protocol.serialize.sync()]),
          { syncToFs: true },
        );
        // The row description came with the statement's Describe, so no call repeats it.
        const all = statement.rowDescription ? [statement.rowDescription, ...messages] : messages;
        return parse.parseResults(all, this.client.parsers)[0]!.rows as T[];
      }),
    );
  }

  private async prepare(name: string, text: string): Promise<PreparedStatement> {
    const known = this.prepared.get(name);
    if (known?.text === text) return known;
    // A name reused for other SQL replaces its statement rather than running the old SQL.
    const close = known ? [protocol.serialize.close({ type: 'S', name })] : [];
    this.prepared.delete(name);
    const { messages } = await this.client.execProtocol(
      concatBytes([...close, protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: 'S', name }), protocol.serialize.sync()]),
      { syncToFs: false },
    );
    const statement: PreparedStatement = {
      text,
      paramTypes: parse.parseDescribeStatementResults(messages),
      rowDescription: messages.find((m) => m.name === 'rowDescription'),
    };
    this.prepared.set(name, statement);
    return statement;
  }
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Below the readiness probe's 2 s deadline, so the probe reports the database's own error. */
const CONNECT_TIMEOUT_MS = 1_500;

/**
 * How long a query waits for a connection while all of the pool's are in use (a burst of requests,
 * transactions queued on one lock): a wait, not an outage, so much longer than a connection attempt.
 */
const POOL_WAIT_MS = 10_000;

/**
 * A client whose own connection attempt is bounded by CONNECT_TIMEOUT_MS. node-postgres' pool has
 * one `connectionTimeoutMillis` for both a new connection and the wait for a free one: a single
 * value would either refuse a burst of requests after 1.5 s as the database being away, or let a
 * host that does not answer hold requests for the whole pool wait.
 */
class ConnectBoundedClient extends pg.Client {
  constructor(config?: pg.ClientConfig) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}

async function openPostgres(url: string, poolSize: number, poolWaitMs: number): Promise<Database> {
  // A server that does not answer a connection attempt (a host gone, a port dropped by a firewall)
  // fails the query in a few seconds instead of holding it until the kernel gives up: requests
  // answer 503 and readiness sees the database down within its probe's deadline.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: poolWaitMs, Client: ConnectBoundedClient });
  // A broken idle connection must not crash the process; the next query reports the problem.
  pool.on('error', () => undefined);
  markConnectFailures(pool);
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    migrate: async () => {
      // The advisory lock is per session, so the lock and the migration share one client.
      const client = await pool.connect();
      try {
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        try {
          await migratePg(drizzlePg(client, { schema }), { migrationsFolder: MIGRATIONS_DIR });
        } finally {
          await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
        }
      } finally {
        client.release();
      }
    },
    queryPrepared: async <T>(name: string, text: string, params: unknown[]) => (await pool.query<T & pg.QueryResultRow>({ name, text, values: params })).rows as T[],
    ping: async () => {
      await pool.query('select 1');
    },
    close: () => pool.end(),
  };
}

/** What pg-pool says, and only says, when a queued wait for a connection runs out. */
const POOL_WAIT_EXPIRED = /^timeout exceeded when trying to connect$/;

type ConnectCallback = (err: Error | undefined, client?: pg.PoolClient, release?: (err?: Error) => void) => void;

/**
 * Errors of getting a connection (refused, timed out: every query gets its connection here,
 * `pool.query` included) are marked as the database being unreachable, so they are told from the
 * same socket errors of other peers, and a wait for a free connection that ran out as the pool
 * being busy (see db/unavailable.ts).
 */
function markConnectFailures(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as (cb: ConnectCallback) => void;
  const mark = (err: Error) => (POOL_WAIT_EXPIRED.test(err.message) ? markDatabaseBusy(err) : markDatabaseUnreachable(err));
  const wrapped = (cb?: ConnectCallback) => {
    if (cb) return connect((err, client, release) => cb(err ? mark(err) : err, client, release));
    return new Promise<pg.PoolClient>((resolve, reject) => connect((err, client) => (err ? reject(mark(err)) : resolve(client!))));
  };
  (pool as unknown as { connect: typeof wrapped }).connect = wrapped;
}

export function databaseOptionsFromConfig(config: { databaseUrl: string | undefined; dataDir: string; pgliteStatementStatsMinutes?: number }): DatabaseOptions {
  return config.databaseUrl
    ? { kind: 'postgres', url: config.databaseUrl }
    : { kind: 'pglite', dataDir: path.join(config.dataDir, 'pglite'), statementStats: (config.pgliteStatementStatsMinutes ?? 0) > 0 };
}
