import { z } from 'zod';
import { mappingSettings } from '../remote/mapping';
import { endpointProblem, trimBase } from '../remote/endpoint';

/**
 * A Microsoft Sentinel target's `connection` settings: an Entra application (client credentials)
 * allowed to manage analytics rules on one workspace through Azure Resource Manager and to query it
 * through the Log Analytics query API. The three hosts are settings because sovereign clouds (Azure
 * Government, Azure operated by 21Vianet) answer on other hosts; the defaults are Azure's public cloud.
 */

/** The newest stable SecurityInsights API version (Azure/azure-rest-api-specs `.../Microsoft.SecurityInsights/stable/2025-09-01`). */
export const DEFAULT_API_VERSION = '2025-09-01';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const guid = (what: string) => z.string().regex(GUID, `must be the ${what} (a GUID)`);

/** `PnDTnHnMnS` (days, hours, minutes, seconds): the ISO 8601 durations Sentinel's rule settings take. */
const DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/** Milliseconds of an ISO 8601 duration of days/hours/minutes/seconds, or null when it is not one. */
export function durationMs(value: string): number | null {
  const m = DURATION.exec(value);
  if (!m || value === 'P' || value.endsWith('T')) return null;
  const [d, h, min, s] = [m[1], m[2], m[3], m[4]].map((x) => Number(x ?? 0)) as [number, number, number, number];
  return (((d * 24 + h) * 60 + min) * 60 + s) * 1000;
}

/** The ISO 8601 duration of a whole number of minutes (`PT10M`, `P1DT2H`). */
export function isoDuration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  const time = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}`;
  if (d === 0 && time === '') return 'PT0M';
  return `P${d ? `${d}D` : ''}${time ? `T${time}` : ''}`;
}

const FIVE_MINUTES = 5 * 60_000;
const FOURTEEN_DAYS = 14 * 86_400_000;

/** Sentinel runs a scheduled rule every 5 minutes to 14 days and looks back at most 14 days. */
function ruleDuration(setting: string) {
  return z.string().refine(
    (v) => {
      const ms = durationMs(v);
      return ms !== null && ms >= FIVE_MINUTES && ms <= FOURTEEN_DAYS;
    },
    { message: `${setting} must be an ISO 8601 duration from PT5M to P14D` },
  );
}

function endpoint(defaultUrl: string) {
  return z
    .string()
    .default(defaultUrl)
    .superRefine((v, ctx) => {
      const problem = endpointProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .transform(trimBase);
}

export const sentinelConnection = z
  .object({
    /** The Entra tenant (directory) id, or its verified domain name. */
    tenant_id: z.string().regex(/^(?:[0-9a-f-]{36}|[a-z0-9][a-z0-9.-]{0,252}[a-z0-9])$/i, 'must be the Entra tenant id (a GUID) or its domain name'),
    client_id: guid('application (client) id of the Entra app registration'),
    client_secret: z.string().min(1, 'must be the client secret of the Entra app registration'),
    subscription_id: guid('subscription id'),
    resource_group: z.string().regex(/^[-\w.()]{0,89}[-\w()]$/, 'must be an Azure resource group name'),
    /** The Log Analytics workspace Sentinel is enabled on (ARM resource name). */
    workspace_name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{2,61}[A-Za-z0-9]$/, 'must be a Log Analytics workspace name'),
    /** The workspace's customer id (a GUID), which the Log Analytics query API addresses it by. */
    workspace_id: guid('workspace id (the Log Analytics workspace customer id)'),
    authority_host: endpoint('https://login.microsoftonline.com'),
    arm_url: endpoint('https://management.azure.com'),
    log_analytics_url: endpoint('https://api.loganalytics.io'),
    api_version: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}(?:-preview)?$/, 'must be a SecurityInsights API version such as 2025-09-01')
      .default(DEFAULT_API_VERSION),
    query_frequency: ruleDuration('query_frequency').default('PT5M'),
    /** Defaults to twice the frequency, so a late event is still seen by the next run. */
    query_period: ruleDuration('query_period').optional(),
    ca_bundle: z
      .string()
      .refine((v) => v.includes('-----BEGIN CERTIFICATE-----'), 'must be PEM certificates (-----BEGIN CERTIFICATE-----)')
      .optional(),
    timeout_ms: z.number().int().min(1).max(600_000).default(30_000),
    max_concurrency: z.number().int().min(1).max(64).default(4),
    ingest_lag_seconds: z.number().int().min(0).max(86_400).default(60),
    ...mappingSettings('sentinel'),
  })
  .transform((c, ctx) => {
    const frequency = durationMs(c.query_frequency)!;
    const period = c.query_period ?? isoDuration(Math.min(2 * frequency, FOURTEEN_DAYS));
    if (durationMs(period)! < frequency) {
      ctx.addIssue({ code: 'custom', path: ['query_period'], message: 'query_period must be at least query_frequency (each run must cover the time since the last)' });
      return z.NEVER;
    }
    return { ...c, query_period: period };
  });

export type SentinelConnection = z.output<typeof sentinelConnection>;

/** The OAuth scope of a resource host (`https://management.azure.com` → `https://management.azure.com/.default`). */
export function scopeOf(resourceUrl: string): string {
  return `${trimBase(resourceUrl)}/.default`;
}
