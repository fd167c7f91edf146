import { z } from 'zod';
import { isoDurationToMs } from '../../config/iso-duration';
import { openapi } from '../http/zod-openapi';
import { RUN_STATUSES } from '../../domain/statuses';
import { NoiseBudget, RunLinks } from '../deployments/schemas';

export const isoDuration = (example: string) =>
  z
    .string()
    .max(40)
    .refine((v) => (isoDurationToMs(v) ?? 0) > 0, `a positive ISO 8601 duration of weeks/days/hours/minutes/seconds, e.g. ${example}`);

/** An RFC 3339 instant in a year the database can compare (PostgreSQL has no year 0). */
const rfc3339 = z.iso.datetime({ offset: true }).refine((v) => {
  const year = new Date(v).getUTCFullYear();
  return year >= 1970 && year <= 9999;
}, 'an instant from 1970 to 9999');

/** The rule of a run: a stored rule (latest or `version`) or an inline Sigma rule, never both. */
const RuleChoice = {
  rule_id: z.string().min(1).max(200).optional().describe('A stored rule (its Sigma id); give this or `rule`'),
  version: z.number().int().min(1).max(2_147_483_647).optional().describe('Version of the stored rule; the latest when absent'),
  rule: z.string().min(1).optional().describe('An inline Sigma rule (YAML), not stored; give this or `rule_id`'),
  target: z.string().min(1).max(200),
};

export const ReplayBody = openapi(
  z
    .object({
      ...RuleChoice,
      from: rfc3339.optional().describe('Start of the window (RFC 3339); with `to`, instead of `lookback`'),
      to: rfc3339.optional().describe('End of the window (exclusive; not in the future)'),
      lookback: isoDuration('P7D').optional().describe('The window ending now, e.g. P7D or PT6H; instead of from/to'),
      noise_budget: NoiseBudget.optional(),
      chunk_events: z
        .number()
        .int()
        .min(1)
        .max(10_000_000)
        .default(100_000)
        .describe('About how many events one chunk (one step of progress) covers; chunks are whole UTC hours'),
    })
    .strict(),
  'ReplayRequest',
);

export const ShadowBody = openapi(
  z
    .object({
      ...RuleChoice,
      duration: isoDuration('PT1H').describe('How long the shadow evaluation runs, e.g. PT1H'),
      interval: isoDuration('PT1M').describe('How often it evaluates the newly ingested events, e.g. PT1M (at least PT1S)'),
      continue_as_new_after: z
        .number()
        .int()
        .min(1)
        .max(10_000)
        .default(500)
        .describe('Evaluations per workflow run before it continues as new with its accumulated state; a tuning knob, figures do not depend on it'),
    })
    .strict(),
  'ShadowRequest',
);

const Cost = z.object({
  currency: z.string(),
  bytes_scanned: z.number(),
  scan_cost: z.number(),
  triage_hours: z.number(),
  triage_cost: z.number(),
  total: z.number(),
  per_month: z.number(),
  per_month_ci95: z
    .object({ low: z.number(), high: z.number() })
    .nullable()
    .describe('per_month with alerts/day at the ends of their 95% interval (scanning does not move); null for a run recorded before it existed'),
  window_days: z.number(),
  model: z.object({ currency: z.string(), price_per_gb_scanned: z.number(), triage_minutes_per_alert: z.number(), cost_per_analyst_hour: z.number() }),
});

/** The sample a projection rests on, its 95% interval on alerts/day, and whether the sample is too thin to trust. */
export const AlertsPerDay = z
  .object({
    estimate: z.number(),
    ci95: z.object({ low: z.number(), high: z.number() }),
    method: z.string().describe('poisson-exact-garwood: an exact Poisson interval on the alert count, scaled to a day'),
  })
  .describe('alerts/day with its 95% interval; null when the sample covers no time, or for a run recorded before it existed');

export const ProjectionFields = {
  sample: z
    .object({
      events: z.number().int(),
      alerts: z.number().int(),
      window_seconds: z.number(),
      from: z.string(),
      to: z.string(),
      days_with_events: z.number().int().nullable().describe('UTC days of the window with an event; null where not known (shadow)'),
      days_in_window: z.number().int(),
    })
    .nullable()
    .describe('What the projection rests on; null for a run recorded before it existed'),
  alerts_per_day: AlertsPerDay.nullable(),
  low_confidence: z.boolean().nullable().describe('The sample is too thin to trust the projection (see low_confidence_reasons); null for a run recorded before it existed'),
  low_confidence_reasons: z.array(z.string()).nullable(),
};

