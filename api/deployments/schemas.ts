import { Drift } from '../drift/schemas';
import { z } from 'zod';
import { openapi } from '../http/zod-openapi';
import { DURATION, isoDurationField } from '../http/iso-duration';
import { DEPLOYMENT_STATUSES, ON_EXCEED_POLICIES } from '../../domain/statuses';

/** How long an approval may wait for a decision: a second to a year. */
export const approvalExpiry = isoDurationField('P7D', { min: DURATION.SECOND, max: 365 * DURATION.DAY });

export const NoiseBudget = openapi(
  z
    .object({
      max_alerts_per_day: z.number().min(0).max(1_000_000_000),
      on_exceed: z
        .enum(ON_EXCEED_POLICIES)
        .optional()
        .describe(
          'What scheduled detection does when a UTC day goes over the budget: `suppress` (default) stores the alerts beyond it as suppressed and counts them; ' +
            '`demote` stops the rule alerting and keeps it running in shadow until a person promotes it (POST /deployments/{id}/promote); ' +
            '`rollback` starts a Rollback run to the previous version (or off the target), with the reason recorded and notified',
        ),
    })
    .strict(),
  'NoiseBudget',
);

export const Demotion = openapi(
  z.object({
    demoted_at: z.string(),
    reason: z.string(),
    alerts: z.number().int().describe('Alerts of the UTC day when the budget was exceeded'),
    budget: z.number(),
    shadow_runs: z.number().int().describe('Detection runs in shadow since the demotion'),
    shadow_matches: z.number().int().describe('Events those runs matched: alerts it would have raised'),
    promoted_at: z.string().optional(),
    promoted_by: z.string().optional(),
    comment: z.string().nullable().optional(),
  }),
  'Demotion',
);

export const PromoteBody = openapi(
  z
    .object({
      comment: z.string().max(2000).optional(),
      noise_budget: NoiseBudget.optional().describe('A new budget from now on; the current one when absent'),
    })
    .strict(),
  'PromoteRequest',
);

export const DeployBody = openapi(
  z
    .object({
      rule_id: z.string().min(1).max(200),
      target: z.string().min(1).max(200),
      approval_required: z.boolean().default(true),
      noise_budget: NoiseBudget.optional(),
      version: z.number().int().min(1).max(2_147_483_647).optional().describe('The rule version to deploy; the latest when absent'),
      approval_expires_in: approvalExpiry.default('P7D').describe('With approval_required: how long the approval waits for a decision'),
    })
    .strict(),
  'DeployRequest',
);

export const RunLinks = z.object({
  self: z.string(),
  approval: z.string().optional().describe('The approval this deployment waits for or waited for'),
  run: z.string().optional().describe('The run in the Temporal Web UI'),
});

export const WorkflowStarted = openapi(
  z.object({
    id: z.string(),
    status: z.string(),
    workflow_id: z.string(),
    run_id: z.string().nullable(),
    links: RunLinks,
  }),
  'WorkflowStarted',
);

export const Deployment = openapi(
  z.object({
    id: z.string(),
    rule_id: z.string(),
    version: z.number().int(),
    target: z.string(),
    environment: z.string(),
    status: z.enum(DEPLOYMENT_STATUSES),
    approval_required: z.boolean(),
    noise_budget: NoiseBudget.nullable(),
    demotion: Demotion.nullable().describe('The last demotion by the noise budget (and its promotion back), when there was one'),
    mapping: z
      .object({ name: z.string(), version: z.string() })
      .nullable()
      .describe(
        "The remote target's field mapping the rule was compiled with (built-in data model, `+overrides` when field_map changed it, and the version of the two); null on local targets",
      ),
    drift: z.array(Drift).describe('How the target departs from this deployment now, as the last drift check found (empty when in step)'),
    requested_by: z.string().nullable(),
    requested_by_principal: z.string().nullable().describe('The person the requesting token acts for; null when the service requested it (a budget rollback)'),
    error: z.string().nullable(),
    workflow_id: z.string(),
    run_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    activated_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    approval_id: z.string().nullable().describe('The approval this deployment waits for or waited for; null when it needed none'),
    links: RunLinks,
  }),
  'Deployment',
);

/** What a deploy request did: flags that say whether it started anything. */
const deployOutcome = {
  approval_id: z.string().nullable().describe('The approval the deployment waits for (also in links.approval); null when it needs none'),
  unchanged: z.boolean().describe('True when the version was already active on the target with the same noise budget: nothing was started'),
  reused: z
    .boolean()
    .describe('True when an equal change (same rule, version, targets and noise budget) already waited for approval: this is that one, and no second approval was made'),
};

export const DeployStarted = openapi(WorkflowStarted.extend(deployOutcome), 'DeployStarted');
export const DeployAnswered = openapi(Deployment.extend(deployOutcome), 'DeployAnswered');

export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, '1 to 255 visible ASCII characters')
    .optional()
    .describe('The same key from the same tenant returns the same resource and never starts a second run'),
});

export const WaitQuery = z.object({ wait: z.coerce.number().int().min(0).max(60).default(0).describe('Seconds to long-poll for a final or active state') }).strict();

export const WAIT_UNTIL = ['decided', 'any_change'] as const;
export const DeploymentWaitQuery = z
  .object({
    wait: z.coerce.number().int().min(0).max(60).default(0).describe('Seconds to long-poll (see `until`); 0 answers at once'),
    until: z
      .enum(WAIT_UNTIL)
      .default('decided')
      .describe(
        'With `wait`: `decided` (default) holds while the approval is pending and while the run deploys, and answers once the decision was made and acted on: live (`active`, `demoted`) or ended (rejected, expired, failed…); ' +
          '`any_change` answers as soon as the status differs from `from`, each step on its own (at once when `from` is final)',
      ),
    from: z
      .enum(DEPLOYMENT_STATUSES)
      .optional()
      .describe(
        'With `until=any_change`: the status the caller last saw (default: the status when the request arrives), so a change between two requests is not missed: a status other than `from` answers at once',
      ),
  })
  .strict()
  .superRefine((q, ctx) => {
    if (q.from !== undefined && q.until !== 'any_change') ctx.addIssue({ code: 'custom', path: ['from'], message: '`from` applies with until=any_change' });
  });

export const DeploymentList = openapi(z.object({ items: z.array(Deployment), next_cursor: z.string().nullable() }), 'DeploymentList');
export const DeploymentListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().max(512).optional(),
    rule_id: z.string().min(1).max(200).optional(),
    target: z.string().min(1).max(63).optional(),
    status: z.enum(DEPLOYMENT_STATUSES).optional(),
  })
  .strict();
