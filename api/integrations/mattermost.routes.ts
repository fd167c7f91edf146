import type { Request } from 'express';
import type { ApiDeps } from '../context';
import { API_BASE_PATH } from './paths';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import {
  deleteMattermostIntegration,
  findMattermostIntegration,
  putMattermostIntegration,
  type MattermostIntegrationRow,
} from '../../domain/integrations/mattermost/settings';
import { MattermostIntegration, PutMattermostIntegrationBody } from './schemas';

/** The tenant's Mattermost approval buttons; the key their tokens are made with is never shown. */
export function mattermostIntegrationRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const view = (row: MattermostIntegrationRow) => ({ reviewers: row.reviewers, actions_url: row.actionsUrl, updated_at: row.updatedAt.toISOString() });
  // Mattermost's server calls the buttons' URL, so it must be absolute: the configured public URL,
  // or else the address the admin reached detflow at.
  const actionsUrl = (req: Request, tenantId: string) => {
    const base = (deps.config.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`).replace(/\/$/, '');
    return `${base}${API_BASE_PATH}/integrations/mattermost/${encodeURIComponent(tenantId)}/actions`;
  };
  return [
    defineRoute({
      method: 'get',
      path: '/settings/integrations/mattermost',
      operationId: 'getMattermostIntegration',
      summary: "The tenant's Mattermost integration: who may decide approvals from Mattermost",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      responses: {
        200: { description: 'The Mattermost integration', schema: MattermostIntegration },
        404: { description: 'No Mattermost integration is configured', schema: ProblemSchema },
      },
      handler: async ({ auth }) => ({ status: 200, body: view(await findMattermostIntegration(db, auth.tenantId)) }),
    }),
    defineRoute({
      method: 'put',
      path: '/settings/integrations/mattermost',
      operationId: 'putMattermostIntegration',
      summary: 'Put Approve / Reject / Request changes buttons on approval notifications sent to Mattermost, and map who may click them',
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      body: PutMattermostIntegrationBody,
      responses: { 200: { description: 'The Mattermost integration', schema: MattermostIntegration } },
      handler: async ({ body, auth, req }) => ({
        status: 200,
        body: view(
          await putMattermostIntegration(deps, auth, { reviewers: body.reviewers, actionsUrl: actionsUrl(req, auth.tenantId), rotateActionKey: body.rotate_action_key }),
        ),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/settings/integrations/mattermost',
      operationId: 'deleteMattermostIntegration',
      summary: "Remove the tenant's Mattermost integration: buttons already posted are refused from then on",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      responses: { 204: { description: 'Removed' }, 404: { description: 'No Mattermost integration is configured', schema: ProblemSchema } },
      handler: async ({ auth }) => {
        await deleteMattermostIntegration(db, auth);
        return { status: 204 };
      },
    }),
  ];
}