export const ReplayResult = z.object({
  window_processed: z.object({ from: z.string(), to: z.string() }),
  chunks: z.object({ done: z.number().int(), total: z.number().int() }),
  events_scanned: z.number().int(),
  bytes_scanned: z.number().int(),
  alerts: z.object({
    total: z.number().int(),
    per_day: z.array(z.object({ day: z.string(), alerts: z.number().int(), events_scanned: z.number().int() })),
    mean_per_day: z.number(),
    peak_per_day: z.number().int(),
  }),
  noise: z.object({
    sample_size: z.number().int(),
    sampled: z.boolean(),
    duplicates: z.number().int(),
    entity_fields: z.record(z.string(), z.array(z.string())),
    false_positive_matches: z.number().int(),
    false_positive_fields: z.array(z.string()),
    false_positive_alerts_considered: z.number().int(),
    noisy_alerts: z.number().int(),
    noise_ratio: z.number(),
    budget: z.object({ max_alerts_per_day: z.number(), days_over_budget: z.number().int(), alerts_over_budget: z.number().int(), within_budget: z.boolean() }).nullable(),
  }),
  latency: z.object({
    total_ms: z.number(),
    mean_chunk_ms: z.number(),
    max_chunk_ms: z.number(),
    per_chunk: z.array(z.object({ from: z.string(), to: z.string(), events_scanned: z.number().int(), alerts: z.number().int(), ms: z.number() })),
  }),
  cost: Cost,
  ...ProjectionFields,
});

export const Replay = openapi(
  z.object({
    id: z.string(),
    rule_id: z.string(),
    version: z.number().int().nullable().describe('null for an inline rule'),
    target: z.string(),
    window: z.object({ from: z.string(), to: z.string() }),
    noise_budget: NoiseBudget.nullable(),
    chunk_events: z.number().int(),
    status: z.enum(RUN_STATUSES),
    progress: z
      .object({
        chunks_done: z.number().int(),
        chunks_total: z.number().int().nullable(),
        events_scanned: z.number().int(),
        alerts: z.number().int(),
        processed_until: z.string(),
      })
      .nullable()
      .describe('While running, from the run itself; null when it cannot be asked (e.g. no worker is up)'),
    result: ReplayResult.nullable().describe('Written when the run ends: completed, or cancelled with the figures of the chunks done'),
    error: z.string().nullable(),
    workflow_id: z.string(),
    run_id: z.string().nullable(),
    created_at: z.string(),
    ended_at: z.string().nullable(),
    links: RunLinks.extend({ cancel: z.string() }),
  }),
  'Replay',
);

export const ShadowResult = z.object({
  started_at: z.string(),
  ended_at: z.string(),
  observed_seconds: z.number(),
  stopped_early: z.boolean(),
  evaluations: z.number().int(),
  workflow_runs: z.number().int(),
  cursor: z.object({ from: z.number().int(), to: z.number().int() }),
  events_scanned: z.number().int(),
  bytes_scanned: z.number().int(),
  alerts: z.object({ projected_total: z.number().int(), projected_per_day: z.number(), written: z.literal(0) }),
  latency: z.object({ total_ms: z.number(), mean_evaluation_ms: z.number(), max_evaluation_ms: z.number() }),
  cost: Cost,
  ...ProjectionFields,
});

export const Shadow = openapi(
  z.object({
    id: z.string(),
    rule_id: z.string(),
    version: z.number().int().nullable(),
    target: z.string(),
    duration: z.string(),
    interval: z.string(),
    status: z.enum(RUN_STATUSES),
    progress: z
      .object({
        started_at: z.string(),
        ends_at: z.string(),
        evaluations: z.number().int(),
        workflow_runs: z.number().int(),
        events_scanned: z.number().int(),
        alerts: z.number().int(),
        bytes_scanned: z.number().int(),
      })
      .nullable(),
    result: ShadowResult.nullable(),
    error: z.string().nullable(),
    workflow_id: z.string(),
    run_id: z.string().nullable(),
    created_at: z.string(),
    ended_at: z.string().nullable(),
    links: RunLinks.extend({ stop: z.string() }),
  }),
  'Shadow',
);

/** `GET /replays` and `GET /shadows`: newest first, by status and rule. */
export const RunListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().max(512).optional(),
    status: z.enum(RUN_STATUSES).optional(),
    rule_id: z.string().min(1).max(200).optional(),
  })
  .strict();
export const ReplayList = openapi(z.object({ items: z.array(Replay), next_cursor: z.string().nullable() }), 'ReplayList');
export const ShadowList = openapi(z.object({ items: z.array(Shadow), next_cursor: z.string().nullable() }), 'ShadowList');
