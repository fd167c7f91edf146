import { and, asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { ApiDeps } from '../context';
import { deployments, targets } from '../../db/schema';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { DURATION, isoDurationField } from '../http/iso-duration';
import { ProblemSchema } from '../http/problem';
import { conflict, insufficientScope, invalidRequest, notFound } from '../../domain/errors';
import { mayUseEnvironment, type Actor } from '../../domain/tenants/actor';
import { environmentsExist } from '../../domain/tenants/tenant-service';

/** Keys of `connection` that hold credentials: sealed at rest, never returned. */
const SECRET_KEYS = /^(token|password|api_key|apikey|client_secret|secret|hec_token|shared_key)$/i;

const CostModel = openapi(
  z
    .object({
      currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as USD'),
      price_per_gb_scanned: z.number().min(0),
      triage_minutes_per_alert: z.number().min(0),
      cost_per_analyst_hour: z.number().min(0),
    })
    .strict(),
  'CostModel',
);

/** How often scheduled detection runs: a Temporal Schedule interval, from a second to a day. */
const detectionInterval = isoDurationField('PT5M', { min: DURATION.SECOND, max: DURATION.DAY });

const TargetBody = openapi(
  z
    .object({
      name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lowercase letters, digits, _ and -'),
      kind: z.enum(['local', 'splunk', 'elastic', 'sentinel']),
      environment: z.string().min(1).max(63),
      connection: z.record(z.string().max(100), z.union([z.string().max(4096), z.number(), z.boolean()])).default({}),
      detection_interval: detectionInterval.default('PT5M'),
      cost_model: CostModel,
    })
    .strict(),
  'TargetRequest',
);

const Target = openapi(
  z.object({
    name: z.string(),
    kind: z.enum(['local', 'splunk', 'elastic', 'sentinel']),
    environment: z.string(),
    connection: z.record(z.string(), z.unknown()).describe('Credentials are shown as "********"'),
    detection_interval: z.string(),
    cost_model: CostModel,
    built_in: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
  'Target',
);
const TargetList = openapi(z.object({ items: z.array(Target) }), 'TargetList');
const NameParams = z.object({ name: z.string().min(1).max(63) }).strict();

type TargetRow = typeof targets.$inferSelect;

export function targetView(row: TargetRow) {
  const connection = Object.fromEntries(Object.entries(row.connection).map(([k, v]) => [k, SECRET_KEYS.test(k) ? '********' : v]));
  return {
    name: row.name,
    kind: row.kind,
    environment: row.environment,
    connection,
    detection_interval: row.detectionInterval,
    cost_model: row.costModel,
    built_in: row.builtIn,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Targets: named SIEM instances of a kind, in one environment of the tenant (admin). */
export function targetRoutes(deps: ApiDeps) {
  const { db } = deps.database;

  async function validate(auth: Actor, body: z.infer<typeof TargetBody>) {
    if ((await environmentsExist(db, auth.tenantId, [body.environment])).length) {
      throw invalidRequest(`No environment ${body.environment} in this tenant`, [{ pointer: '/body/environment', message: 'unknown environment' }]);
    }
    if (!mayUseEnvironment(auth, body.environment)) throw insufficientScope(`This token may not act on environment ${body.environment}`);
  }

  const sealConnection = (connection: Record<string, string | number | boolean>, previous: Record<string, unknown> = {}) =>
    Object.fromEntries(
      Object.entries(connection).map(([k, v]) => {
        if (!SECRET_KEYS.test(k)) return [k, v];
        // "********" sent back unchanged keeps the stored credential.
        if (v === '********' && typeof previous[k] === 'string') return [k, previous[k]];
        return [k, deps.secrets.seal(String(v))];
      }),
    );

  async function find(auth: Actor, name: string) {
    const [row] = await db.select().from(targets).where(and(eq(targets.tenantId, auth.tenantId), eq(targets.name, name)));
    if (!row) throw notFound(`No target ${name} in this tenant`);
    if (!mayUseEnvironment(auth, row.environment)) throw insufficientScope(`This token may not act on environment ${row.environment}`);
    return row;
  }

  return [
    defineRoute({
      method: 'get',
      path: '/settings/targets',
      operationId: 'listTargets',
      summary: "The tenant's targets",
      tag: 'settings',
      permission: 'admin',
      responses: { 200: { description: 'The targets, by name', schema: TargetList } },
      handler: async ({ auth }) => {
        const rows = await db.select().from(targets).where(eq(targets.tenantId, auth.tenantId)).orderBy(asc(targets.name));
        return { status: 200, body: { items: rows.filter((r) => mayUseEnvironment(auth, r.environment)).map(targetView) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/settings/targets',
      operationId: 'createTarget',
      summary: 'Create a target',
      tag: 'settings',
      permission: 'admin',
      body: TargetBody,
      responses: { 201: { description: 'The target', schema: Target }, 409: { description: 'A target of that name exists', schema: ProblemSchema } },
      handler: async ({ body, auth }) => {
        await validate(auth, body);
        const inserted = await db
          .insert(targets)
          .values({
            tenantId: auth.tenantId,
            name: body.name,
            kind: body.kind,
            environment: body.environment,
            connection: sealConnection(body.connection),
            detectionInterval: body.detection_interval,
            costModel: body.cost_model,
          })
          .onConflictDoNothing()
          .returning();
        if (inserted.length === 0) throw conflict(`A target ${body.name} already exists`);
        return { status: 201, headers: { Location: `/api/v1/settings/targets/${body.name}` }, body: targetView(inserted[0]!) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/settings/targets/{name}',
      operationId: 'getTarget',
      summary: 'One target',
      tag: 'settings',
      permission: 'admin',
      params: NameParams,
      responses: { 200: { description: 'The target', schema: Target }, 404: { description: 'No such target', schema: ProblemSchema } },
      handler: async ({ params, auth }) => ({ status: 200, body: targetView(await find(auth, params.name)) }),
    }),
    defineRoute({
      method: 'put',
      path: '/settings/targets/{name}',
      operationId: 'updateTarget',
      summary: "Replace a target's settings (its name and kind stay)",
      tag: 'settings',
      permission: 'admin',
      params: NameParams,
      body: TargetBody,
      responses: {
        200: { description: 'The target', schema: Target },
        404: { description: 'No such target', schema: ProblemSchema },
        409: { description: 'The name or kind differs from the stored target', schema: ProblemSchema },
      },
      handler: async ({ params, body, auth }) => {
        const row = await find(auth, params.name);
        if (body.name !== row.name || body.kind !== row.kind) throw conflict('A target keeps its name and kind; create a new target instead');
        await validate(auth, body);
        const [updated] = await db
          .update(targets)
          .set({
            environment: body.environment,
            connection: sealConnection(body.connection, row.connection),
            detectionInterval: body.detection_interval,
            costModel: body.cost_model,
            updatedAt: new Date(),
          })
          .where(eq(targets.id, row.id))
          .returning();
        return { status: 200, body: targetView(updated!) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/settings/targets/{name}',
      operationId: 'deleteTarget',
      summary: 'Delete a target that was never deployed to',
      tag: 'settings',
      permission: 'admin',
      params: NameParams,
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'No such target', schema: ProblemSchema },
        409: { description: 'Built in, or it has deployments', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const row = await find(auth, params.name);
        if (row.builtIn) throw conflict(`The built-in target ${row.name} cannot be deleted`);
        const history = await db.select({ status: deployments.status }).from(deployments).where(eq(deployments.targetId, row.id));
        if (history.some((d) => ['active', 'demoted', 'deploying', 'pending_approval'].includes(d.status))) {
          throw conflict(`Target ${row.name} has deployments in progress or active; roll them back first`);
        }
        // Deployment records are the audit trail of what ran where; a target with any is kept.
        if (history.length) throw conflict(`Target ${row.name} has a deployment history; it is kept for the record`);
        await db.delete(targets).where(eq(targets.id, row.id));
        return { status: 204 };
      },
    }),
  ];
}
