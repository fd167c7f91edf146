import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { logsourceApplies } from '../../sigma/ruleset';
import type { RuleLogsource as Logsource } from '../adapter';
import { rows as queryRows } from './duckdb';
import { EVENT_COLUMNS, guard, logsourceScope, targetScope, toStoredEvent } from './event-sql';
import { readCommittedCursor } from './event-queries';
import { EVENTS_TABLE } from './schema';
import type { SinceResult, StoredEvent } from './store-types';

/**
 * Many rules over one scan of a target's new events (scheduled detection of every live rule of a
 * tenant's target, decision record 0086): what `eventsSince` answers for each rule and its cursor,
 * with the events read once and matched in process instead of one SQL scan per rule.
 *
 * Exactness: the local target's meaning is its SQL over the stored JSON text; the in-process
 * evaluator agrees with it (test/sigma/exactness.test.ts) on events whose numbers survive
 * `JSON.parse` unchanged. An event with any other number (more than 15 digits, an exponent, a
 * fraction ending in 0) is matched by each rule's own SQL instead, restricted to those events.
 */

/** The rules of one scan, compiled once for the in-process evaluator. */
export interface LocalRuleset {
  /** Per rule (input order): its logsource as the store filters on it; null when it did not compile for the evaluator. */
  readonly logsources: ReadonlyArray<Logsource | null>;
  /** Input indices of the rules matching the event (logsource included). */
  match(event: Record<string, unknown>, logsource: Logsource): readonly number[];
}

/** One rule of the scan: its SQL (for the events the evaluator cannot judge exactly) and its cursor. */
export interface ScanMember {
  readonly where: string;
  readonly logsource?: Logsource;
  readonly cursor: number;
}

export interface RulesetScanOptions {
  /** Matched events returned per rule (its `matched` counts them all). */
  readonly limit: number;
  /** Events read per page (the event loop gets a turn between pages). */
  readonly pageSize?: number;
  /** Events read at most per scan; a scan that stops there answers up to the last one read. */
  readonly maxEvents?: number;
}

const PAGE_SIZE = 10_000;
const MAX_EVENTS = 400_000;

/** The events of one logsource seen by the scan, in commit order, with the running sum of their bytes. */
type LogsourceGroup = { logsource: Logsource; seqs: number[]; bytesBefore: number[]; bytes: number };

/**
 * Each member's SinceResult, or null for a member the scan did not evaluate: one the evaluator
 * refused, or one whose cursor is at or past where a scan cut short by `maxEvents` stopped.
 */
export async function rulesetSince(
  con: DuckDBConnection,
  tenantId: string,
  targetId: string,
  ruleset: LocalRuleset,
  members: readonly ScanMember[],
  options: RulesetScanOptions,
): Promise<Array<SinceResult | null>> {
  const started = performance.now();
  const pageSize = options.pageSize ?? PAGE_SIZE;
  const maxEvents = options.maxEvents ?? MAX_EVENTS;
  const upTo = await readCommittedCursor(con);
  let from = Infinity;
  members.forEach((m, i) => {
    if (ruleset.logsources[i] !== null) from = Math.min(from, Math.trunc(m.cursor));
  });
  if (from === Infinity) return members.map(() => null);

  const matched = members.map(() => 0);
  const found: StoredEvent[][] = members.map(() => []);
  const groups = new Map<string, LogsourceGroup>();
  const inexact: number[] = [];
  let last = from;
  let read = 0;
  let scanTo = upTo;
  const target = targetScope(tenantId, targetId);
  for (;;) {
    const rows = await queryRows(
      con,
      `SELECT ${EVENT_COLUMNS}, raw_bytes FROM ${EVENTS_TABLE} WHERE ${target} AND seq > ${last} AND seq <= ${upTo} ORDER BY seq LIMIT ${pageSize}`,
    );
    for (const row of rows) {
      const ev = toStoredEvent(row);
      const ls = ev.logsource;
      const key = `${ls.product ?? ''}\u0000${ls.category ?? ''}\u0000${ls.service ?? ''}\u0000${ls.product === undefined ? 0 : 1}${ls.category === undefined ? 0 : 1}${ls.service === undefined ? 0 : 1}`;
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { logsource: ls, seqs: [], bytesBefore: [], bytes: 0 }));
      group.seqs.push(ev.seq);
      group.bytesBefore.push(group.bytes);
      group.bytes += Number(row.raw_bytes);
      if (!numbersSurviveParse(String(row.raw))) {
        inexact.push(ev.seq);
        continue;
      }
      for (const i of ruleset.match(ev.event, ls)) {
        if (ev.seq <= members[i]!.cursor) continue;
        matched[i]!++;
        if (found[i]!.length < options.limit) found[i]!.push(ev);
      }
    }
    read += rows.length;
    if (rows.length > 0) last = Number(rows.at(-1)!.seq);
    if (rows.length < pageSize) break;
    if (read >= maxEvents) {
      scanTo = last;
      break;
    }
    await yieldToLoop();
  }

  const evaluated = (i: number) => ruleset.logsources[i] !== null && !(scanTo < upTo && members[i]!.cursor >= scanTo);
  // Events the evaluator cannot judge exactly: each rule's SQL over just those events.
  if (inexact.length > 0) {
    for (let i = 0; i < members.length; i++) {
      const m = members[i]!;
      if (!evaluated(i) || !inexact.some((s) => s > m.cursor)) continue;
      const rows = await queryRows(
        con,
        `SELECT ${EVENT_COLUMNS} FROM ${EVENTS_TABLE} WHERE ${target} AND seq IN (${inexact.join(',')}) AND seq > ${Math.trunc(m.cursor)}${logsourceScope(m.logsource)} AND ${guard(m.where)} ORDER BY seq`,
      );
      if (rows.length === 0) continue;
      matched[i]! += rows.length;
      found[i] = [...found[i]!, ...rows.map(toStoredEvent)].sort((a, b) => a.seq - b.seq).slice(0, options.limit);
    }
  }

  const durationMs = performance.now() - started;
  return members.map((m, i) => {
    if (!evaluated(i)) return null;
    const ruleLogsource = ruleset.logsources[i]!;
    let scanned = 0;
    let bytesScanned = 0;
    for (const g of groups.values()) {
      if (!logsourceApplies(ruleLogsource, g.logsource)) continue;
      const first = firstAfter(g.seqs, m.cursor);
      scanned += g.seqs.length - first;
      bytesScanned += g.bytes - (first < g.seqs.length ? g.bytesBefore[first]! : g.bytes);
    }
    const events = found[i]!;
    return { cursor: Math.max(scanTo, Math.trunc(m.cursor)), scanned, bytesScanned, matched: matched[i]!, durationMs, events, truncated: matched[i]! > events.length };
  });
}

/** Index of the first seq greater than `cursor` in an ascending list. */
function firstAfter(seqs: readonly number[], cursor: number): number {
  let lo = 0;
  let hi = seqs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (seqs[mid]! <= cursor) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const PLAIN_NUMBER = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/;

/**
 * Whether every number of a JSON text (outside its strings) reads back with the same digits after
 * `JSON.parse`: at most 15 significant digits, no exponent, no fraction ending in 0. Strings are
 * compared as text by both engines, so only bare numbers matter.
 */
export function numbersSurviveParse(json: string): boolean {
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < json.length && /[0-9.eE+-]/.test(json[j]!)) j++;
      const token = json.slice(i, j);
      if (!PLAIN_NUMBER.test(token) || token.replace(/[-.]/g, '').replace(/^0+/, '').length > 15) return false;
      i = j - 1;
    }
  }
  return true;
}
