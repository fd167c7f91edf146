import express, { type NextFunction, type Request, type Response } from 'express';
import type { ApiDeps } from '../context';
import { AppError, unsupportedMediaType } from '../http/problem';
import { auditSubject } from '../audit/audit-recorder';
import { metricsRoute } from '../metrics/metrics';
import { API_BASE_PATH } from './paths';
import { auditChatCaller } from './chat-audit';
import { SlackRequestRefused, takeSlackInteraction, type SlackCallbackTrace } from '../../domain/integrations/slack/interactions';

/** Express path (under the API base) of the Slack app's Interactivity Request URL. */
export const SLACK_INTERACTIONS_PATH = '/integrations/slack/:tenant/interactions';
const ROUTE = '/integrations/slack/{tenant}/interactions';

// Slack's interaction payloads are small; a larger body is not Slack's.
const RAW_LIMIT = '256kb';

/**
 * Slack's interaction callbacks: no bearer token (Slack cannot send one); the signature over the
 * raw body is the authentication, so the body is kept as bytes until it is verified. The tenant is
 * named in the path and its signing secret decides.
 */
export function slackInteractionHandlers(deps: ApiDeps) {
  const raw = express.raw({ type: () => true, limit: RAW_LIMIT });
  const handle = async (req: Request, res: Response) => {
    auditSubject(res).route = ROUTE;
    metricsRoute(res, `${API_BASE_PATH}${ROUTE}`);
    if (!req.is('application/x-www-form-urlencoded')) {
      throw unsupportedMediaType(`Slack sends application/x-www-form-urlencoded, not ${req.headers['content-type'] ?? 'unspecified'}`);
    }
    const trace: SlackCallbackTrace = {};
    const tenantId = String(req.params.tenant);
    try {
      const decided = await takeSlackInteraction(
        deps,
        {
          tenantId,
          rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
          timestamp: req.get('x-slack-request-timestamp'),
          signature: req.get('x-slack-signature'),
        },
        trace,
      );
      res.status(200).json({ id: decided.id, status: decided.status, decided_by_principal: decided.decidedByPrincipal });
    } catch (err) {
      if (err instanceof SlackRequestRefused) throw new AppError(401, 'slack-request-refused', 'Slack request refused', err.message);
      throw err;
    } finally {
      auditChatCaller(res, tenantId, trace.slackUser && `slack:${trace.slackUser}`, trace.actor);
      if (trace.messageUpdate && !trace.messageUpdate.ok) {
        deps.logger.warn({ tenantId, slackUser: trace.slackUser, error: trace.messageUpdate.error }, 'could not update the Slack message');
      }
    }
  };
  return [raw, (req: Request, res: Response, next: NextFunction) => handle(req, res).catch(next)] as const;
}
