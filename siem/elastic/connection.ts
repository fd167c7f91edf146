import { z } from 'zod';
import { mappingSettings } from '../remote/mapping';
import { endpointProblem, trimBase } from '../remote/endpoint';

/**
 * An Elastic Security target's `connection` settings: Kibana (detection engine API) and
 * Elasticsearch (ES|QL, fixtures, the alerts index) of one deployment, one Kibana space.
 *
 * The credential is an Elasticsearch API key (`api_key`, a credential key of
 * `siem/remote/credentials.ts`: sealed at rest, never returned). Elastic's create-API-key answer
 * gives it as `encoded` (base64 of `id:api_key`), which is what `Authorization: ApiKey …` carries;
 * `id:api_key` in clear is accepted too and encoded here.
 */

/** A Kibana space id: lower-case letters, digits, `_` and `-` (Kibana's own rule for space ids). */
const SPACE_ID = /^[a-z0-9_-]+$/;
/** One index pattern as ES|QL's FROM takes it unquoted (no spaces, pipes, quotes or commas). */
const INDEX_PATTERN = /^[A-Za-z0-9_.*:+-]+$/;
/** A rule schedule as Kibana's `interval` takes it: a number and s, m, h or d. */
const DURATION = /^[1-9]\d*[smhd]$/;
/** A look-back as Kibana's `from` takes it (`now-10m`), or a duration meaning `now-<duration>`. */
const LOOKBACK = /^(now-)?[1-9]\d*[smhd]$/;

const LEVELS = ['informational', 'low', 'medium', 'high', 'critical'] as const;
const RISK_PAIR = `\\s*(?:${LEVELS.join('|')})\\s*=\\s*(?:100|[1-9]?\\d)\\s*`;
const RISK_PAIRS = new RegExp(`^${RISK_PAIR}(?:,${RISK_PAIR})*$`);
export type RiskScores = Partial<Record<(typeof LEVELS)[number], number>>;

function url(name: string) {
  return z
    .string()
    .min(1)
    .superRefine((value, ctx) => {
      const problem = endpointProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: `${name} ${problem}` });
    })
    .transform(trimBase);
}

export const elasticConnection = z
  .object({
    kibana_url: url('kibana_url'),
    elasticsearch_url: url('elasticsearch_url'),
    space: z.string().regex(SPACE_ID, 'space must be a Kibana space id (lower-case letters, digits, _ and -)').default('default'),
    api_key: z.string().min(1, 'api_key is required (an Elasticsearch API key, its `encoded` form or id:api_key)'),
    /** Index patterns the rules search (comma-separated); by default each rule's logsource decides. */
    index: z
      .string()
      .min(1)
      .refine((v) => v.split(',').every((p) => INDEX_PATTERN.test(p.trim())), 'index must be index patterns separated by commas (letters, digits, . _ - * :)')
      .transform((v) =>
        v
          .split(',')
          .map((p) => p.trim())
          .join(','),
      )
      .optional(),
    interval: z.string().regex(DURATION, 'interval must be a duration such as 5m, 1h or 30s').default('5m'),
    lookback: z.string().regex(LOOKBACK, 'lookback must be a duration such as 10m, or now-10m').optional(),
    /**
     * Kibana risk score (0–100) per Sigma level, overriding the defaults 21/47/73/99, as
     * `level=score` pairs separated by commas (`medium=50,high=80`): target settings hold flat values.
     */
    risk_score_by_level: z
      .string()
      .regex(RISK_PAIRS, 'risk_score_by_level must be level=score pairs separated by commas (levels informational, low, medium, high, critical; scores 0 to 100)')
      .transform(
        (v) =>
          Object.fromEntries(
            v
              .split(',')
              .map((p) => p.split('=').map((x) => x.trim()))
              .map(([level, score]) => [level, Number(score)]),
          ) as RiskScores,
      )
      .optional(),
    ca_bundle: z.string().min(1).optional(),
    timeout_ms: z.coerce.number().int().min(100).max(600_000).default(30_000),
    max_concurrency: z.coerce.number().int().min(1).max(64).default(4),
    ingest_lag_seconds: z.coerce.number().int().min(0).max(86_400).default(60),
    ...mappingSettings('elastic'),
  })
  .strict();

export type ElasticConnection = z.infer<typeof elasticConnection>;

/** The value of `Authorization: ApiKey …`: the `encoded` form as given, or `id:api_key` encoded. */
export function apiKeyHeader(apiKey: string): string {
  const encoded = apiKey.includes(':') ? Buffer.from(apiKey, 'utf8').toString('base64') : apiKey;
  return `ApiKey ${encoded}`;
}

/** Kibana's `from` for a rule: the `lookback` setting, or twice the interval (runs overlap, none is missed). */
export function ruleFrom(connection: Pick<ElasticConnection, 'interval' | 'lookback'>): string {
  if (connection.lookback) return connection.lookback.startsWith('now-') ? connection.lookback : `now-${connection.lookback}`;
  const m = /^(\d+)([smhd])$/.exec(connection.interval)!;
  return `now-${Number(m[1]) * 2}${m[2]}`;
}

/** The secrets a message must never carry: the key as configured and as sent. */
export function elasticSecrets(connection: Pick<ElasticConnection, 'api_key'>): string[] {
  const sent = apiKeyHeader(connection.api_key).slice('ApiKey '.length);
  const out = [connection.api_key, sent];
  if (connection.api_key.includes(':')) out.push(...connection.api_key.split(':').filter((p) => p.length >= 8));
  return out;
}
