import crypto from 'node:crypto';

/**
 * Mattermost's interactive message buttons for an approval notification (a message attachment's
 * `actions`, each with an `integration` URL and `context`). Mattermost does not sign the callbacks
 * it sends when a button is clicked; it keeps each button's context on the server (posts sent to
 * clients have it stripped) and sends it back with the click. So the context carries a token that
 * only detflow can make: an HMAC of the tenant, approval and decision under the tenant's action key.
 */

export type MattermostDecision = 'approve' | 'reject' | 'request_changes';

/** Button ids: Mattermost routes a click by the action id, which must be alphanumeric. */
const BUTTONS: ReadonlyArray<{ id: string; decision: MattermostDecision; name: string; style: 'primary' | 'danger' | 'default' }> = [
  { id: 'detflowapprove', decision: 'approve', name: 'Approve', style: 'primary' },
  { id: 'detflowreject', decision: 'reject', name: 'Reject', style: 'danger' },
  { id: 'detflowrequestchanges', decision: 'request_changes', name: 'Request changes', style: 'default' },
];

export const MATTERMOST_DECISIONS: ReadonlySet<string> = new Set(BUTTONS.map((b) => b.decision));

/** What each button sends back in `context`. */
export type ButtonContext = { approval_id: string; decision: MattermostDecision; token: string };

export function actionToken(actionKey: string, tenantId: string, approvalId: string, decision: string): string {
  return crypto.createHmac('sha256', actionKey).update(`detflow-mattermost-action:v1:${tenantId}:${approvalId}:${decision}`).digest('hex');
}

/** Whether `token` is the one detflow made for this tenant, approval and decision (constant time). */
export function isActionToken(actionKey: string, tenantId: string, approvalId: string, decision: string, token: string): boolean {
  const expected = Buffer.from(actionToken(actionKey, tenantId, approvalId, decision));
  const given = Buffer.from(token);
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

export type MattermostAttachment = {
  fallback: string;
  text: string;
  color?: string;
  actions?: Array<{ id: string; type: 'button'; name: string; style: string; integration: { url: string; context: ButtonContext } }>;
};

/**
 * The attachment that carries Approve / Reject / Request changes under the notification (whose
 * `text` is the post's message).
 */
export function approvalAttachment(input: { text: string; tenantId: string; approvalId: string; actionKey: string; actionsUrl: string }): MattermostAttachment {
  return {
    fallback: input.text,
    text: 'Decide as the detflow reviewer you are mapped to; the requester cannot decide their own change.',
    actions: BUTTONS.map((b) => ({
      id: b.id,
      type: 'button' as const,
      name: b.name,
      style: b.style,
      integration: {
        url: input.actionsUrl,
        context: { approval_id: input.approvalId, decision: b.decision, token: actionToken(input.actionKey, input.tenantId, input.approvalId, b.decision) },
      },
    })),
  };
}

const PAST: Record<MattermostDecision, string> = { approve: 'Approved', reject: 'Rejected', request_changes: 'Changes requested' };
const COLOR: Record<MattermostDecision, string> = { approve: '#2e7d32', reject: '#c62828', request_changes: '#f9a825' };

/**
 * The callback's answer once decided: the post's message is kept and its attachment replaced (so
 * the buttons go) by who decided, as the detflow principal and the Mattermost user.
 */
export function decidedUpdate(input: { message: string; decision: MattermostDecision; principal: string; userName: string; at: Date }) {
  const verdict = `**${PAST[input.decision]}** by ${input.principal} (@${input.userName}) at ${input.at.toISOString()}`;
  return {
    update: { message: input.message, props: { attachments: [{ fallback: `${PAST[input.decision]} by ${input.principal}`, text: verdict, color: COLOR[input.decision] }] } },
    ephemeral_text: `detflow: ${PAST[input.decision].toLowerCase()} as ${input.principal}`,
  };
}
