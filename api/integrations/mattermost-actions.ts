import express, { type NextFunction, type Request, type Response } from 'express';
import type { ApiDeps } from '../context';
import { AppError, unsupportedMediaType } from '../http/problem';
import { auditSubject } from '../audit/audit-recorder';
import { metricsRoute } from '../metrics/metrics';
import { requireUtf8 } from '../http/pipeline';
import { API_BASE_PATH } from './paths';
import { auditChatCaller } from './chat-audit';
import { MattermostRequestRefused, takeMattermostAction, type MattermostActionTrace } from '../../domain/integrations/mattermost/actions';

/** Express path (under the API base) the Mattermost buttons' integration URL points at. */
export const MATTERMOST_ACTIONS_PATH = '/integrations/mattermost/:tenant/actions';
const ROUTE = '/integrations/mattermost/{tenant}/actions';

// A post action request is a few hundred bytes; a larger body is not Mattermost's.
const BODY_LIMIT = '64kb';

/**
 * Mattermost's button callbacks: no bearer token (Mattermost cannot send one); the token in the
 * button's context authenticates the click. A refusal after that answers 200 with a note for the
 * clicking user (Mattermost shows only a generic error for any other status) and says what was
 * refused in `refused`, which Mattermost ignores and the audit and tests read.
 */
export function mattermostActionHandlers(deps: ApiDeps) {
  const json = express.json({ limit: BODY_LIMIT, strict: true, type: 'application/json', verify: requireUtf8 });
  const handle = async (req: Request, res: Response) => {
    auditSubject(res).route = ROUTE;
    metricsRoute(res, `${API_BASE_PATH}${ROUTE}`);
    if (!req.is('application/json')) {
      throw unsupportedMediaType(`Mattermost sends application/json, not ${req.headers['content-type'] ?? 'unspecified'}`);
    }
    const trace: MattermostActionTrace = {};
    const tenantId = String(req.params.tenant);
    try {
      const answer = await takeMattermostAction(deps, { tenantId, body: req.body }, trace);
      res.status(200).json(trace.refusal ? { ...answer, refused: { kind: trace.refusal.kind, detail: trace.refusal.message } } : answer);
    } catch (err) {
      if (err instanceof MattermostRequestRefused) throw new AppError(401, 'mattermost-request-refused', 'Mattermost request refused', err.message);
      throw err;
    } finally {
      auditChatCaller(res, tenantId, trace.mattermostUser && `mattermost:${trace.mattermostUser}`, trace.actor);
      if (trace.refusal)
        deps.logger.info({ tenantId, mattermostUser: trace.mattermostUser, refusal: trace.refusal.kind, detail: trace.refusal.message }, 'Mattermost click refused');
    }
  };
  return [json, (req: Request, res: Response, next: NextFunction) => handle(req, res).catch(next)] as const;
}
