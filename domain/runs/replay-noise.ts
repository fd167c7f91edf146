import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { alerts } from '../../db/schema';
import { documentItems, fieldValue, parseRule } from '../../sigma';
import { round } from './rounding';

/** Matched events the noise estimate looks at; beyond it the figures are scaled up from this sample. */
export const NOISE_SAMPLE_EVENTS = 10_000;
/** False-positive alerts of the rule read for the noise estimate (the most recent ones). */
const MAX_FALSE_POSITIVES = 5_000;

/**
 * Fields that name the entity an alert is about, by kind, in the order they are looked up. A match's
 * entity is (host, user, process): for each kind the value of the first of its fields the event has.
 */
export const ENTITY_FIELDS = {
  host: ['Computer', 'ComputerName', 'Hostname', 'DeviceName', 'host.name', 'host.hostname'],
  user: ['User', 'SubjectUserName', 'TargetUserName', 'AccountName', 'user.name'],
  process: ['Image', 'NewProcessName', 'ProcessName', 'process.executable', 'process.name'],
} as const;

export type NoiseEstimate = {
  sample_size: number;
  sampled: boolean;
  duplicates: number;
  entity_fields: typeof ENTITY_FIELDS;
  false_positive_matches: number;
  false_positive_fields: string[];
  false_positive_alerts_considered: number;
  noisy_alerts: number;
  noise_ratio: number;
};

/** The fields a rule's detection reads (keyword searches read none), in source order. */
export function ruleFields(content: string): string[] {
  const seen = new Set<string>();
  for (const { item } of documentItems(parseRule(content))) if (item.field !== null) seen.add(item.field);
  return [...seen];
}

/** The events of the rule's alerts dispositioned false_positive, the most recent first. */
export async function falsePositiveEvents(db: Db, tenantId: string, ruleId: string): Promise<Array<Record<string, unknown>>> {
  const fps = await db
    .select({ event: alerts.event })
    .from(alerts)
    .where(and(eq(alerts.tenantId, tenantId), eq(alerts.ruleId, ruleId), eq(alerts.disposition, 'false_positive')))
    .orderBy(sql`${alerts.createdAt} desc`)
    .limit(MAX_FALSE_POSITIVES);
  return fps.map((f) => f.event);
}

function entityKey(event: Record<string, unknown>, day: string): string | undefined {
  const parts = Object.values(ENTITY_FIELDS).map((fields) => {
    for (const f of fields) {
      const v = fieldValue(event, f);
      if (v !== undefined && v !== null) return JSON.stringify(v);
    }
    return null;
  });
  return parts.every((p) => p === null) ? undefined : JSON.stringify([day, ...parts]);
}

/**
 * The noise estimate of a rule's matches (see NoiseEstimate in the README):
 * - duplicates: matches whose (UTC day, host, user, process) entity already had a match that day;
 *   a match without any entity field is never a duplicate;
 * - false_positive_matches: matches equal, on every field the rule reads, to the event of an alert
 *   of the same rule that was dispositioned false_positive;
 * - noisy_alerts: matches that are either (each counted once); noise_ratio = noisy / matched.
 * Computed on the first NOISE_SAMPLE_EVENTS matches in time order and scaled by matched / sample.
 */
export function estimateNoise(
  events: ReadonlyArray<{ time: Date; event: Record<string, unknown> }>,
  matched: number,
  fields: string[],
  falsePositives: ReadonlyArray<Record<string, unknown>>,
): NoiseEstimate {
  const signature = (e: Record<string, unknown>) => JSON.stringify(fields.map((f) => fieldValue(e, f) ?? null));
  const fpSignatures = new Set(fields.length ? falsePositives.map(signature) : []);
  const seen = new Set<string>();
  let duplicates = 0;
  let fp = 0;
  let noisy = 0;
  for (const { time, event } of events) {
    const key = entityKey(event, time.toISOString().slice(0, 10));
    const duplicate = key !== undefined && seen.has(key);
    if (key !== undefined) seen.add(key);
    const knownFalsePositive = fpSignatures.has(signature(event));
    if (duplicate) duplicates++;
    if (knownFalsePositive) fp++;
    if (duplicate || knownFalsePositive) noisy++;
  }
  const scale = events.length > 0 ? matched / events.length : 0;
  return {
    sample_size: events.length,
    sampled: events.length < matched,
    duplicates: Math.round(duplicates * scale),
    entity_fields: ENTITY_FIELDS,
    false_positive_matches: Math.round(fp * scale),
    false_positive_fields: fields,
    false_positive_alerts_considered: falsePositives.length,
    noisy_alerts: Math.round(noisy * scale),
    noise_ratio: matched > 0 ? round((noisy * scale) / matched) : 0,
  };
}
