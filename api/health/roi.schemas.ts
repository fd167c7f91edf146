import { z } from 'zod';
import { openapi } from '../http/zod-openapi';
import { DURATION, isoDurationField } from '../http/iso-duration';
import { DEPLOYMENT_STATUSES } from '../../domain/statuses';

export const RoiQuery = z
  .object({
    window: isoDurationField('P30D', { min: DURATION.SECOND, max: 366 * DURATION.DAY })
      .default('P30D')
      .describe('The window ending now that the report covers (ISO 8601 duration)'),
    min_observed: isoDurationField('P1D', { min: DURATION.SECOND, max: 366 * DURATION.DAY })
      .default('P1D')
      .describe('How long a replaced version must have been live for its observed alerts/day to be its counterfactual rate; below it, its newest replay’s'),
  })
  .strict();

const reason = z.string().nullable().describe('Why the figure is null, zero or partial; null when nothing needs saying');

const DeploymentRef = z.object({
  deployment_id: z.string(),
  version: z.number().int(),
  status: z.enum(DEPLOYMENT_STATUSES),
  activated_at: z.string(),
  ended_at: z.string().nullable(),
});

const ChangeSaving = z.object({
  kind: z.enum(['new_version', 'rollback', 'removal']),
  rule_id: z.string(),
  target: z.string(),
  environment: z.string(),
  replaced: DeploymentRef,
  replacement: DeploymentRef.nullable().describe('null for a removal (a rollback with no earlier version)'),
  in_effect: z.object({ from: z.string(), until: z.string().nullable() }),
  counterfactual: z.object({
    basis: z.enum(['observed', 'replayed']).nullable(),
    alerts_per_day: z.number().nullable(),
    observed_days: z.number(),
    observed_alerts: z.number(),
    replay_id: z.string().nullable(),
    reason,
  }),
  days_in_window: z.number(),
  expected_alerts: z.number().nullable().describe('counterfactual alerts/day × days_in_window'),
  actual_alerts: z.number().describe('what the replacement matched in the window: raised, suppressed and shadow matches'),
  noise_saved: z.number().nullable().describe('expected_alerts − actual_alerts; negative when the replacement is noisier'),
});

const BudgetSaving = z.object({
  deployment_id: z.string(),
  rule_id: z.string(),
  version: z.number().int(),
  target: z.string(),
  environment: z.string(),
  suppressed_alerts: z.number(),
  shadow_matches: z.number(),
  noise_saved: z.number(),
});

const CoverageDelta = z.object({
  technique: z.string(),
  rules: z.array(z.object({ rule_id: z.string(), version: z.number().int(), deployment_id: z.string(), target: z.string() })),
});

export const RoiReport = openapi(
  z.object({
    window: z.object({ from: z.string(), to: z.string(), duration: z.string() }),
    min_observed: z.string(),
    noise_saved: z.object({
      total: z.number(),
      by_source: z.object({ new_versions: z.number(), rollbacks: z.number(), removals: z.number(), budget_suppression: z.number() }),
      unknown_changes: z.number().int().describe('Changes without a counterfactual rate, left out of the totals'),
      reason,
      changes: z.array(ChangeSaving),
      budget_suppression: z.array(BudgetSaving),
    }),
    cost_avoided: z.object({
      reason,
      by_currency: z.array(
        z.object({
          currency: z.string(),
          noise_saved: z.number(),
          triage_cost_avoided: z.number(),
          scan_cost_saved: z.number().nullable(),
          scan_cost_reason: reason,
          total: z.number(),
          targets: z.array(
            z.object({
              target: z.string(),
              environment: z.string(),
              noise_saved: z.number(),
              triage_minutes_per_alert: z.number(),
              cost_per_analyst_hour: z.number(),
              triage_cost_avoided: z.number(),
            }),
          ),
        }),
      ),
    }),
    coverage: z.object({
      techniques_at_start: z.number().int(),
      techniques_now: z.number().int(),
      gained: z.array(CoverageDelta),
      lost: z.array(CoverageDelta),
      reason,
    }),
  }),
  'RoiReport',
);
