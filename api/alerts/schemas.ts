import { z } from 'zod';
import { openapi } from '../http/zod-openapi';
import { ALERT_STATUSES, DISPOSITIONS } from '../../domain/statuses';

export const Alert = openapi(
  z.object({
    id: z.string(),
    rule_id: z.string(),
    version: z.number().int(),
    deployment_id: z.string(),
    target: z.string(),
    event_id: z.string(),
    event_time: z.string(),
    event: z.record(z.string(), z.unknown()),
    status: z.enum(ALERT_STATUSES),
    disposition: z.enum(DISPOSITIONS).nullable(),
    assignee: z.string().nullable(),
    team: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    acknowledged_at: z.string().nullable(),
    closed_at: z.string().nullable(),
  }),
  'Alert',
);
export const AlertList = openapi(z.object({ items: z.array(Alert), next_cursor: z.string().nullable() }), 'AlertList');
export const AlertQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().max(512).optional(),
    status: z.enum(ALERT_STATUSES).optional(),
    disposition: z.enum(DISPOSITIONS).optional(),
    rule_id: z.string().min(1).max(200).optional(),
    deployment_id: z.uuid().optional(),
    assignee: z.string().min(1).max(200).optional(),
    team: z.string().min(1).max(200).optional(),
  })
  .strict();
export const PatchAlert = openapi(
  z
    .object({
      assignee: z.string().min(1).max(200).nullable().optional(),
      team: z.string().min(1).max(200).nullable().optional(),
      status: z.enum(['open', 'acknowledged', 'closed']).optional(),
      disposition: z.enum(DISPOSITIONS).nullable().optional(),
    })
    .strict(),
  'AlertUpdate',
);
