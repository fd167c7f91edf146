import type { DomainDeps } from '../../deps';
import { invalidRequest, Refusal } from '../../errors';
import type { Actor } from '../../tenants/actor';
import { requireObjectInScope } from '../../tenants/scope';
import { decideApproval } from '../../approvals/decide';
import { summarize } from '../../notifications/webhook-message';
import { reviewerActor } from '../chat-reviewers';
import { findMattermostIntegration } from './settings';
import { PostActionRequest } from './action-request';
import { MATTERMOST_DECISIONS, decidedUpdate, isActionToken, type MattermostDecision } from './buttons';

/** A click whose context detflow did not make for this tenant: nothing in it is acted on. */
export class MattermostRequestRefused extends Error {
  override name = 'MattermostRequestRefused';
}

/** What the caller learns as the click is taken, for the audit row (filled even when refused). */
export type MattermostActionTrace = { mattermostUser?: string; actor?: Actor; refusal?: Refusal };

/** The answer Mattermost shows: the post updated, and/or a note only the clicking user sees. */
export type PostActionResponse = { update?: { message: string; props: Record<string, unknown> }; ephemeral_text?: string };

/**
 * Takes a button click from a Mattermost approval notification. Mattermost does not sign its
 * callbacks, so the button's context token (made by detflow for this tenant, approval and decision)
 * is the authentication; without a valid one the click is refused with nothing read of who clicked.
 * Then the Mattermost user is mapped to the detflow key they decide as and the approval is decided
 * through the same use case as the API (four-eyes, one decision).
 *
 * A refusal after that is answered as a note to the clicking user, with the buttons left in place:
 * Mattermost shows nothing of an answer other than 200 but a generic error.
 */
export async function takeMattermostAction(deps: DomainDeps, input: { tenantId: string; body: unknown }, trace: MattermostActionTrace): Promise<PostActionResponse> {
  const now = deps.now?.() ?? new Date();
  const { db } = deps.database;
  const integration = await findMattermostIntegration(db, input.tenantId).catch((err: unknown) => {
    if (err instanceof Refusal && err.kind === 'not-found') return undefined;
    throw err;
  });
  // No integration (or no such tenant) is refused like a bad token: nothing is said about it.
  if (!integration) throw new MattermostRequestRefused('No Mattermost integration is configured for this tenant');
  const parsed = PostActionRequest.safeParse(input.body);
  if (!parsed.success) {
    throw invalidRequest(
      'The body is not a Mattermost post action request from a detflow button',
      parsed.error.issues.slice(0, 20).map((i) => ({ pointer: `/body/${i.path.join('/')}`, message: i.message })),
    );
  }
  const request = parsed.data;
  const { approval_id: approvalId, decision, token } = request.context;
  const actionKey = deps.secrets.open(integration.actionKey);
  if (!MATTERMOST_DECISIONS.has(decision) || !isActionToken(actionKey, input.tenantId, approvalId, decision, token)) {
    throw new MattermostRequestRefused("The button's token was not made by detflow for this approval and decision");
  }
  trace.mattermostUser = request.user_name ? `${request.user_id} (@${request.user_name})` : request.user_id;
  try {
    const mapped = integration.reviewers.find((r) => r.user_id === request.user_id);
    const actor = await reviewerActor(deps, input.tenantId, mapped?.api_key_id, `Mattermost user ${trace.mattermostUser}`, '/settings/integrations/mattermost', now);
    trace.actor = actor;
    await requireObjectInScope(db, actor, 'approval', approvalId);
    const decided = await decideApproval(deps, actor, approvalId, { decision: decision as MattermostDecision, comment: `Decided in Mattermost by ${trace.mattermostUser}` });
    const message = summarize('approval.requested', { rule_id: decided.ruleId, version: decided.version, target: decided.targets.join(', ') });
    return decidedUpdate({ message, decision: decision as MattermostDecision, principal: actor.principal, userName: request.user_name ?? request.user_id, at: now });
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    trace.refusal = err;
    return { ephemeral_text: `:no_entry: detflow refused this: ${err.message}` };
  }
}
