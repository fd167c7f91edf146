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
