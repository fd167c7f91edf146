import type { RuleLogsource as Logsource, TimeWindow } from '../adapter';
import { sqlLiteral } from './fields';
import type { StoredEvent } from './store-types';

/** SQL fragments over the events table shared by the store's reads and writes, and its row mapping. */

/** Columns toStoredEvent reads. */
export const EVENT_COLUMNS = `seq, event_id, epoch_us(event_time) AS t_us, ls_product, ls_category, ls_service, raw`;

export function toStoredEvent(r: Record<string, unknown>): StoredEvent {
  const logsource: { product?: string; category?: string; service?: string } = {};
  if (r.ls_product !== null) logsource.product = String(r.ls_product);
  if (r.ls_category !== null) logsource.category = String(r.ls_category);
  if (r.ls_service !== null) logsource.service = String(r.ls_service);
  return {
    seq: Number(r.seq),
    eventId: String(r.event_id),
    time: new Date(Number(r.t_us) / 1000),
    logsource,
    event: JSON.parse(String(r.raw)) as Record<string, unknown>,
  };
}

/** A NULL from the rule (a missing field) counts as no match. */
export function guard(where: string): string {
  return `coalesce((${where}), false)`;
}

export function isWholeHour(d: Date): boolean {
  return d.getTime() % 3_600_000 === 0;
}

export function timeLiteral(d: Date, name: string): string {
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw new RangeError(`window ${name} is not a valid date`);
  return `TIMESTAMP '${d.toISOString().replace('T', ' ').replace('Z', '')}'`;
}

/** Tenant + target filter: the events sent to one target of one tenant. */
export function targetScope(tenantId: string, targetId: string): string {
  requireText(tenantId, 'tenantId');
  requireText(targetId, 'targetId');
  return `tenant_id = ${sqlLiteral(tenantId)} AND target_id = ${sqlLiteral(targetId)}`;
}

/**
 * Tenant + target + window (+ logsource) filter. Bounds are inlined as literals (built from Date
 * values, so nothing user-supplied reaches the SQL text) so DuckDB can skip row groups by their min/max.
 */
export function scope(tenantId: string, targetId: string, window: TimeWindow, logsource?: Logsource): string {
  const target = targetScope(tenantId, targetId);
  const from = timeLiteral(window.from, 'from');
  const to = timeLiteral(window.to, 'to');
  if (window.from.getTime() >= window.to.getTime()) throw new RangeError(`window from (${window.from.toISOString()}) must be before to (${window.to.toISOString()})`);
  return `${target} AND event_time >= ${from} AND event_time < ${to}${logsourceScope(logsource)}`;
}

export function logsourceScope(logsource?: Logsource): string {
  if (!logsource) return '';
  let sql = '';
  if (logsource.product !== undefined) sql += ` AND ls_product = ${sqlLiteral(logsource.product.toLowerCase())}`;
  if (logsource.category !== undefined) sql += ` AND ls_category = ${sqlLiteral(logsource.category.toLowerCase())}`;
  if (logsource.service !== undefined) sql += ` AND ls_service = ${sqlLiteral(logsource.service.toLowerCase())}`;
  return sql;
}

export function requireText(value: string, name: string): void {
  if (typeof value !== 'string' || value.trim() === '') throw new RangeError(`${name} must be a non-empty string`);
}
