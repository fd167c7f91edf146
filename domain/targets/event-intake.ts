import type { DomainDeps } from '../deps';
import { conflict, invalidRequest, unavailable } from '../errors';
import type { Actor } from '../tenants/actor';
import { IngestBacklogFull, type IngestOptions, type IngestResult, type IngestSource } from '../../siem/local/event-store';
import { findTarget, type TargetRow } from './targets';

const LOGSOURCE_KEYS = ['product', 'category', 'service'] as const;
type LogsourceKey = (typeof LOGSOURCE_KEYS)[number];

/** Where a batch of events goes, and how its events are read. */
export type EventIntakeRequest = {
  target: string;
  /** The largest event taken, in bytes (DETFLOW_MAX_EVENT_KB); the store's default when undefined. */
  maxEventBytes: number | undefined;
  timestampField: string;
  eventIdField: string | undefined;
  /** Each logsource key: fixed for every event, or read from a field of each event (not both). */
  logsource: Record<LogsourceKey, { fixed: string | undefined; field: string | undefined }>;
};

/** A target that can take events now, and the options its event store reads them with. */
export type EventIntake = { target: TargetRow; options: IngestOptions };

/**
 * Checks that events may be sent to the target — it is the tenant's, on an environment the actor
 * may use, of a kind that takes events, held by this process — and turns the request into the
 * store's options. Nothing has been read of the events yet.
 */
export async function openEventIntake(deps: DomainDeps, auth: Actor, request: EventIntakeRequest): Promise<EventIntake> {
  const target = await findTarget(deps.database.db, auth, request.target);
  if (target.kind !== 'local') {
    // A remote SIEM ingests its own events; detflow searches them there.
    throw invalidRequest(`Target ${target.name} is a ${target.kind} target: it ingests its own events, and detflow searches them there; send events to a local target`, [
      { pointer: '/query/target', message: 'events can be sent to local targets only' },
    ]);
  }
  // The process's SIEM adapters say whether it holds the local kind's events: an API running apart
  // from the worker (the scaled topology) does not, and events stored there would be lost to detection.
  if (!deps.siem.acceptsLocalEvents) {
    throw conflict(
      `Target ${target.name} is a local target, whose events live in the process that runs the worker; this API runs apart from it (the scaled topology), so it stores no events. Send events to a detflow started with npm start (API and worker in one process); nothing was stored.`,
    );
  }
  const logsource: NonNullable<IngestOptions['logsource']> = {};
  for (const key of LOGSOURCE_KEYS) {
    const { fixed, field: from } = request.logsource[key];
    if (fixed !== undefined && from !== undefined) throw invalidRequest(`Give ${key} or ${key}_field, not both`, [{ pointer: `/query/${key}_field`, message: 'conflicts' }]);
    if (fixed !== undefined) (logsource as Record<string, unknown>)[key] = fixed;
    if (from !== undefined) (logsource as Record<string, unknown>)[key] = { field: from };
  }
  const options: IngestOptions = {
    timestampField: request.timestampField,
    logsource,
    ...(request.eventIdField ? { eventIdField: request.eventIdField } : {}),
    ...(request.maxEventBytes !== undefined ? { maxEventBytes: request.maxEventBytes } : {}),
  };
  return { target, options };
}

/** How long a sender refused for a full ingest backlog is told to wait. */
const INGEST_RETRY_AFTER_SECONDS = 2;

/** Something about a stored batch that the sender should act on; nothing was refused for it. */
export type IngestWarning = { code: 'no_logsource'; events: number; message: string };

/** What a batch stored, with the warnings about it. */
export type StoredEvents = IngestResult & { warnings: IngestWarning[] };

/**
 * The warning for events stored with no product, category or service: the store keeps them, but
 * a rule with a logsource (nearly every rule) never reads them, so nothing would ever say so.
 * How to fix it depends on how the request named the logsource: not at all, or by fields that
 * these events lack (a fixed value leaves no event without a logsource).
 */
export function noLogsourceWarning(events: number, logsource: IngestOptions['logsource']): IngestWarning | undefined {
  if (events === 0) return undefined;
  const fields = LOGSOURCE_KEYS.flatMap((key) => {
    const v = logsource?.[key];
    return typeof v === 'object' ? [`${key}_field=${v.field}`] : [];
  });
  const what = `${events} ${events === 1 ? 'event was' : 'events were'} stored with no logsource (no product, category or service), so no rule with a logsource will ever match ${events === 1 ? 'it' : 'them'}`;
  const fix =
    fields.length === 0
      ? 'Name the logsource of the batch with ?product=…&category=… (or service=…), or read it from fields of the events with ?product_field=…&category_field=… (or service_field=…)'
      : `${events === 1 ? 'It lacks' : 'They lack'} the fields named by ${fields.join(', ')}: give those fields in every event, or name the logsource of the batch with ?product=…&category=… (or service=…)`;
  return { code: 'no_logsource', events, message: `${what}. ${fix}.` };
}

/**
 * Stores a batch as the target's events (they belong to it: only rules, replays and shadows on
 * that target read them); bad lines are reported, and a batch of only bad lines is refused. The
 * answer counts the stored events by logsource and warns of events without one.
 */
export async function storeEvents(deps: DomainDeps, auth: Actor, intake: EventIntake, source: IngestSource): Promise<StoredEvents> {
  const result = await deps.siem.localStore.ingest(auth.tenantId, intake.target.id, source, intake.options).catch((err: unknown) => {
    // The writer is behind: the sender tries again shortly, as CI clients do for 503.
    if (err instanceof IngestBacklogFull) throw unavailable(`${err.message}: the writer is behind; send it again`, INGEST_RETRY_AFTER_SECONDS);
    throw err;
  });
  deps.metrics?.eventsIngested(result.accepted, result.rejected);
  if (result.accepted === 0 && result.rejected > 0) {
    throw invalidRequest(
      `No event was stored: all ${result.rejected} lines were rejected`,
      result.errors.slice(0, 100).map((e) => ({ pointer: `/body/line/${e.line}`, message: e.error })),
    );
  }
  const warning = noLogsourceWarning(result.withoutLogsource, intake.options.logsource);
  return { ...result, warnings: warning ? [warning] : [] };
}
