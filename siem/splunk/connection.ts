import { z } from 'zod';
import { endpointProblem, trimBase } from '../remote/endpoint';
import { mappingSettings } from '../remote/mapping';

/**
 * A Splunk target's `connection` settings (Splunk Enterprise or Splunk Cloud Platform, REST API on
 * the management port, 8089 by default). Credentials: an authentication token (`token`, sent as
 * `Authorization: Bearer …`, or `Splunk …` for a session key) or `username` + `password` (HTTP
 * Basic). Both are credential keys (`siem/remote/credentials.ts`): sealed at rest, never returned.
 */

/** A Splunk namespace part (app or owner): Splunk's own names, safe in a path. */
const NAMESPACE_PART = /^[A-Za-z0-9_.-]+$/;
/** An index name as Splunk allows it (lower case letters, digits, `_` and `-`, not starting with `_` or `-` except internal indexes). */
const INDEX_NAME = /^[a-z0-9_][a-z0-9_-]*$/;
/** A five-field cron expression as Splunk's `cron_schedule` takes it. */
const CRON = /^\S+ \S+ \S+ \S+ \S+$/;
/** A relative time modifier (`-10m@m`, `now`, `-1h`, `rt-5m`), as `dispatch.earliest_time` takes it. */
const TIME_MODIFIER = /^(now|rt|rt-?\d*[a-z]*(@[a-z0-9]+)?|[+-]?\d+[a-z]+(@[a-z0-9]+)?|@[a-z0-9]+|\d{9,11}(\.\d+)?)$/;

export const splunkConnection = z
  .object({
    management_url: z
      .string()
      .min(1)
      .superRefine((value, ctx) => {
        const problem = endpointProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: `management_url ${problem}` });
      })
      .transform(trimBase),
    token: z.string().min(1).optional(),
    token_scheme: z.enum(['Bearer', 'Splunk']).default('Bearer'),
    username: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
    app: z.string().regex(NAMESPACE_PART, 'app must be a Splunk app name (letters, digits, _ . -)').default('search'),
    owner: z.string().regex(NAMESPACE_PART, 'owner must be a Splunk user name (letters, digits, _ . -), or nobody').default('nobody'),
    /** The index (or comma-separated indexes) rules search. */
    index: z
      .string()
      .min(1)
      .refine((v) => v.split(',').every((i) => INDEX_NAME.test(i.trim())), 'index must be an index name or a comma-separated list of index names')
      .default('main'),
    /** How often the saved searches run, in minutes (the cron schedule when `cron_schedule` is not given). */
    schedule_minutes: z.coerce.number().int().min(1).max(59).default(5),
    cron_schedule: z.string().regex(CRON, 'cron_schedule must be a five-field cron expression').optional(),
    dispatch_earliest: z.string().regex(TIME_MODIFIER, 'dispatch_earliest must be a Splunk time modifier such as -10m@m').optional(),
    dispatch_latest: z.string().regex(TIME_MODIFIER, 'dispatch_latest must be a Splunk time modifier such as now').default('now'),
    /** Alert actions to run when a saved search triggers (comma-separated, e.g. `email,webhook`); none by default. */
    alert_action: z
      .string()
      .regex(/^[a-z0-9_]+(,[a-z0-9_]+)*$/, 'alert_action must be alert action names, comma-separated')
      .optional(),
    /** How long Splunk keeps a triggered alert (and so how far back alert statistics reach): `alert.expires`. */
    alert_expires: z
      .string()
      .regex(/^\d+[smhd]?$/, 'alert_expires must be a duration such as 7d or 24h')
      .default('7d'),
    ca_bundle: z.string().min(1).optional(),
    timeout_ms: z.coerce.number().int().min(100).max(600_000).default(30_000),
    max_concurrency: z.coerce.number().int().min(1).max(64).default(4),
    ingest_lag_seconds: z.coerce.number().int().min(0).max(86_400).default(60),
    ...mappingSettings('splunk'),
  })
  .superRefine((c, ctx) => {
    const basic = c.username !== undefined || c.password !== undefined;
    if (c.token !== undefined && basic) ctx.addIssue({ code: 'custom', path: ['token'], message: 'give either token or username and password, not both' });
    else if (c.token === undefined && !(c.username !== undefined && c.password !== undefined))
      ctx.addIssue({ code: 'custom', path: ['token'], message: 'token (a Splunk authentication token) or username and password is required' });
  });

export type SplunkConnection = z.infer<typeof splunkConnection>;

/** The saved searches' cron schedule: the setting, else every `schedule_minutes` minutes. */
export function cronSchedule(c: SplunkConnection): string {
  return c.cron_schedule ?? `*/${c.schedule_minutes} * * * *`;
}

/** The saved searches' dispatch window start: the setting, else twice the schedule interval back, snapped to the minute. */
export function dispatchEarliest(c: SplunkConnection): string {
  return c.dispatch_earliest ?? `-${2 * c.schedule_minutes}m@m`;
}

/** The indexes rules search, in order. */
export function indexes(c: SplunkConnection): string[] {
  return c.index
    .split(',')
    .map((i) => i.trim())
    .filter((i) => i !== '');
}
