import type { WebhookRow } from '../../domain/notifications/webhook-settings';
import type { DeliveryWithAttempts } from '../../domain/notifications/webhook-deliveries';

/** The webhook as shown: a secret is always set, and never returned. */
export function webhookView(row: WebhookRow) {
  return { url: row.url, events: row.events, enabled: row.enabled, secret_set: true, updated_at: row.updatedAt.toISOString() };
}

export function deliveryView({ delivery: d, attempts }: DeliveryWithAttempts) {
  return {
    id: d.id,
    event: d.event,
    url: d.url,
    status: d.status,
    attempts: attempts.map((a) => ({ attempt: a.attempt, at: a.at.toISOString(), status_code: a.statusCode, error: a.error, duration_ms: a.durationMs })),
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    delivered_at: d.deliveredAt?.toISOString() ?? null,
    payload: d.payload,
  };
}
