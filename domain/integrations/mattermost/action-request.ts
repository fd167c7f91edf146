import { z } from 'zod';

/**
 * The part of Mattermost's post action request (the JSON it POSTs to a button's integration URL)
 * that detflow reads: who clicked, and the context the button was posted with.
 */
export const PostActionRequest = z.object({
  user_id: z.string().min(1).max(64),
  user_name: z.string().max(200).optional(),
  post_id: z.string().max(64).optional(),
  channel_id: z.string().max(64).optional(),
  context: z.object({
    approval_id: z.uuid(),
    decision: z.string().max(40),
    token: z.string().max(200),
  }),
});
export type PostActionRequest = z.infer<typeof PostActionRequest>;
