import { ParentClosePolicy, log, patched, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import type { NotificationActivities } from '../activities/notifications';
import type { WebhookEvent } from '../db/schema';
import { KIND, TENANT, workflowIds, FailureType } from './contracts';
import { notifyRunMetadata } from './run-summaries';
import { trackSteps } from './current-step';

export type NotifyInput = { tenantId: string; event: WebhookEvent; sourceKey: string; data: Record<string, unknown> };
export type NotifyResult = { deliveryId: string | null; delivered: boolean; attempts: number; error: string | null };

const bookkeeping = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

// The schedule until mid-2026 (and the default): about an hour of retries before a delivery is given up.
const LEGACY_RETRY = { firstSeconds: 1, maxSeconds: 300, maxAttempts: 20 };

function deliveryActivities(retry: { firstSeconds: number; maxSeconds: number; maxAttempts: number }) {
  return proxyActivities<NotificationActivities>({
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: Math.round(retry.firstSeconds * 1000),
      backoffCoefficient: 2,
      maximumInterval: Math.round(retry.maxSeconds * 1000),
      maximumAttempts: retry.maxAttempts,
      nonRetryableErrorTypes: [FailureType.DeliveryNotFound, FailureType.WebhookRemoved],
    },
  });
}

/** Records one notification for the tenant's webhook and delivers it, retrying until it is acknowledged. */
export async function Notify(input: NotifyInput): Promise<NotifyResult> {
  const step = trackSteps();
  step('recording the notification');
  const deliveryId = await bookkeeping.recordNotification(input);
  if (!deliveryId) {
    step('done: nothing to deliver (no webhook takes this event)');
    return { deliveryId: null, delivered: false, attempts: 0, error: null };
  }
  // Runs started before the schedule was configurable replay without the extra activity.
  const retry = patched('webhook-retry-config') ? await bookkeeping.webhookRetryPolicy() : LEGACY_RETRY;
  return deliver(deliveryId, retry, step);
}

/** Sends a recorded delivery again (same id, same body) after it was given up: `POST .../deliveries/{id}/redeliver`. */
export async function Redeliver(input: { deliveryId: string }): Promise<NotifyResult> {
  const step = trackSteps();
  step(`looking up the retry schedule for ${input.deliveryId}`);
  return deliver(input.deliveryId, await bookkeeping.webhookRetryPolicy(), step);
}

async function deliver(deliveryId: string, retry: typeof LEGACY_RETRY, step: (step: string) => void): Promise<NotifyResult> {
  step(`delivering ${deliveryId} (retried with backoff while the receiver does not acknowledge)`);
  try {
    const { attempts } = await deliveryActivities(retry).deliverWebhook({ deliveryId });
    return { deliveryId, delivered: true, attempts, error: null };
  } catch (err) {
    const reason = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    log.warn('webhook delivery given up', { deliveryId, reason });
    await bookkeeping.markDeliveryFailed({ deliveryId, reason });
    return { deliveryId, delivered: false, attempts: 0, error: reason };
  }
}

/**
 * Sends a notification from another workflow without waiting for it: the delivery runs as its own
 * child run (abandoned on parent close), so a receiver that is down never holds up a deployment.
 */
export async function notifyInBackground(input: Omit<NotifyInput, 'sourceKey'> & { step: string }): Promise<void> {
  const { workflowId } = workflowInfo();
  const sourceKey = `${workflowId}#${input.step}`;
  const notice: NotifyInput = { tenantId: input.tenantId, event: input.event, sourceKey, data: input.data };
  await startChild(Notify, {
    workflowId: workflowIds.notify(input.tenantId, input.event, workflowId, input.step),
    args: [notice],
    // User metadata rides on the command but is not part of what replay compares.
    ...notifyRunMetadata(notice),
    parentClosePolicy: ParentClosePolicy.ABANDON,
    typedSearchAttributes: [
      { key: TENANT, value: input.tenantId },
      { key: KIND, value: 'notify' },
    ],
  });
}
