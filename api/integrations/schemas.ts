import { z } from 'zod';
import { openapi } from '../http/zod-openapi';

const SlackId = z
  .string()
  .regex(/^[A-Z0-9]{2,64}$/, 'a Slack id such as T0123ABCD or U0123ABCD')
  .describe('A Slack id');

export const SlackReviewer = z
  .object({
    team_id: SlackId.describe('The Slack workspace (team) id'),
    user_id: SlackId.describe('The Slack user id'),
    api_key_id: z.uuid().describe('The detflow API key (holding approve) this Slack user decides as: four-eyes compares its principal'),
  })
  .strict();

export const PutSlackIntegrationBody = openapi(
  z
    .object({
      signing_secret: z.string().min(16).max(256).optional().describe("The Slack app's signing secret; required the first time, kept when omitted later; never returned"),
      reviewers: z.array(SlackReviewer).max(500).default([]),
    })
    .strict(),
  'PutSlackIntegration',
);

export const SlackIntegration = openapi(
  z.object({
    signing_secret_set: z.boolean(),
    reviewers: z.array(SlackReviewer),
    interactions_url: z.string().describe("Where the Slack app's Interactivity Request URL must point"),
    updated_at: z.string(),
  }),
  'SlackIntegration',
);

export const MattermostReviewer = z
  .object({
    user_id: z
      .string()
      .regex(/^[a-z0-9]{26}$/, 'a Mattermost user id: 26 lower-case letters and digits')
      .describe('The Mattermost user id'),
    api_key_id: z.uuid().describe('The detflow API key (holding approve) this Mattermost user decides as: four-eyes compares its principal'),
  })
  .strict();

export const PutMattermostIntegrationBody = openapi(
  z
    .object({
      reviewers: z.array(MattermostReviewer).max(500).default([]),
      rotate_action_key: z
        .boolean()
        .default(false)
        .describe("Make a new key for the buttons' tokens: buttons already posted stop working (use it if a notification's body may have leaked)"),
    })
    .strict(),
  'PutMattermostIntegration',
);

export const MattermostIntegration = openapi(
  z.object({
    reviewers: z.array(MattermostReviewer),
    actions_url: z.string().describe('Where the buttons send their clicks: DETFLOW_PUBLIC_URL, or the address this request came to; Mattermost must reach it'),
    updated_at: z.string(),
  }),
  'MattermostIntegration',
);
