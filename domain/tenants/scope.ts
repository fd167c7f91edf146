import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client';
import { alerts, approvals, deployments, environments, replays, ruleTestRuns, shadowRuns, targets } from '../../db/schema';
import { insufficientScope, notFound } from '../errors';
import { mayUseEnvironment, type Actor } from './actor';

/**
 * Environment scope: a token limited to some environments sees and touches only the objects of
 * those environments. An object's environments are its target's (an approval's, all its targets').
 * Objects outside the token's environments are treated as objects of another tenant: not found.
 */

/** The kinds of object a request names by id (or, for a target, by name). */
export type ScopedObject = 'deployment' | 'approval' | 'replay' | 'shadow' | 'alert' | 'rule-test' | 'target' | 'environment';

const LABEL: Record<ScopedObject, string> = {
  deployment: 'deployment',
  approval: 'approval',
  replay: 'replay',
  shadow: 'shadow evaluation',
  alert: 'alert',
  'rule-test': 'rule test run',
  target: 'target',
  environment: 'environment',
};

/** The environments of the tenant's object, or undefined when the tenant has no such object. */
async function environmentsOf(db: Db, tenantId: string, object: ScopedObject, key: string): Promise<string[] | undefined> {
  const viaTarget = async (table: typeof deployments | typeof replays | typeof shadowRuns | typeof alerts | typeof ruleTestRuns) => {
    const rows: Array<{ environment: string }> = await db
      .select({ environment: targets.environment })
      .from(table as typeof deployments)
      .innerJoin(targets, eq(targets.id, table.targetId))
      .where(and(eq(table.id, key), eq(table.tenantId, tenantId)));
    return rows.length ? rows.map((r) => r.environment) : undefined;
  };
  switch (object) {
    case 'deployment':
      return viaTarget(deployments);
    case 'replay':
      return viaTarget(replays);
    case 'shadow':
      return viaTarget(shadowRuns);
    case 'alert':
      return viaTarget(alerts);
    case 'rule-test':
      return viaTarget(ruleTestRuns);
    case 'target': {
      const [row] = await db
        .select({ environment: targets.environment })
        .from(targets)
        .where(and(eq(targets.tenantId, tenantId), eq(targets.name, key)));
      return row ? [row.environment] : undefined;
    }
    case 'environment': {
      const [row] = await db
        .select({ name: environments.name })
        .from(environments)
        .where(and(eq(environments.tenantId, tenantId), eq(environments.name, key)));
      return row ? [row.name] : undefined;
    }
    case 'approval': {
      const [row] = await db
        .select({ names: approvals.targets })
        .from(approvals)
        .where(and(eq(approvals.id, key), eq(approvals.tenantId, tenantId)));
      if (!row) return undefined;
      if (row.names.length === 0) return [];
      const rows = await db
        .select({ environment: targets.environment })
        .from(targets)
        .where(and(eq(targets.tenantId, tenantId), inArray(targets.name, row.names)));
      return rows.map((r) => r.environment);
    }
  }
}

/** A list's condition: the target environment column lies in the actor's environments (none for an unlimited token). */
export function inActorEnvironments(actor: Actor, environment: PgColumn): SQL | undefined {
  if (actor.environments === null) return undefined;
  return actor.environments.length ? inArray(environment, [...actor.environments]) : sql`false`;
}

/** Refuses (not found) an object the actor's tenant does not have, or that lies outside its environments. */
export async function requireObjectInScope(db: Db, actor: Actor, object: ScopedObject, key: string): Promise<void> {
  const environments = await environmentsOf(db, actor.tenantId, object, key);
  if (environments === undefined || !environments.every((e) => mayUseEnvironment(actor, e))) {
    throw notFound(`No ${LABEL[object]} ${key} in this tenant`);
  }
}

/**
 * Refuses (insufficient scope) targets named in a request that lie outside the actor's
 * environments. A name the tenant has no target for is left to the use case, which answers 404.
 */
export async function requireTargetsInScope(db: Db, actor: Actor, names: readonly string[]): Promise<void> {
  if (actor.environments === null || names.length === 0) return;
  const rows = await db
    .select({ name: targets.name, environment: targets.environment })
    .from(targets)
    .where(and(eq(targets.tenantId, actor.tenantId), inArray(targets.name, [...names])));
  const outside = rows.find((r) => !mayUseEnvironment(actor, r.environment));
  if (outside) throw insufficientScope(`This token may not act on environment ${outside.environment} (target ${outside.name})`);
}

/** Refuses an environment named in a request (a new target's) that lies outside the actor's. */
export function requireEnvironmentInScope(actor: Actor, environment: string): void {
  if (!mayUseEnvironment(actor, environment)) throw insufficientScope(`This token may not act on environment ${environment}`);
}

/** Settings that span every environment (the webhook, the audit log) need a token scoped to all of them. */
export function requireEveryEnvironment(actor: Actor): void {
  if (actor.environments !== null) {
    throw insufficientScope(`This operation spans every environment of the tenant; this token is limited to ${actor.environments.join(', ') || 'no environment'}`);
  }
}
