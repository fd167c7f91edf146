import { eq } from 'drizzle-orm';
import type { DomainDeps } from '../../deps';
import type { Db } from '../../../db/client';
import { slackIntegrations, type SlackReviewer } from '../../../db/schema';
import { invalidRequest, notFound } from '../../errors';
import type { Actor } from '../../tenants/actor';
import { checkReviewerKeys, refuseDuplicateReviewers } from '../chat-reviewers';

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
  refuseDuplicateReviewers(request.reviewers, (r) => `${r.team_id}/${r.user_id}`, 'Slack user');
  await checkReviewerKeys(db, auth.tenantId, request.reviewers);
  const signingSecret = request.signingSecret !== undefined ? deps.secrets.seal(request.signingSecret) : existing!.signingSecret;
  const values = { tenantId: auth.tenantId, signingSecret, reviewers: request.reviewers, updatedAt: new Date() };
  const [row] = await db.insert(slackIntegrations).values(values).onConflictDoUpdate({ target: slackIntegrations.tenantId, set: values }).returning();
  return row!;
}

export async function deleteSlackIntegration(db: Db, auth: Actor): Promise<void> {
  const removed = await db.delete(slackIntegrations).where(eq(slackIntegrations.tenantId, auth.tenantId)).returning({ t: slackIntegrations.tenantId });
  if (removed.length === 0) throw notFound('No Slack app is configured for this tenant');
}
