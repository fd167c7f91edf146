import { and, eq, inArray } from 'drizzle-orm';
import type { DomainDeps } from '../../deps';
import type { Db } from '../../../db/client';
import { apiTokens, slackIntegrations, type SlackReviewer } from '../../../db/schema';
import { invalidRequest, notFound } from '../../errors';
import { effectivePermissions, type Actor } from '../../tenants/actor';

/** The tenant's Slack app: its signing secret (sealed, never shown) and who may decide from Slack. */
export type SlackIntegrationRow = typeof slackIntegrations.$inferSelect;

export type SlackIntegrationRequest = {
  /** Required the first time; the stored one is kept when absent. */
  signingSecret: string | undefined;
  reviewers: SlackReviewer[];
};

export async function findSlackIntegration(db: Db, tenantId: string): Promise<SlackIntegrationRow> {
  const [row] = await db.select().from(slackIntegrations).where(eq(slackIntegrations.tenantId, tenantId));
  if (!row) throw notFound('No Slack app is configured for this tenant');
  return row;
}

/**
 * Sets the tenant's Slack app. Each Slack user maps to one token of this tenant that holds
 * `approve` and is live: decisions from Slack are that token's, so four-eyes compares its principal.
 */
export async function putSlackIntegration(deps: DomainDeps, auth: Actor, request: SlackIntegrationRequest): Promise<SlackIntegrationRow> {
  const { db } = deps.database;
  const [existing] = await db.select().from(slackIntegrations).where(eq(slackIntegrations.tenantId, auth.tenantId));
  if (!existing && request.signingSecret === undefined) {
    throw invalidRequest('A signing secret is required when the Slack app is first set', [{ pointer: '/body/signing_secret', message: 'required' }]);
  }
  const seen = new Set<string>();
  request.reviewers.forEach((r, i) => {
    const key = `${r.team_id}/${r.user_id}`;
    if (seen.has(key)) throw invalidRequest(`Slack user ${key} is mapped twice`, [{ pointer: `/body/reviewers/${i}`, message: 'duplicate Slack user' }]);
    seen.add(key);
  });
  const ids = [...new Set(request.reviewers.map((r) => r.api_key_id))];
  const tokens = ids.length
    ? await db
        .select()
        .from(apiTokens)
        .where(and(eq(apiTokens.tenantId, auth.tenantId), inArray(apiTokens.id, ids)))
    : [];
  const byId = new Map(tokens.map((t) => [t.id, t]));
  request.reviewers.forEach((r, i) => {
    const token = byId.get(r.api_key_id);
    const pointer = `/body/reviewers/${i}/api_key_id`;
    if (!token) throw invalidRequest(`No API key ${r.api_key_id} in this tenant`, [{ pointer, message: 'unknown API key' }]);
    if (token.revokedAt) throw invalidRequest(`API key ${r.api_key_id} is revoked`, [{ pointer, message: 'revoked' }]);
    if (!effectivePermissions(token.permissions).has('approve')) {
      throw invalidRequest(`API key ${r.api_key_id} does not hold the approve permission`, [{ pointer, message: 'lacks approve' }]);
    }
  });
  const signingSecret = request.signingSecret !== undefined ? deps.secrets.seal(request.signingSecret) : existing!.signingSecret;
  const values = { tenantId: auth.tenantId, signingSecret, reviewers: request.reviewers, updatedAt: new Date() };
  const [row] = await db.insert(slackIntegrations).values(values).onConflictDoUpdate({ target: slackIntegrations.tenantId, set: values }).returning();
  return row!;
}

export async function deleteSlackIntegration(db: Db, auth: Actor): Promise<void> {
  const removed = await db.delete(slackIntegrations).where(eq(slackIntegrations.tenantId, auth.tenantId)).returning({ t: slackIntegrations.tenantId });
  if (removed.length === 0) throw notFound('No Slack app is configured for this tenant');
}
