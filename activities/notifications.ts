import { Context } from '@temporalio/activity';
import { webhookDelivery, type NotificationDeps } from '../domain/notifications/webhook-delivery';

/** Webhook deliveries (domain/notifications/webhook-delivery.ts) as activities. */
export function createNotificationActivities(deps: NotificationDeps) {
  const deliveries = webhookDelivery(deps);
  return {
    recordNotification: deliveries.recordNotification,
    webhookRetryPolicy: deliveries.webhookRetryPolicy,
    /** An attempt stops when Temporal cancels the activity (the run was cancelled or timed out). */
    deliverWebhook: (input: { deliveryId: string }) => deliveries.deliverWebhook(input, Context.current().cancellationSignal),
    markDeliveryFailed: deliveries.markDeliveryFailed,
  };
}

export type NotificationActivities = ReturnType<typeof createNotificationActivities>;
