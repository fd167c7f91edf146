import type { ApiDeps } from '../context';
import { API_BASE_PATH } from './paths';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { deleteSlackIntegration, findSlackIntegration, putSlackIntegration, type SlackIntegrationRow } from '../../domain/integrations/slack/settings';
import { PutSlackIntegrationBody, SlackIntegration } from './schemas';

/** The tenant's Slack app, for deciding approvals from the notification; the secret is never shown. */
export function slackIntegrationRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const view = (row: SlackIntegrationRow) => ({
    signing_secret_set: true,
    reviewers: row.reviewers,
    interactions_url: `${(deps.config.publicUrl ?? '').replace(/\/$/, '')}${API_BASE_PATH}/integrations/slack/${encodeURIComponent(row.tenantId)}/interactions`,
    updated_at: row.updatedAt.toISOString(),
  });
  return [
    defineRoute({
      method: 'get',
      path: '/settings/integrations/slack',
      operationId: 'getSlackIntegration',
      summary: "The tenant's Slack app: who may decide approvals from Slack",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      responses: { 200: { description: 'The Slack app', schema: SlackIntegration }, 404: { description: 'No Slack app is configured', schema: ProblemSchema } },
      handler: async ({ auth }) => ({ status: 200, body: view(await findSlackIntegration(db, auth.tenantId)) }),
    }),
    defineRoute({
      method: 'put',
      path: '/settings/integrations/slack',
      operationId: 'putSlackIntegration',
      summary: "Set the tenant's Slack app: signing secret and the Slack users mapped to reviewer API keys",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      body: PutSlackIntegrationBody,
      responses: { 200: { description: 'The Slack app', schema: SlackIntegration } },
      handler: async ({ body, auth }) => ({
        status: 200,
        body: view(await putSlackIntegration(deps, auth, { signingSecret: body.signing_secret, reviewers: body.reviewers })),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/settings/integrations/slack',
      operationId: 'deleteSlackIntegration',
      summary: "Remove the tenant's Slack app: clicks in Slack are refused from then on",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      responses: { 204: { description: 'Removed' }, 404: { description: 'No Slack app is configured', schema: ProblemSchema } },
      handler: async ({ auth }) => {
        await deleteSlackIntegration(db, auth);
        return { status: 204 };
      },
    }),
  ];
}
