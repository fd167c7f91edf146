/**
 * Whether an error means the database could not be reached or dropped the connection, rather than
 * refusing the statement: a condition that passes (503 and retry later), not a bug (500) and not a
 * refusal of the request. Drivers and the ORM wrap what the server or the socket said, so the
 * chain of causes is searched.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (const e of causesOf(err)) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (e[UNREACHABLE] === true || e[BUSY] === true) return true;
    if (typeof code === 'string' && (SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    if (typeof message === 'string' && CLIENT_MESSAGES.some((m) => m.test(message))) return true;
  }
  return false;
}

/**
 * Set on an error of connecting to the database (a refused or timed-out socket looks the same
 * whoever made it: a webhook receiver or a SIEM that refuses a connection is not the database).
 */
const UNREACHABLE = Symbol('detflow.databaseUnreachable');

export function markDatabaseUnreachable<E>(err: E): E {
  if (err && typeof err === 'object') Object.defineProperty(err, UNREACHABLE, { value: true });
  return err;
}

/**
 * Set on a query's wait for a free connection of the pool that ran out: the database answers, but
 * every connection was in use for the whole wait (the service is overloaded). Such an error is
 * also `isDatabaseUnavailable` (it passes; runs wait for it as for an outage), and the API tells
 * the two apart (see api/http/pipeline.ts).
 */
const BUSY = Symbol('detflow.databaseBusy');

export function markDatabaseBusy<E>(err: E): E {
  if (err && typeof err === 'object') Object.defineProperty(err, BUSY, { value: true });
  return err;
}

export function isDatabaseBusy(err: unknown): boolean {
  for (const e of causesOf(err)) if (e[BUSY] === true) return true;
  return false;
}

/** The error and its chain of causes, as far as they are objects (at most 8 deep). */
function* causesOf(err: unknown): Generator<Record<PropertyKey, unknown>> {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    yield e as Record<PropertyKey, unknown>;
  }
}

/**
 * SQLSTATEs of a server going away or not yet accepting: admin_shutdown, crash_shutdown,
 * cannot_connect_now (starting up or shutting down), database_dropped; class 08 (connection
 * exceptions) is matched by prefix.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '57P04']);

/** What node-postgres says of itself, without a code: a socket ended. (The pool's wait running out is marked busy.) */
const CLIENT_MESSAGES = [/^Connection terminated/, /Client has encountered a connection error/];
