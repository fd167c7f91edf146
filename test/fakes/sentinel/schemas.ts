/**
 * Request schemas of the fake Azure, written by hand from Azure's published API descriptions:
 *
 * - SecurityInsights `AlertRules.json`, api-version 2025-09-01 (Azure/azure-rest-api-specs,
 *   specification/securityinsights/resource-manager/Microsoft.SecurityInsights/stable/2025-09-01/
 *   AlertRules.json): `AlertRule` (discriminator `kind`: Scheduled | MicrosoftSecurityIncidentCreation
 *   | Fusion; `etag` from ResourceWithEtag), `ScheduledAlertRuleProperties` (required: displayName,
 *   enabled, severity, query, queryFrequency, queryPeriod, triggerOperator, triggerThreshold,
 *   suppressionEnabled, suppressionDuration), `AlertRuleTriggerOperator`, `IncidentConfiguration`,
 *   `EventGroupingSettings`; `common/AlertTypes.json` `AlertSeverityEnum` and `AttackTactic`
 *   (as the generated azure_mgmt_securityinsight models list them).
 * - Sentinel's documented rule limits (learn.microsoft.com/azure/sentinel/create-analytics-rules):
 *   a query of at most 10,000 characters, run every 5 minutes to 14 days over at most 14 days,
 *   suppression of at most 24 hours.
 * - The Log Analytics query API request (learn.microsoft.com/azure/azure-monitor/logs/api/request-format):
 *   `{ query, timespan?, workspaces? }`.
 * - The identity platform's client-credentials token request (learn.microsoft.com/entra/identity-platform/
 *   v2-oauth2-client-creds-grant-flow): form fields grant_type, client_id, client_secret, scope.
 */
import { z } from 'zod';

export const API_VERSIONS = ['2020-01-01', '2021-04-01', '2024-03-01', '2024-09-01', '2025-03-01', '2025-06-01', '2025-09-01'] as const;

const DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

export function isoDurationMs(value: string): number | null {
  const m = DURATION.exec(value);
  if (!m || value === 'P' || value.endsWith('T')) return null;
  const [d, h, min, s] = [m[1], m[2], m[3], m[4]].map((x) => Number(x ?? 0)) as [number, number, number, number];
  return (((d * 24 + h) * 60 + min) * 60 + s) * 1000;
}

const duration = (name: string, minMs: number, maxMs: number, range: string) =>
  z.string().refine(
    (v) => {
      const ms = isoDurationMs(v);
      return ms !== null && ms >= minMs && ms <= maxMs;
    },
    { message: `${name} must be an ISO 8601 duration ${range}` },
  );

export const ATTACK_TACTICS = [
  'Reconnaissance',
  'ResourceDevelopment',
  'InitialAccess',
  'Execution',
  'Persistence',
  'PrivilegeEscalation',
  'DefenseEvasion',
  'CredentialAccess',
  'Discovery',
  'LateralMovement',
  'Collection',
  'Exfiltration',
  'CommandAndControl',
  'Impact',
  'PreAttack',
  'ImpairProcessControl',
  'InhibitResponseFunction',
] as const;

const severity = z.enum(['High', 'Medium', 'Low', 'Informational']);

const groupingConfiguration = z
  .object({
    enabled: z.boolean(),
    reopenClosedIncident: z.boolean(),
    lookbackDuration: z.string().refine((v) => isoDurationMs(v) !== null, 'lookbackDuration must be an ISO 8601 duration'),
    matchingMethod: z.enum(['AllEntities', 'AnyAlert', 'Selected']),
    groupByEntities: z.array(z.string()).optional(),
    groupByAlertDetails: z.array(z.enum(['DisplayName', 'Severity'])).optional(),
    groupByCustomDetails: z.array(z.string()).optional(),
  })
  .strict();

export const scheduledRuleProperties = z
  .object({
    displayName: z.string().min(1),
    description: z.string().optional(),
    enabled: z.boolean(),
    severity,
    query: z.string().min(1).max(10_000, 'query is longer than 10,000 characters'),
    queryFrequency: duration('queryFrequency', 5 * 60_000, 14 * 86_400_000, 'from PT5M to P14D'),
    queryPeriod: duration('queryPeriod', 5 * 60_000, 14 * 86_400_000, 'from PT5M to P14D'),
    triggerOperator: z.enum(['GreaterThan', 'LessThan', 'Equal', 'NotEqual']),
    triggerThreshold: z.number().int().min(-2147483648).max(2147483647),
    suppressionEnabled: z.boolean(),
    suppressionDuration: duration('suppressionDuration', 5 * 60_000, 86_400_000, 'from PT5M to P1D'),
    tactics: z.array(z.enum(ATTACK_TACTICS)).optional(),
    techniques: z.array(z.string().regex(/^T\d{4}$/, 'techniques are parent technique ids such as T1059')).optional(),
    alertRuleTemplateName: z.string().optional(),
    templateVersion: z.string().optional(),
    incidentConfiguration: z.object({ createIncident: z.boolean(), groupingConfiguration: groupingConfiguration.optional() }).strict().optional(),
    eventGroupingSettings: z
      .object({ aggregationKind: z.enum(['SingleAlert', 'AlertPerResult']).optional() })
      .strict()
      .optional(),
    customDetails: z.record(z.string(), z.string()).optional(),
    entityMappings: z
      .array(
        z.object({ entityType: z.string().optional(), fieldMappings: z.array(z.object({ identifier: z.string().optional(), columnName: z.string().optional() })).optional() }),
      )
      .optional(),
    alertDetailsOverride: z.record(z.string(), z.unknown()).optional(),
    /** readOnly: accepted and ignored, as ARM does. */
    lastModifiedUtc: z.string().optional(),
  })
  .strict();

/** AlertRules_CreateOrUpdate's body. The fake stores Scheduled rules only; other kinds are refused by name. */
export const alertRulePut = z
  .object({
    kind: z.enum(['Scheduled', 'MicrosoftSecurityIncidentCreation', 'Fusion']),
    etag: z.string().optional(),
    id: z.string().optional(),
    name: z.string().optional(),
    type: z.string().optional(),
    properties: z.record(z.string(), z.unknown()),
  })
  .strict();

export const logAnalyticsQuery = z
  .object({
    query: z.string().min(1),
    timespan: z.string().optional(),
    workspaces: z.array(z.string()).optional(),
  })
  .strict();

export const tokenRequest = z.object({
  grant_type: z.literal('client_credentials'),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  scope: z.string().regex(/\/\.default$/, 'the client credentials flow takes a scope of the form {resource}/.default'),
});

export function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
}
