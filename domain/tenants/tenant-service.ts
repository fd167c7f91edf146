import { and, asc, eq, gt } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { apiTokens, environments, targets, tenants, type TargetCostModel } from '../../db/schema';
import type { Tier } from '../../config/env';
import type { Permission } from './permissions';
import { displayPrefix, generateToken, hashToken, isWellFormedToken } from './token-format';
import { conflict, notFound } from '../errors';

export const DEFAULT_TENANT_ID = 'default';
export const DEFAULT_ENVIRONMENTS = ['dev', 'staging', 'prod'];
/** The built-in embedded SIEM every tenant gets, in its first environment. */
export const LOCAL_TARGET_NAME = 'local';

export const DEFAULT_LOCAL_COST_MODEL: TargetCostModel = {
  currency: 'USD',
  price_per_gb_scanned: 0,
  triage_minutes_per_alert: 15,
  cost_per_analyst_hour: 75,
};

export type NewTenant = { id: string; name: string; tier: Tier; environments: string[] };

/** Creates a tenant with its environments and built-in local target; false if the id is taken. */
export async function createTenant(db: Db, input: NewTenant): Promise<boolean> {
  return db.transaction(async (tx) => {
    const inserted = await tx.insert(tenants).values({ id: input.id, name: input.name, tier: input.tier }).onConflictDoNothing().returning({ id: tenants.id });
    if (inserted.length === 0) return false;
    await tx.insert(environments).values(input.environments.map((name) => ({ tenantId: input.id, name })));
    await tx.insert(targets).values({
      tenantId: input.id,
      name: LOCAL_TARGET_NAME,
      kind: 'local',
      environment: input.environments[0]!,
      costModel: DEFAULT_LOCAL_COST_MODEL,
      builtIn: true,
    });
    return true;
  });
}

export type NewToken = {
  tenantId: string;
  name: string;
  permissions: Permission[];
  environments: string[] | null;
  expiresAt: Date | null;
  createdBy: string | null;
  /** The person (or system) the token acts for. */
  principal: string;
  /** A caller-chosen token (bootstrap automation); generated when absent. */
  token?: string;
};

export type CreatedToken = { id: string; token: string; displayPrefix: string; createdAt: Date };

export async function createToken(db: Db, input: NewToken): Promise<CreatedToken> {
  const token = input.token ?? generateToken();
  if (!isWellFormedToken(token)) throw new Error('The chosen token is not a well-formed detflow token');
  const [row] = await db
    .insert(apiTokens)
    .values({
      tenantId: input.tenantId,
      name: input.name,
      displayPrefix: displayPrefix(token),
      hash: hashToken(token),
      permissions: input.permissions,
      environments: input.environments,
      expiresAt: input.expiresAt,
      createdBy: input.createdBy,
      principal: input.principal,
    })
    .returning({ id: apiTokens.id, createdAt: apiTokens.createdAt });
  return { id: row!.id, token, displayPrefix: displayPrefix(token), createdAt: row!.createdAt };
}

/** What may be shown of a token: everything but its hash. */
export type ApiKeyRecord = Pick<
  typeof apiTokens.$inferSelect,
  'id' | 'name' | 'displayPrefix' | 'tenantId' | 'permissions' | 'environments' | 'principal' | 'createdAt' | 'expiresAt' | 'revokedAt'
>;
/** A token just created: its record, and the token itself, which is shown this once. */
export type IssuedApiKey = ApiKeyRecord & { token: string };

/** Creates a token and returns it with the record a list of tokens would show. */
export async function issueApiKey(db: Db, input: NewToken): Promise<IssuedApiKey> {
  const created = await createToken(db, input);
  return {
    id: created.id,
    name: input.name,
    displayPrefix: created.displayPrefix,
    tenantId: input.tenantId,
    permissions: input.permissions,
    environments: input.environments,
    principal: input.principal,
    createdAt: created.createdAt,
    expiresAt: input.expiresAt,
    revokedAt: null,
    token: created.token,
  };
}

export async function environmentsExist(db: Db, tenantId: string, names: string[]): Promise<string[]> {
  const rows = await db.select({ name: environments.name }).from(environments).where(eq(environments.tenantId, tenantId));
  const known = new Set(rows.map((r) => r.name));
  return names.filter((n) => !known.has(n));
}

/** The principal of the bootstrap token: the service operator who installed detflow. */
export const BOOTSTRAP_PRINCIPAL = 'bootstrap';

export const ALL_PERMISSIONS: Permission[] = ['rules:read', 'rules:write', 'events:write', 'deploy', 'approve', 'admin', 'operator'];

