import crypto from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { mattermostIntegrations, slackIntegrations, webhookAttempts, webhookDeliveries, webhookSettings, type WebhookEvent } from '../../db/schema';
import type { SecretBox } from '../../config/secret-box';
import { DEFAULT_WEBHOOK_RETRY, type WebhookRetry } from '../../config/env';
import { buildWebhookBody, signWebhook } from './webhook-message';
import { FailureType } from '../../workflows/contracts';
import { noMetrics, type DomainMetrics } from '../metrics';

export type NotificationDeps = {
  db: Db;
  secrets: SecretBox;
  fetchImpl?: typeof fetch;
  now?: () => Date;
  metrics?: DomainMetrics;
  /** How deliveries are retried (DETFLOW_WEBHOOK_RETRY_*); about an hour without it. */
  webhookRetry?: WebhookRetry;
};

const TIMEOUT_MS = 10_000;

/** Webhook deliveries: recorded once per cause, sent and attempted with every attempt recorded. */
export function webhookDelivery({ db, secrets, fetchImpl = fetch, now = () => new Date(), metrics = noMetrics, webhookRetry = DEFAULT_WEBHOOK_RETRY }: NotificationDeps) {
  /**
   * Posts the receiver acknowledged whose outcome is not recorded yet (the database went away just
   * after the 2xx). The attempt that runs again, in this process, records the acknowledgement instead
   * of posting a second time; only a worker crash in that gap can repeat a delivery.
   */
  const acknowledgedUnrecorded = new Map<string, { attempt: number; statusCode: number; durationMs: number }>();

  async function recordAttempt(deliveryId: string, attempt: number, statusCode: number | null, error: string | null, durationMs: number): Promise<void> {
    await db.transaction(async (tx) => {
      await tx.insert(webhookAttempts).values({ deliveryId, attempt, statusCode, error, durationMs });
      await tx
        .update(webhookDeliveries)
        .set({
          lastStatusCode: statusCode,
          lastError: error,
          ...(error === null ? { status: 'delivered' as const, deliveredAt: sql`now()` } : {}),
        })
        .where(eq(webhookDeliveries.id, deliveryId));
    });
  }

  /** The tenant's chat apps that can take a click on an approval's buttons. */
  async function chatApps(tenantId: string) {
    const [slack] = await db.select({ t: slackIntegrations.tenantId }).from(slackIntegrations).where(eq(slackIntegrations.tenantId, tenantId));
    const [mattermost] = await db.select().from(mattermostIntegrations).where(eq(mattermostIntegrations.tenantId, tenantId));
    return { slackApp: slack !== undefined, mattermost: mattermost && { actionKey: secrets.open(mattermost.actionKey), actionsUrl: mattermost.actionsUrl } };
  }

  return {
    /** The retry schedule is the worker's configuration, which a workflow cannot read itself. */
    async webhookRetryPolicy(): Promise<WebhookRetry> {
      return webhookRetry;
    },

    /**
     * Records a notification for the tenant's webhook if it is configured, enabled and subscribed to
     * the event. Keyed by `sourceKey`, so a retried activity returns the same delivery instead of a
     * second one. Returns the delivery id, or null when nobody listens.
     */
    async recordNotification(input: { tenantId: string; event: WebhookEvent; sourceKey: string; data: Record<string, unknown> }): Promise<string | null> {
      const [settings] = await db.select().from(webhookSettings).where(eq(webhookSettings.tenantId, input.tenantId));
      if (!settings || !settings.enabled || !(settings.events.includes(input.event) || input.event === 'webhook.test')) return null;
      const id = crypto.randomUUID();
      const chat = input.event === 'approval.requested' ? await chatApps(input.tenantId) : { slackApp: false, mattermost: undefined };
      await db
        .insert(webhookDeliveries)
        .values({
          id,
          tenantId: input.tenantId,
          event: input.event,
          sourceKey: input.sourceKey,
          url: settings.url,
          status: 'pending',
          payload: buildWebhookBody({ event: input.event, deliveryId: id, tenantId: input.tenantId, createdAt: now(), data: input.data, ...chat }),
        })
        .onConflictDoNothing();
      const [row] = await db
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.tenantId, input.tenantId), eq(webhookDeliveries.sourceKey, input.sourceKey)));
      return row!.id;
    },

    /**
     * One delivery attempt, recorded whatever happens. A delivery already acknowledged is never sent
     * again, so a retried activity cannot deliver twice; a non-2xx answer or a network error throws
     * and Temporal retries with backoff.
     */
    async deliverWebhook({ deliveryId }: { deliveryId: string }, cancelled?: AbortSignal): Promise<{ statusCode: number; attempts: number }> {
      const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
      if (!delivery) throw ApplicationFailure.nonRetryable(`No webhook delivery ${deliveryId}`, FailureType.DeliveryNotFound);
      if (delivery.status === 'delivered') return { statusCode: delivery.lastStatusCode ?? 200, attempts: delivery.attempts };
      const acknowledged = acknowledgedUnrecorded.get(deliveryId);
      if (acknowledged) {
        await recordAttempt(deliveryId, acknowledged.attempt, acknowledged.statusCode, null, acknowledged.durationMs);
        acknowledgedUnrecorded.delete(deliveryId);
        metrics.webhookAttempt(true);
        return { statusCode: acknowledged.statusCode, attempts: acknowledged.attempt };
      }
      const [settings] = await db.select().from(webhookSettings).where(eq(webhookSettings.tenantId, delivery.tenantId));
      if (!settings) {
        await db.update(webhookDeliveries).set({ status: 'failed', lastError: 'the webhook was removed' }).where(eq(webhookDeliveries.id, deliveryId));
        metrics.webhookDeliveryFailed();
        throw ApplicationFailure.nonRetryable('The webhook was removed before delivery', FailureType.WebhookRemoved);
      }
      const [{ attempt }] = (await db
        .update(webhookDeliveries)
        .set({ attempts: sql`${webhookDeliveries.attempts} + 1` })
        .where(eq(webhookDeliveries.id, deliveryId))
        .returning({ attempt: webhookDeliveries.attempts })) as [{ attempt: number }];

      const body = JSON.stringify(delivery.payload);
      const timestamp = Math.floor(now().getTime() / 1000);
      const started = performance.now();
      let statusCode: number | null = null;
      let error: string | null = null;
      const abort = cancelled ? AbortSignal.any([AbortSignal.timeout(TIMEOUT_MS), cancelled]) : AbortSignal.timeout(TIMEOUT_MS);
      try {
        const res = await fetchImpl(delivery.url, {
          method: 'POST',
          signal: abort,
          redirect: 'manual',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'detflow-webhook/1',
            'x-detflow-event': delivery.event,
            'x-detflow-delivery': delivery.id,
            'x-detflow-timestamp': String(timestamp),
            'x-detflow-signature': signWebhook(secrets.open(settings.secret), timestamp, body),
          },
          body,
        });
        statusCode = res.status;
        await res.arrayBuffer().catch(() => undefined);
        if (!res.ok) error = `the receiver answered ${res.status}`;
      } catch (err) {
        error = `${(err as Error).name}: ${(err as Error).message}`;
      }
      const durationMs = Math.round(performance.now() - started);
      if (error === null) acknowledgedUnrecorded.set(deliveryId, { attempt, statusCode: statusCode!, durationMs });
      await recordAttempt(deliveryId, attempt, statusCode, error, durationMs);
      acknowledgedUnrecorded.delete(deliveryId);
      metrics.webhookAttempt(error === null);
      if (error !== null) throw ApplicationFailure.retryable(`Webhook delivery ${deliveryId} attempt ${attempt} failed: ${error}`, FailureType.WebhookDeliveryFailed);
      return { statusCode: statusCode!, attempts: attempt };
    },

    async markDeliveryFailed({ deliveryId, reason }: { deliveryId: string; reason: string }): Promise<void> {
      const failed = await db
        .update(webhookDeliveries)
        .set({ status: 'failed', lastError: reason })
        .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, 'pending')))
        .returning({ id: webhookDeliveries.id });
      // Counted once: a retried activity finds the delivery failed already and changes nothing.
      if (failed.length > 0) metrics.webhookDeliveryFailed();
    },
  };
}
