import { z } from 'zod';
import { openapi } from '../http/zod-openapi';
import { DURATION, isoDurationField } from '../http/iso-duration';
import { ForecastDistribution } from './forecast.schemas';

/** The window of the alert-based figures: an ISO 8601 duration ending now, from one minute to a year. */
export const DEFAULT_DASHBOARD_WINDOW = 'P30D';
export const DashboardQuery = z
  .object({
    window: isoDurationField(DEFAULT_DASHBOARD_WINDOW, { min: 60 * DURATION.SECOND, max: 366 * DURATION.DAY })
      .default(DEFAULT_DASHBOARD_WINDOW)
      .describe('The period ending now of the alert-based figures (noise, workload handled, MTTR, value score), e.g. P30D or PT12H; default P30D'),
  })
  .strict();
export const NavigatorLayerQuery = z.object({}).strict();

const reason = z.string().nullable().describe('Why the figure is null or empty; null when it is not');
const count = z.object({ covered: z.number().int(), total: z.number().int(), ratio: z.number().nullable().describe('covered / total') });

const Coverage = z.object({
  attack: z.object({
    domain: z.literal('enterprise-attack'),
    version: z.string().describe('The ATT&CK release of the bundled matrix'),
    released: z.string().nullable(),
    source: z.string(),
    attribution: z.string(),
  }),
  rules: z.number().int().describe('Active rules counted'),
  techniques: count.describe('Techniques (not sub-techniques) an active rule names'),
  sub_techniques: count.describe('Sub-techniques an active rule names (a sub-technique does not cover its parent)'),
  tactics: count.extend({
    items: z.array(
      z.object({
        id: z.string(),
        shortname: z.string(),
        name: z.string(),
        covered: z.boolean().describe('An active rule covers one of its techniques or sub-techniques, or names the tactic'),
        techniques: count,
        sub_techniques: count,
        tagged_by_rules: z.number().int().describe('Active rules naming the tactic itself (attack.<tactic>)'),
      }),
    ),
  }),
  covered: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      parent: z.string().nullable().describe('The parent technique of a sub-technique'),
      tactics: z.array(z.string()),
      rules: z.array(z.string()).describe('Active rules naming it'),
    }),
  ),
  outside_matrix: z.array(
    z.object({
      technique: z.string(),
      reason: z.enum(['withdrawn', 'not_in_matrix']),
      counted_as: z.string().nullable().describe('The technique that replaced a revoked one, when the data names it; it is counted instead'),
      rules: z.array(z.string()),
    }),
  ),
  legacy_tactic_tags: z.array(
    z.object({
      tactic: z.string().describe('A tactic of an earlier release, e.g. defense-evasion'),
      rules: z.array(z.string()),
      counted_as: z.record(z.string(), z.number().int()).describe('Rules counted toward each current tactic'),
    }),
  ),
  reason,
});

const figures = { open: z.number().int(), acknowledged: z.number().int(), handled: z.number().int() };
const meanTime = { alerts: z.number().int(), mean_seconds: z.number().nullable() };
const part = { weight: z.number(), value: z.number().nullable().describe('0–1; null when unknown'), points: z.number().nullable().describe('Its share of the score'), reason };

export const HealthDashboard = openapi(
  z.object({
    generated_at: z.string(),
    window: z.object({ duration: z.string(), from: z.string(), to: z.string() }),
    environments: z.array(z.string()).nullable().describe("The token's environments; null: all of the tenant's"),
    active_rules: z.object({ rules: z.number().int(), deployments: z.number().int(), demoted_deployments: z.number().int(), reason }),
    coverage: Coverage,
    noise: z.object({
      ratio: z.number().nullable().describe('(false_positive + benign) / dispositioned'),
      dispositioned: z.number().int(),
      true_positive: z.number().int(),
      false_positive: z.number().int(),
      benign: z.number().int(),
      duplicate: z.number().int(),
      reason,
    }),
    workload: z.object({
      total: z.object(figures),
      teams: z.array(z.object({ team: z.string().nullable(), ...figures, assignees: z.array(z.object({ assignee: z.string().nullable(), ...figures })) })),
      reason,
    }),
    mttr: z.object({
      overall: z.object(meanTime),
      by_team: z.array(z.object({ team: z.string().nullable(), ...meanTime })),
      by_severity: z.array(z.object({ level: z.string().nullable(), ...meanTime })),
      reason,
    }),
    value_scores: z.object({
      formula: z.string(),
      weights: z.record(z.string(), z.number()),
      rules: z.array(
        z.object({
          rule_id: z.string(),
          title: z.string(),
          level: z.string().nullable(),
          score: z.number().describe('0–100'),
          missing: z.array(z.string()).describe('Parts left out of the score because they are unknown'),
          parts: z.object({
            signal: z.object({ ...part, snr: z.number().nullable(), true_positives: z.number().int(), false_positives: z.number().int(), benign: z.number().int() }),
            uniqueness: z.object({ ...part, techniques: z.array(z.object({ id: z.string(), other_rules: z.number().int() })) }),
            severity: z.object({ ...part, level: z.string().nullable() }),
            cost: z.object({
              ...part,
              currency: z.string().nullable(),
              triage_cost: z.number().nullable(),
              scan_cost: z.number().nullable(),
              scan_cost_reason: z.string(),
              total: z.number().nullable(),
              alerts_triaged: z.number().int(),
            }),
          }),
        }),
      ),
      reason,
    }),
    forecast_accuracy: ForecastDistribution.describe(
      'How far replays can be trusted: projected against observed alerts/day of the deployments live in the window (each observed over its whole time live)',
    ),
  }),
  'HealthDashboard',
);

const metadata = z.union([z.object({ name: z.string(), value: z.string() }), z.object({ divider: z.literal(true) })]);
export const NavigatorLayer = openapi(
  z
    .object({
      name: z.string(),
      versions: z.object({ attack: z.string(), navigator: z.string(), layer: z.literal('4.5') }),
      domain: z.literal('enterprise-attack'),
      description: z.string(),
      sorting: z.number().int(),
      layout: z.object({
        layout: z.enum(['side', 'flat', 'mini']),
        showID: z.boolean(),
        showName: z.boolean(),
        showAggregateScores: z.boolean(),
        countUnscored: z.boolean(),
        aggregateFunction: z.enum(['average', 'min', 'max', 'sum']),
        expandedSubtechniques: z.enum(['none', 'all', 'annotated']),
      }),
      hideDisabled: z.boolean(),
      techniques: z.array(z.object({ techniqueID: z.string(), score: z.number(), comment: z.string(), enabled: z.boolean(), metadata: z.array(metadata) })),
      gradient: z.object({ colors: z.array(z.string()), minValue: z.number(), maxValue: z.number() }),
      legendItems: z.array(z.object({ label: z.string(), color: z.string() })),
      showTacticRowBackground: z.boolean(),
      tacticRowBackground: z.string(),
      selectTechniquesAcrossTactics: z.boolean(),
      selectSubtechniquesWithParent: z.boolean(),
      selectVisibleTechniques: z.boolean(),
      metadata: z.array(metadata),
    })
    .describe('An ATT&CK Navigator layer (layer format 4.5): import it in the Navigator'),
  'NavigatorLayer',
);
