import { ScheduleNotFoundError } from '@temporalio/client';
import { and, asc, count, eq, inArray } from 'drizzle-orm';
import type { DomainDeps } from '../deps';
import type { Db } from '../../db/client';
import { deployments, targets, type TargetCostModel } from '../../db/schema';
import { conflict, insufficientScope, invalidRequest, notFound } from '../errors';
import { mayUseEnvironment, type Actor } from '../tenants/actor';
import { environmentsExist } from '../tenants/tenant-service';
import { MASKED_CREDENTIAL, isCredentialKey, sealConnection, type ConnectionSettings } from './target-connection';
import { remoteKind } from '../../siem/adapters';
import { LIVE_DEPLOYMENT_STATUSES } from '../statuses';
import { sameMapping } from './target-mapping';
import { isoDurationMs } from '../../config/iso-duration';
import { workflowIds } from '../../workflows/contracts';

export type TargetRow = typeof targets.$inferSelect;

/** A target's settings as a client gives them: a named SIEM instance of a kind, in one environment. */
export type TargetSettings = {
  name: string;
  kind: TargetRow['kind'];
  environment: string;
  connection: ConnectionSettings;
  /** How often scheduled detection runs, an ISO 8601 duration. */
  detectionInterval: string;
  costModel: TargetCostModel;
};

/** Settings that say where a target's credentials are sent, or whom they are trusted to: addresses and the CA bundle. */
const ADDRESS_KEY = /(_url|_host|^url|^host|^ca_bundle)$/;

/**
 * Refuses connection settings the target's kind cannot work with, each at its own pointer, before
 * anything is stored. A credential sent back masked keeps the stored one (`hasStored`), so it is
 * checked as present.
 */
