import { index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { tstz } from './columns';
import { tenants } from './tenants';

/** Chat integrations: a Slack app that lets reviewers decide approvals from the notification. */

/** A Slack user who may decide, and the detflow token (holding `approve`) they decide as. */
export type SlackReviewer = { team_id: string; user_id: string; api_key_id: string };

export const slackIntegrations = pgTable('slack_integrations', {
  tenantId: text('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  /** The Slack app's signing secret, encrypted with DETFLOW_SECRET_KEY. */
  signingSecret: text('signing_secret').notNull(),
  reviewers: jsonb('reviewers').$type<SlackReviewer[]>().notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});

/**
 * Interaction callbacks already taken, by their signature (unique per timestamp and body), kept
 * while their timestamp is fresh: a callback sent again within that window is a replay.
 */
export const slackCallbacksSeen = pgTable(
  'slack_callbacks_seen',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    signature: text('signature').notNull(),
    receivedAt: tstz('received_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.signature] }), index('slack_callbacks_seen_at').on(t.receivedAt)],
);

/** A Mattermost user who may decide, and the detflow token (holding `approve`) they decide as. */
export type MattermostReviewer = { user_id: string; api_key_id: string };

/**
 * A Mattermost channel's interactive approval buttons. Mattermost does not sign its callbacks, so
 * each button carries a token detflow derives from `actionKey` (a key detflow made, never shown)
 * for that approval and decision; `actionsUrl` is where the buttons send their clicks.
 */
export const mattermostIntegrations = pgTable('mattermost_integrations', {
  tenantId: text('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  /** Random key for the buttons' tokens, encrypted with DETFLOW_SECRET_KEY. */
  actionKey: text('action_key').notNull(),
  actionsUrl: text('actions_url').notNull(),
  reviewers: jsonb('reviewers').$type<MattermostReviewer[]>().notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});
