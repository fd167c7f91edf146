import { z } from 'zod';

/** Forecast accuracy as the health reports show it (domain/health/forecast-accuracy.ts computes it; README "Forecast accuracy" gives the formulas). */

const Interval = z.object({ low: z.number(), high: z.number() });

export const DeploymentForecast = z.object({
  deployment_id: z.string(),
  rule_id: z.string(),
  version: z.number().int(),
  target: z.string(),
  environment: z.string(),
  status: z.string(),
  activated_at: z.string(),
  ended_at: z.string().nullable(),
  projection: z
    .object({
      approval_id: z.string(),
      computed_at: z.string().nullable(),
      alerts_per_day: z.number(),
      ci95: Interval.nullable().describe('null for an impact summary recorded before projections carried an interval'),
      low_confidence: z.boolean().nullable(),
      low_confidence_reasons: z.array(z.string()).nullable(),
    })
    .nullable()
    .describe('What the impact summary of its change projected for its target; null when none was recorded (see reasons)'),
  observation: z
    .object({
      from: z.string(),
      to: z.string(),
      live_seconds: z.number(),
      detection_runs: z.number().int(),
      alerts: z.number().int(),
      alerts_per_day: z.number(),
      ci95: Interval,
      short_observation: z.boolean().describe('Live less than a day: daily seasonality not observed'),
    })
    .nullable(),
  error_ratio: z.number().nullable().describe('observed / projected alerts per day'),
  log_error: z.number().nullable().describe('ln(observed / projected); null when either is 0'),
  within_interval: z.boolean().nullable().describe("Whether the observed rate lies in the projection's 95% interval"),
  reasons: z.array(z.string()).describe('Why a figure is null, or why it should be read with care'),
});

export const ForecastDistribution = z.object({
  window: z.object({ from: z.string(), to: z.string() }),
  min_observed_days: z.number(),
  deployments: z.number().int().describe('Deployments live at some point in the window'),
  compared: z.number().int().describe('Those with both a projection and an observation of at least min_observed_days'),
  excluded: z.object({ no_projection: z.number().int(), no_observation: z.number().int(), short_observation: z.number().int() }),
  abs_log_error: z.object({ count: z.number().int(), median: z.number().nullable(), p90: z.number().nullable() }),
  error_ratio: z.object({ count: z.number().int(), median: z.number().nullable() }),
  within_interval: z.object({ count: z.number().int(), within: z.number().int(), share: z.number().nullable() }),
  histogram: z.array(z.object({ label: z.string(), from: z.number().nullable(), to: z.number().nullable(), count: z.number().int() })),
  reasons: z.array(z.string()),
});
