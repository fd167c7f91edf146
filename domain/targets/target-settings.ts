import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { environments, settingsVersions, targets } from '../../db/schema';
import { insufficientScope, notFound } from '../errors';
import { mayUseEnvironment, type Actor } from '../tenants/actor';
import { findTarget, type TargetRow } from './targets';
import { resolvedPlaceholders, type Placeholders } from './placeholders';

/** A target's placeholder values: its own, its environment's defaults, what rules are compiled with, and the settings version. */
export type TargetPlaceholders = {
  target: string;
  environment: string;
  version: number;
  placeholders: Placeholders;
  environment_defaults: Placeholders;
  resolved: Placeholders;
};

export type EnvironmentPlaceholders = { environment: string; version: number; placeholders: Placeholders };

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

async function findEnvironment(db: Db | Tx, auth: Actor, name: string) {
  const [row] = await db
    .select()
    .from(environments)
    .where(and(eq(environments.tenantId, auth.tenantId), eq(environments.name, name)));
  if (!row) throw notFound(`No environment ${name} in this tenant`);
  if (!mayUseEnvironment(auth, name)) throw insufficientScope(`This token may not act on environment ${name}`);
  return row;
}

export async function targetPlaceholders(db: Db, auth: Actor, name: string): Promise<TargetPlaceholders> {
  const row = await findTarget(db, auth, name);
  const env = await findEnvironment(db, auth, row.environment);
  return viewOf(row, env.placeholders);
}

function viewOf(row: TargetRow, defaults: Placeholders): TargetPlaceholders {
  return {
    target: row.name,
    environment: row.environment,
    version: row.settingsVersion,
    placeholders: row.placeholders,
    environment_defaults: defaults,
    resolved: row.resolvedPlaceholders,
  };
}

export async function environmentPlaceholders(db: Db, auth: Actor, name: string): Promise<EnvironmentPlaceholders> {
  const env = await findEnvironment(db, auth, name);
  return { environment: env.name, version: env.settingsVersion, placeholders: env.placeholders };
}

/** Records a new current version of a subject's settings; the one before is superseded. */
export async function recordSettingsVersion(
  tx: Tx,
  auth: Actor,
  entry: { subject: 'target' | 'environment'; name: string; version: number; placeholders: Placeholders; mapping?: { mapping?: string; field_map?: string } | null },
  status: 'current' | 'proposed' = 'current',
  approvalId: string | null = null,
): Promise<void> {
  if (status === 'current') {
    await tx
      .update(settingsVersions)
      .set({ status: 'superseded', decidedAt: new Date() })
      .where(
        and(
          eq(settingsVersions.tenantId, auth.tenantId),
          eq(settingsVersions.subject, entry.subject),
          eq(settingsVersions.name, entry.name),
          eq(settingsVersions.status, 'current'),
        ),
      );
  }
  await tx.insert(settingsVersions).values({
    tenantId: auth.tenantId,
    subject: entry.subject,
    name: entry.name,
    version: entry.version,
    placeholders: entry.placeholders,
    mapping: entry.mapping ?? null,
    status,
    approvalId,
    requestedBy: auth.tokenId,
    requestedByPrincipal: auth.principal,
    ...(status === 'current' ? { decidedAt: new Date() } : {}),
  });
}

/** Makes a target's placeholder values current: a new settings version, recorded, with the resolved values rewritten. */
export async function applyTargetPlaceholders(tx: Tx, auth: Actor, row: TargetRow, placeholders: Placeholders): Promise<TargetRow> {
  const [env] = await tx
    .select({ placeholders: environments.placeholders })
    .from(environments)
    .where(and(eq(environments.tenantId, row.tenantId), eq(environments.name, row.environment)));
  const [updated] = await tx
    .update(targets)
    .set({
      placeholders,
      resolvedPlaceholders: resolvedPlaceholders(env?.placeholders ?? {}, placeholders),
      settingsVersion: sql`${targets.settingsVersion} + 1`,
      updatedAt: new Date(),
    })
    .where(eq(targets.id, row.id))
    .returning();
  await recordSettingsVersion(tx, auth, { subject: 'target', name: row.name, version: updated!.settingsVersion, placeholders });
  return updated!;
}

/**
 * Replaces an environment's default placeholder values; every target of the environment has its
 * resolved values rewritten in the same transaction (a target's own values still win).
 */
export async function setEnvironmentPlaceholders(db: Db, auth: Actor, name: string, placeholders: Placeholders): Promise<EnvironmentPlaceholders> {
  await findEnvironment(db, auth, name);
  return db.transaction(async (tx) => {
    const [{ version }] = (await tx
      .update(environments)
      .set({ placeholders, settingsVersion: sql`${environments.settingsVersion} + 1` })
      .where(and(eq(environments.tenantId, auth.tenantId), eq(environments.name, name)))
      .returning({ version: environments.settingsVersion })) as [{ version: number }];
    const members = await tx
      .select()
      .from(targets)
      .where(and(eq(targets.tenantId, auth.tenantId), eq(targets.environment, name)));
    for (const t of members) {
      const resolved = resolvedPlaceholders(placeholders, t.placeholders);
      if (canonical(resolved) === canonical(t.resolvedPlaceholders)) continue;
      // What the target's rules compile with changed: a new version of the target's settings too.
      const [updated] = await tx
        .update(targets)
        .set({ resolvedPlaceholders: resolved, settingsVersion: sql`${targets.settingsVersion} + 1`, updatedAt: new Date() })
        .where(eq(targets.id, t.id))
        .returning({ version: targets.settingsVersion });
      await recordSettingsVersion(tx, auth, { subject: 'target', name: t.name, version: updated!.version, placeholders: t.placeholders });
    }
    await recordSettingsVersion(tx, auth, { subject: 'environment', name, version, placeholders });
    return { environment: name, version, placeholders };
  });
}

/** A placeholder map as comparable text (names sorted; the order of values is kept, it is what was set). */
export function canonical(values: Readonly<Placeholders>): string {
  return JSON.stringify(
    Object.keys(values)
      .sort()
      .map((k) => [k, values[k]]),
  );
}
