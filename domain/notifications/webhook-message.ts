import crypto from 'node:crypto';
import type { WebhookEvent } from '../../db/schema';
import { approvalButtons, type ActionsBlock } from '../integrations/slack/blocks';
import { approvalAttachment, type MattermostAttachment } from '../integrations/mattermost/buttons';

/**
 * The body a webhook receives: Slack-compatible (`text`, `blocks`; Mattermost takes `text` and
 * `attachments`) plus the structured event.
 */
export type WebhookBody = {
  text: string;
  /** Mattermost's approval buttons, when the tenant has a Mattermost integration. */
  attachments?: MattermostAttachment[];
  blocks: Array<{ type: 'section'; text: { type: 'mrkdwn'; text: string } } | { type: 'context'; elements: Array<{ type: 'mrkdwn'; text: string }> } | ActionsBlock>;
  event: WebhookEvent;
  delivery_id: string;
  tenant_id: string;
  created_at: string;
  data: Record<string, unknown>;
};

const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** One line a person reads in the chat tool; the structured `data` is for machines. */
export function summarize(event: WebhookEvent, data: Record<string, unknown>): string {
  const rule = `rule \`${str(data.rule_id)}\`${data.version !== undefined ? ` v${str(data.version)}` : ''}`;
  const target = data.target !== undefined ? ` on *${str(data.target)}*` : '';
  switch (event) {
    case 'approval.requested':
      return `:raising_hand: Approval requested for ${rule}${target}${data.projected_alerts_per_day !== undefined ? ` (projected ${str(data.projected_alerts_per_day)} alerts/day)` : ''}`;
    case 'approval.decided':
      return `:memo: Approval for ${rule}${target}: *${str(data.decision)}*${data.comment ? ` — ${str(data.comment)}` : ''}`;
    case 'deployment.succeeded':
      return `:white_check_mark: Deployed ${rule}${target}`;
    case 'deployment.failed':
      return `:x: Deployment of ${rule}${target} failed: ${str(data.error)}`;
    case 'rollback.completed':
      return `:rewind: Rolled back ${rule}${target}${data.reason ? ` — ${str(data.reason)}` : ''}`;
    case 'deployment.demoted':
      return `:arrow_down: Demoted ${rule}${target} to shadow: ${str(data.alerts)} alerts against a budget of ${str(data.budget)}/day; it raises no alert until promoted`;
    case 'deployment.promoted':
      return `:arrow_up: Promoted ${rule}${target} back to alerting${data.comment ? ` — ${str(data.comment)}` : ''}`;
    case 'replay.completed':
      return `:film_projector: Replay of ${rule}${target} completed: ${str(data.alerts)} alerts`;
    case 'shadow.completed':
      return `:ghost: Shadow run of ${rule}${target} completed: ${str(data.projected_alerts)} projected alerts`;
    case 'noise_budget.exceeded':
      return `:loud_sound: Noise budget exceeded by ${rule}${target}: ${str(data.alerts)} alerts against a budget of ${str(data.budget)}/day${data.on_exceed ? ` (${str(data.on_exceed)})` : ''}`;
    case 'rule.health_degraded':
      return `:warning: Health of ${rule}${target} is *${str(data.status)}*${Array.isArray(data.reasons) && data.reasons.length ? `: ${data.reasons.map(str).join('; ')}` : ''}`;
    case 'deployment.drifted':
      return `:construction: Drift on ${str(data.target)}: ${str(data.object)} is *${str(data.kind)}* — ${str(data.detail)}`;
    case 'webhook.test':
      return ':wave: Test notification from detflow';
  }
}

export function buildWebhookBody(input: {
  event: WebhookEvent;
  deliveryId: string;
  tenantId: string;
  createdAt: Date;
  data: Record<string, unknown>;
  /** The tenant has a Slack app whose interactivity points at detflow: buttons someone can click. */
  slackApp: boolean;
  /** The tenant's Mattermost buttons: their URL, and the key their tokens are made with. */
  mattermost?: { actionKey: string; actionsUrl: string } | undefined;
}): WebhookBody {
  const text = summarize(input.event, input.data);
  const approvalId = input.event === 'approval.requested' && typeof input.data.approval_id === 'string' ? input.data.approval_id : undefined;
  return {
    text,
    ...(input.mattermost && approvalId ? { attachments: [approvalAttachment({ text, tenantId: input.tenantId, approvalId, ...input.mattermost })] } : {}),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `detflow · ${input.event} · tenant ${input.tenantId}` }] },
      // Approve / Reject / Request changes, for a Slack app whose interactivity points at detflow.
      ...(input.slackApp && approvalId ? [approvalButtons(approvalId)] : []),
    ],
    event: input.event,
    delivery_id: input.deliveryId,
    tenant_id: input.tenantId,
    created_at: input.createdAt.toISOString(),
    data: input.data,
  };
}

/**
 * `X-Detflow-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`: binding the
 * timestamp lets receivers refuse replays of an old delivery.
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return 'sha256=' + crypto.createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}
