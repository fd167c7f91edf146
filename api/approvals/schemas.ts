import { z } from 'zod';
import { openapi } from '../http/zod-openapi';
import { APPROVAL_STATUSES } from '../../domain/statuses';
import { NoiseBudget, approvalExpiry } from '../deployments/schemas';

export const SubmitApprovalBody = openapi(
  z
    .object({
      rule_id: z.string().min(1).max(200),
      version: z.number().int().min(1).max(2_147_483_647).optional().describe('The latest when absent'),
      targets: z.array(z.string().min(1).max(63)).min(1).max(20),
      noise_budget: NoiseBudget.optional(),
      description: z.string().max(10_000).optional(),
      link: z
        .url({ protocol: /^https?$/ })
        .max(2048)
        .optional()
        .describe('The pull request or ticket of the change'),
      expires_in: approvalExpiry.default('P7D').describe('How long the approval waits for a decision'),
    })
    .strict(),
  'SubmitApproval',
);

export const DecisionBody = openapi(
  z.object({ decision: z.enum(['approve', 'reject', 'request_changes']), comment: z.string().max(10_000).optional() }).strict(),
  'ApprovalDecision',
);

export const Approval = openapi(
  z.object({
    id: z.string(),
    rule_id: z.string(),
    version: z.number().int(),
    targets: z.array(z.string()),
    status: z.enum(APPROVAL_STATUSES),
    description: z.string().nullable(),
    link: z.string().nullable(),
    noise_budget: NoiseBudget.nullable(),
    impact: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        'Affected targets, projected alerts, cost, noise delta and diff, and per target the sample, the 95% interval on alerts/day (`alerts_per_day`) and `low_confidence` with its reasons; null until computed',
      ),
    requested_by: z.string().nullable().describe('The id of the token that requested the change'),
    requested_by_principal: z.string().nullable().describe('The person that token acts for'),
    decided_by: z.string().nullable().describe('The id of the token that decided'),
    decided_by_principal: z.string().nullable().describe('The person that token acts for: never the requester (four-eyes)'),
    decision: z.string().nullable(),
    comment: z.string().nullable(),
    deployment_ids: z.array(z.string()),
    workflow_id: z.string(),
    created_at: z.string(),
    decided_at: z.string().nullable(),
    expires_at: z.string().nullable(),
    links: z.object({ self: z.string(), deployments: z.array(z.string()), run: z.string().optional() }),
  }),
  'Approval',
);
export const ApprovalList = openapi(z.object({ items: z.array(Approval), next_cursor: z.string().nullable() }), 'ApprovalList');
export const ApprovalQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().max(512).optional(),
    status: z.enum(APPROVAL_STATUSES).optional(),
    rule_id: z.string().min(1).max(200).optional(),
    target: z.string().min(1).max(63).optional(),
  })
  .strict();
export const WaitImpact = z.object({ wait: z.coerce.number().int().min(0).max(60).default(0).describe('Seconds to wait for the impact summary or a decision') }).strict();
