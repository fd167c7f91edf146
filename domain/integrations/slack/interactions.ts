import { lt } from 'drizzle-orm';
import type { DomainDeps } from '../../deps';
import { slackCallbacksSeen } from '../../../db/schema';
import { invalidRequest, Refusal } from '../../errors';
import type { Actor } from '../../tenants/actor';
import { reviewerActor } from '../chat-reviewers';
import { requireObjectInScope } from '../../tenants/scope';
import { decideApproval } from '../../approvals/decide';
import type { ApprovalRecord } from '../../approvals/approvals';
import { findSlackIntegration } from './settings';
import { SLACK_MAX_SKEW_SECONDS, verifySlackRequest } from './signature';
import { BlockActionsPayload } from './interaction-payload';
import { SLACK_ACTIONS, decidedMessage, refusalNote } from './blocks';
import { postToResponseUrl } from './respond';

/** A callback that is not provably Slack's, fresh and new: nothing in it is read. */
export class SlackRequestRefused extends Error {
  override name = 'SlackRequestRefused';
}

export type SlackCallback = { tenantId: string; rawBody: Buffer; timestamp: string | undefined; signature: string | undefined };

/** What the caller learns as the callback is taken, for the audit row (filled even when refused). */
export type SlackCallbackTrace = { slackUser?: string; actor?: Actor; messageUpdate?: { ok: true } | { ok: false; error: string } };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Takes a button click from a Slack approval notification: verifies it as Slack documents (signing
 * secret, v0 HMAC over the raw body, timestamp within five minutes) and refuses a replay, maps the
 * Slack user to the detflow token they decide as, and decides through the same use case as the API
 * (four-eyes, one decision). The message is then replaced to show who decided; a refusal after
 * verification is shown to the clicking user only, and leaves the buttons in place.
 */
export async function takeSlackInteraction(deps: DomainDeps, callback: SlackCallback, trace: SlackCallbackTrace): Promise<ApprovalRecord> {
  const now = deps.now?.() ?? new Date();
  const { db } = deps.database;
  // A tenant without a Slack app (or no such tenant) is refused like a bad signature: nothing is said about it.
  const integration = await findSlackIntegration(db, callback.tenantId).catch((err: unknown) => {
    if (err instanceof Refusal && err.kind === 'not-found') return undefined;
    throw err;
  });
  if (!integration) throw new SlackRequestRefused('No Slack app is configured for this tenant');
  const verdict = verifySlackRequest({
    signingSecret: deps.secrets.open(integration.signingSecret),
    timestamp: callback.timestamp,
    signature: callback.signature,
    rawBody: callback.rawBody,
    now,
  });
  if (!verdict.ok) throw new SlackRequestRefused(verdict.reason);
  await refuseReplay(deps, callback.tenantId, callback.signature!, now);

  const payload = parsePayload(callback.rawBody);
  const action = payload.actions[0]!;
  const decision = SLACK_ACTIONS[action.action_id];
  if (!decision || !action.value || !UUID.test(action.value)) {
    throw invalidRequest(`Action ${action.action_id} is not a detflow approval button`, [{ pointer: '/body/payload/actions/0', message: 'unknown action' }]);
  }
  const teamId = payload.team?.id ?? payload.user.team_id ?? '';
  trace.slackUser = `${teamId}/${payload.user.id}`;
  try {
    const mapped = integration.reviewers.find((r) => r.team_id === teamId && r.user_id === payload.user.id);
    const actor = await reviewerActor(deps, callback.tenantId, mapped?.api_key_id, `Slack user ${trace.slackUser}`, '/settings/integrations/slack', now);
    trace.actor = actor;
    await requireObjectInScope(db, actor, 'approval', action.value);
    const decided = await decideApproval(deps, actor, action.value, { decision, comment: `Decided in Slack by ${trace.slackUser}` });
    trace.messageUpdate = await postToResponseUrl(
      payload.response_url,
      decidedMessage({ originalText: payload.message?.text ?? 'detflow approval', decision, principal: actor.principal, slackUserId: payload.user.id, at: now }),
    );
    return decided;
  } catch (err) {
    if (err instanceof Refusal) trace.messageUpdate = await postToResponseUrl(payload.response_url, refusalNote(err.message));
    throw err;
  }
}

/**
 * Records the callback's signature; one already recorded is a replay. The signature is unique per
 * timestamp and body, and a callback older than five minutes is refused before this, so rows older
 * than that (with a minute's margin for clock skew) are no longer needed and are dropped here.
 */
async function refuseReplay(deps: DomainDeps, tenantId: string, signature: string, now: Date): Promise<void> {
  const { db } = deps.database;
  await db.delete(slackCallbacksSeen).where(lt(slackCallbacksSeen.receivedAt, new Date(now.getTime() - (2 * SLACK_MAX_SKEW_SECONDS + 60) * 1000)));
  const inserted = await db.insert(slackCallbacksSeen).values({ tenantId, signature, receivedAt: now }).onConflictDoNothing().returning({ s: slackCallbacksSeen.signature });
  if (inserted.length === 0) throw new SlackRequestRefused('This callback was already received (a replay)');
}

function parsePayload(rawBody: Buffer): BlockActionsPayload {
  const raw = new URLSearchParams(rawBody.toString('utf8')).get('payload');
  if (raw === null) throw invalidRequest('The body has no payload field', [{ pointer: '/body/payload', message: 'required' }]);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw invalidRequest('The payload is not JSON', [{ pointer: '/body/payload', message: 'not JSON' }]);
  }
  const parsed = BlockActionsPayload.safeParse(json);
  if (!parsed.success) {
    throw invalidRequest(
      'The payload is not a block_actions interaction detflow handles',
      parsed.error.issues.slice(0, 20).map((i) => ({ pointer: `/body/payload/${i.path.join('/')}`, message: i.message })),
    );
  }
  return parsed.data;
}