/**
 * First start only: creates the `default` tenant and its admin token (every permission, operator
 * included). Returns the token so the caller can print it once; null when the tenant already existed.
 */
export async function ensureBootstrap(db: Db, options: { tier: Tier; token: string | undefined }): Promise<string | null> {
  const created = await createTenant(db, {
    id: DEFAULT_TENANT_ID,
    name: 'Default tenant',
    tier: options.tier,
    environments: DEFAULT_ENVIRONMENTS,
  });
  if (!created) {
    // A fixed bootstrap token given after the first start is still honoured, so automation that
    // sets DETFLOW_BOOTSTRAP_TOKEN keeps working across data resets of one side only.
    if (options.token) await ensureFixedToken(db, options.token);
    return null;
  }
  const { token } = await createToken(db, { ...BOOTSTRAP_TOKEN, ...(options.token ? { token: options.token } : {}) });
  return token;
}

/** The bootstrap token: the default tenant's, every permission (operator included), every environment, no expiry. */
const BOOTSTRAP_TOKEN = {
  tenantId: DEFAULT_TENANT_ID,
  name: 'bootstrap admin',
  permissions: ALL_PERMISSIONS,
  environments: null,
  expiresAt: null,
  createdBy: null,
  principal: BOOTSTRAP_PRINCIPAL,
};

async function ensureFixedToken(db: Db, token: string): Promise<void> {
  const existing = await db
    .select({ id: apiTokens.id })
    .from(apiTokens)
    .where(and(eq(apiTokens.hash, hashToken(token)), eq(apiTokens.tenantId, DEFAULT_TENANT_ID)));
  if (existing.length > 0) return;
  await createToken(db, { ...BOOTSTRAP_TOKEN, token });
}

/** A tenant with its environment names, in the order they were created. */
export type TenantRecord = { tenant: typeof tenants.$inferSelect; environments: string[] };

export async function findTenant(db: Db, id: string): Promise<TenantRecord | undefined> {
  const [row] = await db.select().from(tenants).where(eq(tenants.id, id));
  if (!row) return undefined;
  const envs = await db
    .select({ name: environments.name })
    .from(environments)
    .where(eq(environments.tenantId, id))
    .orderBy(asc(environments.createdAt), asc(environments.name));
  return { tenant: row, environments: envs.map((e) => e.name) };
}

/**
 * Tenant management is the service operator's: creates a tenant with its environments (each once)
 * and its first admin token, which holds every permission but `operator` and acts for
 * `admin@<tenant>`. It is the tenant's root: not capped by the operator token's expiry (nobody
 * could mint the tenant another one).
 */
export async function createTenantWithAdmin(db: Db, input: NewTenant, createdBy: string): Promise<{ tenant: TenantRecord; adminKey: IssuedApiKey }> {
  const created = await createTenant(db, { ...input, environments: [...new Set(input.environments)] });
  if (!created) throw conflict(`A tenant ${input.id} already exists`);
  const permissions = ALL_PERMISSIONS.filter((p) => p !== 'operator');
  const adminKey = await issueApiKey(db, {
    tenantId: input.id,
    name: 'tenant admin',
    permissions,
    environments: null,
    expiresAt: null,
    createdBy,
    principal: `admin@${input.id}`,
  });
  return { tenant: (await findTenant(db, input.id))!, adminKey };
}

/** Tenants by id, after the id a previous page ended at. */
export async function listTenants(db: Db, page: { after: string | undefined; limit: number }): Promise<{ items: TenantRecord[]; more: boolean }> {
  const rows = await db
    .select({ id: tenants.id })
    .from(tenants)
    .where(page.after ? gt(tenants.id, page.after) : undefined)
    .orderBy(asc(tenants.id))
    .limit(page.limit + 1);
  const items = await Promise.all(rows.slice(0, page.limit).map(async (r) => (await findTenant(db, r.id))!));
  return { items, more: rows.length > page.limit };
}

export type TenantChanges = { name?: string | undefined; tier?: Tier | undefined; retentionDays?: number | undefined };

export async function updateTenant(db: Db, id: string, changes: TenantChanges): Promise<TenantRecord> {
  const updated = await db
    .update(tenants)
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.tier !== undefined ? { tier: changes.tier } : {}),
      ...(changes.retentionDays !== undefined ? { retentionDays: changes.retentionDays } : {}),
    })
    .where(eq(tenants.id, id))
    .returning({ id: tenants.id });
  if (updated.length === 0) throw notFound(`No tenant ${id}`);
  return (await findTenant(db, id))!;
}
