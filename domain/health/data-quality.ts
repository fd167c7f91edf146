import { documentItems, isSigmaError, lowerCasedLogsource, parseRule, type SigmaValue } from '../../sigma';
import type { FieldPresenceResult, RuleLogsource } from '../../siem/adapter';
import type { HealthThresholds } from './health-settings';
import { worstGrade, type Grade, type HealthStatus } from './health-status';

/** What a rule needs of its target's events: its logsource and the fields its detection reads. */
export type RuleNeeds = { logsource: RuleLogsource; fields: string[] };

/**
 * Parses a stored rule version once and reads, from the model, the logsource and every field its
 * detection names (a field compared with another, `fieldref`, needs both). Keyword searches name
 * no field. Undefined when the text no longer parses (it did when it was stored).
 */
export function ruleNeeds(content: string): RuleNeeds | undefined {
  if (needsByContent.has(content)) return needsByContent.get(content);
  const needs = readRuleNeeds(content);
  // Every detection pass asks again for the same few rule versions: parsed once per process.
  if (needsByContent.size >= NEEDS_KEPT) needsByContent.clear();
  needsByContent.set(content, needs);
  return needs;
}

const needsByContent = new Map<string, RuleNeeds | undefined>();
const NEEDS_KEPT = 5_000;

function readRuleNeeds(content: string): RuleNeeds | undefined {
  let rule;
  try {
    rule = parseRule(content);
  } catch (err) {
    if (isSigmaError(err)) return undefined;
    throw err;
  }
  const fields = new Set<string>();
  for (const { item } of documentItems(rule)) {
    if (item.field !== null) fields.add(item.field);
    for (const f of referencedFields(item.values)) fields.add(f);
  }
  return { logsource: lowerCasedLogsource(rule.logsource), fields: [...fields].sort() };
}

/** Fields other fields are compared with (`fieldref`), expansions looked into. */
function referencedFields(values: readonly SigmaValue[]): string[] {
  return values.flatMap((v) => (v.kind === 'fieldref' ? [v.field] : v.kind === 'expansion' ? referencedFields(v.values) : []));
}

/** `product: windows, category: process_creation`, as a rule author writes it. */
export function describeLogsource(l: RuleLogsource): string {
  const parts = (['product', 'category', 'service'] as const).filter((k) => l[k] !== undefined).map((k) => `${k}: ${l[k]}`);
  return parts.length ? parts.join(', ') : 'any logsource';
}

export type FieldQuality = { field: string; eventsWithField: number; share: number | null; status: HealthStatus; reason: string | null };
export type LogsourceQuality = {
  target: string;
  logsource: RuleLogsource;
  /** Events of the logsource in the last `freshness_hours`. */
  events: number | null;
  newestEventTime: Date | null;
  status: HealthStatus;
  reason: string | null;
  fields: FieldQuality[];
};

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/**
 * Grades what the target answered: no event of the logsource in the recent hours fails (the feed
 * is down or mislabelled); otherwise each field by the share of those events that carry it, and the
 * logsource by its worst field.
 */
export function gradeLogsource(target: string, needs: RuleNeeds, found: FieldPresenceResult, t: HealthThresholds): LogsourceQuality {
  const which = `\`${describeLogsource(needs.logsource)}\``;
  if (found.events === 0) {
    const newest = found.newestEventTime ? ` (newest event ${found.newestEventTime.toISOString()})` : ' (no event ever)';
    return {
      target,
      logsource: needs.logsource,
      events: 0,
      newestEventTime: found.newestEventTime,
      status: 'failing',
      reason: `no event in the last ${t.freshness_hours} h carries ${which} on target ${target}${newest}`,
      fields: needs.fields.map((field) => ({ field, eventsWithField: 0, share: null, status: 'no_data', reason: 'no recent event to look at' })),
    };
  }
  const fields = needs.fields.map((field): FieldQuality => {
    const n = found.fields[field] ?? 0;
    const share = n / found.events;
    const status: Grade = share >= t.field_share_ok ? 'ok' : share < t.field_share_failing ? 'failing' : 'degraded';
    const reason = status === 'ok' ? null : `only ${n} of ${found.events} events of ${which} in the last ${t.freshness_hours} h carry \`${field}\` (${pct(share)})`;
    return { field, eventsWithField: n, share, status, reason };
  });
  const status = worstGrade(fields.map((f) => f.status)) ?? 'ok';
  const worst = fields.find((f) => f.status === status && f.reason !== null);
  return { target, logsource: needs.logsource, events: found.events, newestEventTime: found.newestEventTime, status, reason: worst?.reason ?? null, fields };
}

/** A target that cannot tell (its adapter lacks the capability), or a rule that no longer parses. */
export function unknownQuality(target: string, logsource: RuleLogsource, fields: readonly string[], reason: string): LogsourceQuality {
  return {
    target,
    logsource,
    events: null,
    newestEventTime: null,
    status: 'unknown',
    reason,
    fields: fields.map((field) => ({ field, eventsWithField: 0, share: null, status: 'unknown', reason })),
  };
}
