import { Drift } from '../drift/schemas';
import { z } from 'zod';
import { DeploymentForecast } from './forecast.schemas';
import { openapi } from '../http/zod-openapi';
import { DURATION, isoDurationField } from '../http/iso-duration';

const Status = z.enum(['ok', 'degraded', 'failing', 'unknown', 'no_data']);
const num = z.number().nullable();
const Window = z.object({ from: z.string(), to: z.string() });
const Change = z.object({ current: num, previous: num, change: num });
const Logsource = z.object({ product: z.string().optional(), category: z.string().optional(), service: z.string().optional() });

export const RuleHealthParams = z.object({ id: z.string().min(1).max(200) });
export const RuleHealthQuery = z
  .object({
    target: z.string().min(1).max(200).optional(),
    window: isoDurationField('P30D', { min: DURATION.SECOND * 3600, max: 366 * DURATION.DAY }).default('P30D'),
  })
  .strict();

export const RuleHealth = openapi(
  z.object({
    rule_id: z.string(),
    title: z.string(),
    target: z.string().nullable(),
    window: Window.extend({ duration: z.string() }),
    status: Status,
    reasons: z.array(z.string()),
    snr: z.object({
      ratio: num,
      precision: num,
      true_positives: z.number().int(),
      false_positives: z.number().int(),
      benign: z.number().int(),
      duplicates: z.number().int(),
      undispositioned: z.number().int(),
      reason: z.string().nullable(),
    }),
    latency: z.object({ alerts: z.number().int(), p50_ms: num, p95_ms: num, max_ms: num, reason: z.string().nullable() }),
    error_rate: z.object({
      rate: num,
      runs: z.number().int(),
      failed_runs: z.number().int(),
      last_error: z.object({ message: z.string(), at: z.string(), deployment_id: z.string() }).nullable(),
      status: Status,
      reason: z.string().nullable(),
    }),
    noise_budget: z.object({
      alerts_today: z.number().int(),
      alerts: z.number().int(),
      alerts_per_day: z.number(),
      suppressed: z.number().int(),
      days_over_budget: z.number().int(),
      per_day: z.array(z.object({ day: z.string(), alerts: z.number().int(), suppressed: z.number().int(), over_budget: z.boolean() })),
      deployments: z.array(
        z.object({
          deployment_id: z.string(),
          target: z.string(),
          version: z.number().int(),
          max_alerts_per_day: z.number().int().nullable(),
          alerts_today: z.number().int(),
          consumption_today: num,
          alerts: z.number().int(),
          suppressed: z.number().int(),
          days_over_budget: z.number().int(),
        }),
      ),
    }),
    data_quality: z.object({
      status: Status,
      reason: z.string().nullable(),
      freshness_hours: z.number(),
      logsources: z.array(
        z.object({
          target: z.string(),
          logsource: Logsource,
          events: z.number().int().nullable(),
          newest_event_time: z.string().nullable(),
          status: Status,
          reason: z.string().nullable(),
          fields: z.array(z.object({ field: z.string(), events_with_field: z.number().int(), share: num, status: Status, reason: z.string().nullable() })),
        }),
      ),
    }),
    trend: z.object({ previous_window: Window, alerts: Change, snr: Change, precision: Change, error_rate: Change, latency_p95_ms: Change }),
    deployments: z.array(
      z.object({
        id: z.string(),
        version: z.number().int(),
        target: z.string(),
        status: z.string(),
        activated_at: z.string().nullable(),
        max_alerts_per_day: z.number().int().nullable(),
      }),
    ),
    forecasts: z
      .array(DeploymentForecast)
      .describe(
        "Forecast accuracy of each deployment live in the window or now: the alerts/day its change's impact summary projected against what detection observed since it went live",
      ),
    drift: z
      .array(Drift.extend({ target: z.string() }))
      .describe("Open drift of the rule's objects on the targets in scope: what runs there is not what detflow deployed (health is at best degraded while it lasts)"),
    siem: z
      .array(
        z.object({
          target: z.string(),
          kind: z.string(),
          alerts: z.number().int().nullable(),
          alerts_per_day: z.array(z.object({ day: z.string(), alerts: z.number().int() })),
          first_alert_at: z.string().nullable(),
          last_alert_at: z.string().nullable(),
          runs: z.number().int().nullable(),
          failed_runs: z.number().int().nullable(),
          last_run_at: z.string().nullable(),
          last_error: z.string().nullable(),
          unavailable: z.string().nullable().describe('Why figures are null: the kind does not report them, or the SIEM could not be asked'),
        }),
      )
      .describe('What each remote SIEM the rule is live on reports itself over the window: its alerts (fired alerts, alerts index, incidents) and its scheduled runs'),
  }),
  'RuleHealth',
);

const share = z.number().min(0).max(1);
const rate = z.number().min(0).max(1);
export const HealthThresholds = openapi(
  z.object({
    field_share_ok: share,
    field_share_failing: share,
    freshness_hours: z
      .number()
      .int()
      .min(1)
      .max(24 * 90),
    error_rate_degraded: rate,
    error_rate_failing: rate,
  }),
  'HealthThresholds',
);
export const PutHealthSettings = openapi(HealthThresholds.partial().strict(), 'HealthSettingsUpdate');
export const HealthSettings = openapi(z.object({ thresholds: HealthThresholds, updated_at: z.string().nullable() }), 'HealthSettings');
