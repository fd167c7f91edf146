import type { DayCount, RuleLogsource as Logsource } from '../adapter';

/** The local event store's public shapes (see event-store.ts). */

/** A logsource attribute: a fixed value for the whole batch, or the name of a field of each event. */
export type LogsourceValue = string | { readonly field: string };

export interface IngestOptions {
  /** Field holding the event time (see event-time.ts for accepted forms). */
  readonly timestampField: string;
  readonly logsource?: { readonly product?: LogsourceValue; readonly category?: LogsourceValue; readonly service?: LogsourceValue };
  /** Field holding the event id; events without it (or without this option) get a generated UUID. */
  readonly eventIdField?: string;
  /** How many line errors are listed (all are counted); default 1000. */
  readonly maxReportedErrors?: number;
  /**
   * The largest event, in UTF-8 bytes, of an NDJSON line or a JSON array element; a larger one is
   * rejected by its line number (and the rest of its line is skipped unread); default 1 MiB.
   */
  readonly maxEventBytes?: number;
}

export interface LineError {
  readonly line: number;
  readonly error: string;
}

/** How many of a batch's stored events have one logsource (lower-cased, as stored; null where none was given). */
export interface LogsourceCount {
  readonly product: string | null;
  readonly category: string | null;
  readonly service: string | null;
  readonly events: number;
}

export interface IngestResult {
  readonly batchId: string;
  readonly accepted: number;
  readonly rejected: number;
  /**
   * The accepted events by logsource, most events first, at most `MAX_REPORTED_LOGSOURCES` of them
   * plus the group without any logsource whenever it exists; their events add up to `accepted`
   * unless `logsourcesTruncated`.
   */
  readonly logsources: LogsourceCount[];
  readonly logsourcesTruncated: boolean;
  /** Accepted events with no product, no category and no service: a rule with a logsource never reads them. */
  readonly withoutLogsource: number;
  /** Rejected lines in line order, at most `maxReportedErrors` of them. */
  readonly errors: LineError[];
  readonly errorsTruncated: boolean;
  /** Cursor range the accepted events received; null when none was accepted. */
  readonly firstSeq: number | null;
  readonly lastSeq: number | null;
  /** Store-wide cursor after this batch. */
  readonly cursor: number;
  readonly durationMs: number;
}

export interface StoredEvent {
  readonly seq: number;
  readonly eventId: string;
  readonly time: Date;
  readonly logsource: Logsource;
  readonly event: Record<string, unknown>;
}

export interface WindowCount {
  readonly matched: number;
  /** Events of the tenant in the window (and logsource, when given): what the rule was evaluated on. */
  readonly scanned: number;
  /** Sum of the raw JSON sizes of the scanned events: what a SIEM billing by data scanned would count. */
  readonly bytesScanned: number;
  /** Days of the window with at least one scanned event, in order. */
  readonly perDay: DayCount[];
  readonly durationMs: number;
}

export interface WindowSearch extends WindowCount {
  /** Matched events in time order, at most `limit`. */
  readonly events: StoredEvent[];
  readonly truncated: boolean;
}

export interface SinceResult {
  /** Pass this back as `cursor` next time; it covers every event committed before the call. */
  readonly cursor: number;
  readonly scanned: number;
  /** Sum of the raw JSON sizes of the scanned events (see WindowCount). */
  readonly bytesScanned: number;
  readonly matched: number;
  readonly durationMs: number;
  /** Matched events in cursor order, at most `limit`. */
  readonly events: StoredEvent[];
  readonly truncated: boolean;
}

export interface TenantStats {
  readonly events: number;
  readonly bytes: number;
  readonly firstEventTime: Date | null;
  readonly lastEventTime: Date | null;
  readonly lastIngestedAt: Date | null;
}

/** What a rule's detection sees of a fixture table. */
export interface FixtureTable {
  /** Qualified table name, same shape as the events table. */
  readonly name: string;
  /** 1-based positions of the fixture events the WHERE expression matches, ascending. */
  matching(where: string): Promise<number[]>;
}

export interface LocalEventStoreOptions {
  /** DuckDB database file (created when missing), or ':memory:'. */
  readonly path: string;
  /** DuckDB memory_limit, e.g. '1GB'; DuckDB's default (80% of RAM) when absent. */
  readonly memoryLimit?: string;
  /** DuckDB worker threads; DuckDB's default (all cores) when absent. */
  readonly threads?: number;
  /**
   * Longest time an open group commit waits, with nothing to write, for ingest batches still
   * being read, to share their transaction (see group-commit.ts); default 1000 ms, 0 to never wait.
   * A batch is acknowledged when its group commits.
   */
  readonly groupCommitWaitMs?: number;
  /**
   * Most ingest batches under way at once (being read, or waiting for the writer); a batch beyond
   * it is refused at once with IngestBacklogFull, before anything of it is read. Default 32; 0 for
   * no limit.
   */
  readonly maxPendingBatches?: number;
}
