/** Block Kit pieces for approvals decided from Slack: the buttons, and the message once decided. */

export type SlackDecision = 'approve' | 'reject' | 'request_changes';

/** `action_id` of each button; the button's `value` is the approval id. */
export const SLACK_ACTIONS: Record<string, SlackDecision> = {
  'detflow.approve': 'approve',
  'detflow.reject': 'reject',
  'detflow.request_changes': 'request_changes',
};

export type ActionsBlock = {
  type: 'actions';
  block_id: string;
  elements: Array<{ type: 'button'; action_id: string; value: string; text: { type: 'plain_text'; text: string }; style?: 'primary' | 'danger' }>;
};

export function approvalButtons(approvalId: string): ActionsBlock {
  const button = (actionId: string, text: string, style?: 'primary' | 'danger') => ({
    type: 'button' as const,
    action_id: actionId,
    value: approvalId,
    text: { type: 'plain_text' as const, text },
    ...(style ? { style } : {}),
  });
  return {
    type: 'actions',
    block_id: `detflow-approval-${approvalId}`,
    elements: [button('detflow.approve', 'Approve', 'primary'), button('detflow.reject', 'Reject', 'danger'), button('detflow.request_changes', 'Request changes')],
  };
}

const PAST: Record<SlackDecision, string> = { approve: 'Approved', reject: 'Rejected', request_changes: 'Changes requested' };

/**
 * The notification as it reads once decided, for `response_url` with `replace_original`: the
 * original text, the buttons gone, and who decided (the detflow principal and the Slack user).
 */
export function decidedMessage(input: { originalText: string; decision: SlackDecision; principal: string; slackUserId: string; at: Date }) {
  const verdict = `*${PAST[input.decision]}* by ${input.principal} (<@${input.slackUserId}>) at ${input.at.toISOString()}`;
  return {
    replace_original: true,
    text: `${input.originalText} — ${PAST[input.decision]} by ${input.principal}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: input.originalText } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: verdict }] },
    ],
  };
}

/** A note only the clicking user sees, leaving the message (and its buttons) as it was. */
export function refusalNote(detail: string) {
  return { response_type: 'ephemeral', replace_original: false, text: `:no_entry: detflow refused this: ${detail}` };
}
