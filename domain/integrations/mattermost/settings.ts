import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { DomainDeps } from '../../deps';
import type { Db } from '../../../db/client';
import { mattermostIntegrations, type MattermostReviewer } from '../../../db/schema';
import { notFound } from '../../errors';
import type { Actor } from '../../tenants/actor';
import { checkReviewerKeys, refuseDuplicateReviewers } from '../chat-reviewers';

/** The tenant's Mattermost buttons: the key their tokens are made with (sealed, never shown) and who may decide. */
export type MattermostIntegrationRow = typeof mattermostIntegrations.$inferSelect;

export async function findMattermostIntegration(db: Db, tenantId: string): Promise<MattermostIntegrationRow> {
  const [row] = await db.select().from(mattermostIntegrations).where(eq(mattermostIntegrations.tenantId, tenantId));
  if (!row) throw notFound('No Mattermost integration is configured for this tenant');
  return row;
}

/**
 * Sets the tenant's Mattermost integration. The action key is made here the first time and kept
 * after, unless `rotateActionKey` asks for a new one (buttons already posted then stop working).
 * Each Mattermost user maps to one live token of this tenant that holds `approve`.
 */
export async function putMattermostIntegration(
  deps: DomainDeps,
  auth: Actor,
  request: { reviewers: MattermostReviewer[]; actionsUrl: string; rotateActionKey: boolean },
): Promise<MattermostIntegrationRow> {
  const { db } = deps.database;
  refuseDuplicateReviewers(request.reviewers, (r) => r.user_id, 'Mattermost user');
  await checkReviewerKeys(db, auth.tenantId, request.reviewers);
  const [existing] = await db.select().from(mattermostIntegrations).where(eq(mattermostIntegrations.tenantId, auth.tenantId));
  const actionKey = existing && !request.rotateActionKey ? existing.actionKey : deps.secrets.seal(crypto.randomBytes(32).toString('base64url'));
  const values = { tenantId: auth.tenantId, actionKey, actionsUrl: request.actionsUrl, reviewers: request.reviewers, updatedAt: new Date() };
  const [row] = await db.insert(mattermostIntegrations).values(values).onConflictDoUpdate({ target: mattermostIntegrations.tenantId, set: values }).returning();
  return row!;
}

export async function deleteMattermostIntegration(db: Db, auth: Actor): Promise<void> {
  const removed = await db.delete(mattermostIntegrations).where(eq(mattermostIntegrations.tenantId, auth.tenantId)).returning({ t: mattermostIntegrations.tenantId });
  if (removed.length === 0) throw notFound('No Mattermost integration is configured for this tenant');
}
