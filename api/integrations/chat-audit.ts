import type { Response } from 'express';
import type { Actor } from '../../domain/tenants/actor';
import { auditSubject } from '../audit/audit-recorder';

/**
 * Names a chat callback's caller on its audit row. Only a verified callback is the tenant's to
 * see; the chat user (`slack:T/U`, `mattermost:<id> (@name)`) stands where a token prefix would,
 * and the key they decided as where a token would.
 */
export function auditChatCaller(res: Response, tenantId: string, chatUser: string | undefined, actor: Actor | undefined): void {
  const subject = auditSubject(res);
  if (chatUser) {
    subject.tenantId = tenantId;
    subject.tokenPrefix = chatUser;
  }
  if (actor) {
    subject.tokenId = actor.tokenId;
    subject.principal = actor.principal;
  }
}
