import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { healthSettings, type HealthThresholds } from '../../db/schema';
import type { DomainDeps } from '../deps';
import { invalidRequest } from '../errors';
import type { Actor } from '../tenants/actor';

export type { HealthThresholds } from '../../db/schema';

/**
 * The thresholds a tenant that set none gets (docs/decisions/0054): a field most rules read is
 * carried by (nearly) every event of its logsource, so a share under 95 % is worth a look and under
 * 50 % the rule is mostly blind; a day without any event of the logsource means the feed is down.
 * One failed run in twenty is a rule to look at; one in four is broken.
 */
export const DEFAULT_HEALTH_THRESHOLDS: HealthThresholds = {
  field_share_ok: 0.95,
  field_share_failing: 0.5,
  freshness_hours: 24,
  error_rate_degraded: 0.05,
  error_rate_failing: 0.25,
};

/** The tenant's thresholds: what it set, the defaults for the rest. */
export async function readHealthThresholds(db: Pick<Db, 'select'>, tenantId: string): Promise<HealthThresholds> {
  const [row] = await db.select({ t: healthSettings.thresholds }).from(healthSettings).where(eq(healthSettings.tenantId, tenantId));
  return { ...DEFAULT_HEALTH_THRESHOLDS, ...(row?.t ?? {}) };
}

export async function findHealthSettings(db: Db, auth: Actor): Promise<{ thresholds: HealthThresholds; updatedAt: Date | null }> {
  const [row] = await db.select().from(healthSettings).where(eq(healthSettings.tenantId, auth.tenantId));
  return { thresholds: { ...DEFAULT_HEALTH_THRESHOLDS, ...(row?.thresholds ?? {}) }, updatedAt: row?.updatedAt ?? null };
}

/** Sets the tenant's thresholds (fields left out keep their defaults); the degraded bound must not be worse than the failing one. */
export async function putHealthSettings(deps: DomainDeps, auth: Actor, given: Partial<HealthThresholds>): Promise<{ thresholds: HealthThresholds; updatedAt: Date | null }> {
  const thresholds = { ...DEFAULT_HEALTH_THRESHOLDS, ...given };
  const errors: Array<{ pointer: string; message: string }> = [];
  if (thresholds.field_share_failing > thresholds.field_share_ok) {
    errors.push({ pointer: '/body/field_share_failing', message: `must not exceed field_share_ok (${thresholds.field_share_ok})` });
  }
  if (thresholds.error_rate_degraded > thresholds.error_rate_failing) {
    errors.push({ pointer: '/body/error_rate_degraded', message: `must not exceed error_rate_failing (${thresholds.error_rate_failing})` });
  }
  if (errors.length) throw invalidRequest('The health thresholds contradict each other', errors);
  const updatedAt = (deps.now ?? (() => new Date()))();
  const values = { tenantId: auth.tenantId, thresholds, updatedAt };
  await deps.database.db.insert(healthSettings).values(values).onConflictDoUpdate({ target: healthSettings.tenantId, set: { thresholds, updatedAt } });
  return { thresholds, updatedAt };
}
