import { eq } from 'drizzle-orm';
import type { DomainDeps } from '../deps';
import type { Db } from '../../db/client';
import { webhookSettings } from '../../db/schema';
import { invalidRequest, notFound } from '../errors';
import type { Actor } from '../tenants/actor';

/** One webhook per tenant (Slack-compatible body, HMAC-signed); its secret is stored sealed. */
export type WebhookRow = typeof webhookSettings.$inferSelect;

export type WebhookRequest = {
  url: string;
  /** The HMAC key; required the first time, the stored one is kept when absent. */
  secret: string | undefined;
  events: string[];
  enabled: boolean;
};

export async function findWebhook(db: Db, auth: Actor): Promise<WebhookRow> {
  const [row] = await db.select().from(webhookSettings).where(eq(webhookSettings.tenantId, auth.tenantId));
  if (!row) throw notFound('No webhook is configured for this tenant');
  return row;
}

/** Sets the tenant's webhook, sealing a new secret. */
export async function putWebhook(deps: DomainDeps, auth: Actor, request: WebhookRequest): Promise<WebhookRow> {
  const { db } = deps.database;
  const [existing] = await db.select().from(webhookSettings).where(eq(webhookSettings.tenantId, auth.tenantId));
  if (!existing && request.secret === undefined) {
    throw invalidRequest('A secret is required when the webhook is first set', [{ pointer: '/body/secret', message: 'required' }]);
  }
  const secret = request.secret !== undefined ? deps.secrets.seal(request.secret) : existing!.secret;
  const values = { tenantId: auth.tenantId, url: request.url, secret, events: [...new Set(request.events)], enabled: request.enabled, updatedAt: new Date() };
  const [row] = await db.insert(webhookSettings).values(values).onConflictDoUpdate({ target: webhookSettings.tenantId, set: values }).returning();
  return row!;
}

/** Removes the tenant's webhook; pending deliveries are given up. */
export async function deleteWebhook(db: Db, auth: Actor): Promise<void> {
  const removed = await db.delete(webhookSettings).where(eq(webhookSettings.tenantId, auth.tenantId)).returning({ t: webhookSettings.tenantId });
  if (removed.length === 0) throw notFound('No webhook is configured for this tenant');
}
