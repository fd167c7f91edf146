import { ParentClosePolicy, log, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
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

// A receiver that is down gets retried with backoff for about an hour before we give up.
const delivery = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 20,
    nonRetryableErrorTypes: [FailureType.DeliveryNotFound, FailureType.WebhookRemoved],
  },
});

/** Records one notification for the tenant's webhook and delivers it, retrying until it is acknowledged. */
export async function Notify(input: NotifyInput): Promise<NotifyResult> {
  const step = trackSteps();
  step('recording the notification');
  const deliveryId = await bookkeeping.recordNotification(input);
  if (!deliveryId) {
    step('done: nothing to deliver (no webhook takes this event)');
    return { deliveryId: null, delivered: false, attempts: 0, error: null };
  }
  step(`delivering ${deliveryId} (retried with backoff while the receiver does not acknowledge)`);
  try {
    const { attempts } = await delivery.deliverWebhook({ deliveryId });
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