function checkConnection(kind: string, connection: ConnectionSettings, stored: Readonly<Record<string, unknown>> = {}): void {
  const hasStored = (key: string) => typeof stored[key] === 'string';
  const masked = Object.keys(connection).filter((k) => isCredentialKey(k) && connection[k] === MASKED_CREDENTIAL);
  const unknown = masked.filter((k) => !hasStored(k));
  if (unknown.length) {
    throw invalidRequest(
      `${unknown.join(', ')}: "${MASKED_CREDENTIAL}" keeps a stored credential, and this target has none under that name; give the credential itself`,
      unknown.map((k) => ({ pointer: `/body/connection/${k}`, message: 'no stored credential to keep' })),
    );
  }
  // A kept credential goes only where it went before: with a new address or CA it must be given
  // again, or a token allowed to edit the target could send the stored one to a host of its choice.
  const moved = Object.keys({ ...connection, ...stored }).filter((k) => ADDRESS_KEY.test(k) && String(connection[k] ?? '') !== String(stored[k] ?? ''));
  if (masked.length && moved.length) {
    throw invalidRequest(
      `${moved.join(', ')} changed: give ${masked.join(', ')} again (a stored credential is kept only for the addresses and CA it was given for)`,
      masked.map((k) => ({ pointer: `/body/connection/${k}`, message: 'give the credential again with the new address' })),
    );
  }
  const remote = remoteKind(kind);
  if (!remote) return;
  const probe = Object.fromEntries(Object.entries(connection).map(([k, v]) => [k, isCredentialKey(k) && v === MASKED_CREDENTIAL && hasStored(k) ? 'stored-credential' : v]));
  const parsed = remote.connection.safeParse(probe);
  if (parsed.success) return;
  throw invalidRequest(
    `The connection settings do not suit a ${kind} target: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'connection'}: ${i.message}`).join('; ')}`,
    parsed.error.issues.map((i) => ({ pointer: `/body/connection${i.path.length ? `/${i.path.join('/')}` : ''}`, message: i.message })),
  );
}

async function checkEnvironment(db: Db, auth: Actor, environment: string) {
  if ((await environmentsExist(db, auth.tenantId, [environment])).length) {
    throw invalidRequest(`No environment ${environment} in this tenant`, [{ pointer: '/body/environment', message: 'unknown environment' }]);
  }
  if (!mayUseEnvironment(auth, environment)) throw insufficientScope(`This token may not act on environment ${environment}`);
}

/** The tenant's targets on the environments the actor may use, by name. */
export async function listTargets(db: Db, auth: Actor): Promise<TargetRow[]> {
  const rows = await db.select().from(targets).where(eq(targets.tenantId, auth.tenantId)).orderBy(asc(targets.name));
  return rows.filter((r) => mayUseEnvironment(auth, r.environment));
}

/** One target of the tenant, on an environment the actor may use. */
export async function findTarget(db: Db, auth: Actor, name: string): Promise<TargetRow> {
  const [row] = await db
    .select()
    .from(targets)
    .where(and(eq(targets.tenantId, auth.tenantId), eq(targets.name, name)));
  if (!row) throw notFound(`No target ${name} in this tenant`);
  if (!mayUseEnvironment(auth, row.environment)) throw insufficientScope(`This token may not act on environment ${row.environment}`);
  return row;
}

export async function createTarget(deps: DomainDeps, auth: Actor, settings: TargetSettings): Promise<TargetRow> {
  const { db } = deps.database;
  checkConnection(settings.kind, settings.connection);
  await checkEnvironment(db, auth, settings.environment);
  const inserted = await db
    .insert(targets)
    .values({
      tenantId: auth.tenantId,
      name: settings.name,
      kind: settings.kind,
      environment: settings.environment,
      connection: sealConnection(deps.secrets, settings.connection),
      detectionInterval: settings.detectionInterval,
      costModel: settings.costModel,
    })
    .onConflictDoNothing()
    .returning();
  if (inserted.length === 0) throw conflict(`A target ${settings.name} already exists`);
  return inserted[0]!;
}

/** Replaces a target's settings; its name and kind stay what they are. */
export async function replaceTarget(deps: DomainDeps, auth: Actor, name: string, settings: TargetSettings): Promise<TargetRow> {
  const { db } = deps.database;
  const row = await findTarget(db, auth, name);
  if (settings.name !== row.name || settings.kind !== row.kind) throw conflict('A target keeps its name and kind; create a new target instead');
  checkConnection(settings.kind, settings.connection, row.connection);
  if (!sameMapping(row.kind, row.connection, settings.connection)) {
    const [live] = await db
      .select({ n: count() })
      .from(deployments)
      .where(and(eq(deployments.targetId, row.id), inArray(deployments.status, [...LIVE_DEPLOYMENT_STATUSES, 'deploying', 'pending_approval'])));
    // The live rules' queries were compiled with the old mapping: changing it under them would make
    // what runs on the SIEM differ from what every later replay, fixture test and drift check assumes.
    if (Number(live?.n ?? 0) > 0) {
      throw conflict(
        `Target ${row.name} has ${Number(live!.n)} rule(s) live or on their way; its mapping (mapping, field_map) changes what they compile to. Roll them back first, or create a target with the new mapping and move the rules to it with replay and approval`,
      );
    }
  }
  await checkEnvironment(db, auth, settings.environment);
  const [updated] = await db
    .update(targets)
    .set({
      environment: settings.environment,
      connection: sealConnection(deps.secrets, settings.connection, row.connection),
      detectionInterval: settings.detectionInterval,
      costModel: settings.costModel,
      updatedAt: new Date(),
    })
    .where(eq(targets.id, row.id))
    .returning();
  if (updated!.detectionInterval !== row.detectionInterval) await moveDetectionSchedule(deps, updated!);
  return updated!;
}

/**
 * A new detection interval applies at once to the tenant's detection schedule on the target, if it
 * has one (per-deployment schedules take it when their deployment is next deployed).
 */
async function moveDetectionSchedule(deps: DomainDeps, target: TargetRow): Promise<void> {
  const every = isoDurationMs(target.detectionInterval);
  try {
    await deps.temporal.client.schedule
      .getHandle(workflowIds.detectionBatchSchedule(target.tenantId, target.id))
      .update((s) => ({ ...s, spec: { ...s.spec, intervals: [{ every }] } }));
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/** Deletes a target that was never deployed to; the built-in one stays. */
export async function deleteTarget(db: Db, auth: Actor, name: string): Promise<void> {
  const row = await findTarget(db, auth, name);
  if (row.builtIn) throw conflict(`The built-in target ${row.name} cannot be deleted`);
  const history = await db.select({ status: deployments.status }).from(deployments).where(eq(deployments.targetId, row.id));
  if (history.some((d) => ['active', 'demoted', 'deploying', 'pending_approval'].includes(d.status))) {
    throw conflict(`Target ${row.name} has deployments in progress or active; roll them back first`);
  }
  // Deployment records are the audit trail of what ran where; a target with any is kept.
  if (history.length) throw conflict(`Target ${row.name} has a deployment history; it is kept for the record`);
  await db.delete(targets).where(eq(targets.id, row.id));
}
