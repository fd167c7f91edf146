import { z } from 'zod';

/**
 * The part of Slack's `block_actions` payload (sent form-encoded as `payload=<JSON>`) that detflow
 * reads: who clicked, in which workspace, which button, and where to answer.
 */
export const BlockActionsPayload = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string().min(1).max(64), team_id: z.string().min(1).max(64).optional(), username: z.string().max(200).optional() }),
  team: z
    .object({ id: z.string().min(1).max(64) })
    .nullable()
    .optional(),
  actions: z
    .array(z.object({ action_id: z.string().max(255), value: z.string().max(2000).optional() }))
    .min(1)
    .max(25),
  response_url: z.url({ protocol: /^https?$/ }).max(2048),
  message: z.object({ text: z.string().max(40_000).optional() }).optional(),
});
export type BlockActionsPayload = z.infer<typeof BlockActionsPayload>;
