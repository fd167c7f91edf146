import { z } from 'zod';
import { openapi } from '../http/zod-openapi';
import { DURATION, isoDurationField } from '../http/iso-duration';
import { PageQuery } from '../http/pagination';
import { WEBHOOK_EVENTS } from '../../db/schema';
import { PERMISSIONS } from '../../domain/tenants/permissions';
import { TIERS } from '../../config/env';

const environmentName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lowercase letters, digits, _ and -');

export const CreateApiKeyBody = openapi(
  z
    .object({
      name: z.string().min(1).max(200),
      permissions: z.array(z.enum(PERMISSIONS)).min(1),
      environments: z.array(environmentName).min(1).nullable().default(null).describe('null: every environment of the tenant'),
      expires_at: z.iso
        .datetime({ offset: true })
        .nullable()
        .default(null)
        .describe('null: never. Capped at the creating token’s own expiry (see expires_at_capped in the answer)'),
      principal: z
        .string()
        .trim()
        .min(1)
        .max(200)
        .optional()
        .describe('The person the token acts for (e.g. an email); the creating token’s when absent. Another person’s needs an admin token'),
    })
    .strict(),
  'CreateApiKey',
);

export const ApiKey = openapi(
  z.object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe('The first characters of the token, to recognise it'),
    tenant_id: z.string(),
    permissions: z.array(z.string()),
    environments: z.array(z.string()).nullable(),
    principal: z.string().describe('The person (or system) the token acts for; four-eyes compares principals'),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  }),
  'ApiKey',
);

export const CreatedApiKey = openapi(
  ApiKey.extend({
    token: z.string().describe('The token itself, shown only in this response'),
    expires_at_capped: z.boolean().describe('true when expires_at was brought forward to the creating token’s expiry: a token may not outlive its creator'),
  }),
  'CreatedApiKey',
);

export const ApiKeyList = openapi(z.object({ items: z.array(ApiKey), next_cursor: z.string().nullable() }), 'ApiKeyList');

export const IdParams = z.object({ id: z.string().min(1).max(200) }).strict();
export const UuidParams = z.object({ id: z.uuid() }).strict();

export const CreateTenantBody = openapi(
  z
    .object({
      id: z.string().regex(/^[a-z0-9][a-z0-9_-]{1,62}$/, 'lowercase letters, digits, _ and -, 2 to 63 characters'),
      name: z.string().min(1).max(200),
      tier: z.enum(TIERS),
      environments: z.array(environmentName).min(1).max(50).default(['dev', 'staging', 'prod']),
    })
    .strict(),
  'CreateTenant',
);

export const UpdateTenantBody = openapi(
  z
    .object({
      name: z.string().min(1).max(200).optional(),
      tier: z.enum(TIERS).optional(),
      retention_days: z.number().int().min(1).max(3650).optional().describe('Days the local event store keeps the tenant’s events'),
    })
    .strict()
    .refine((v) => v.name !== undefined || v.tier !== undefined || v.retention_days !== undefined, 'give name, tier or retention_days'),
  'UpdateTenant',
);

export const Tenant = openapi(
  z.object({ id: z.string(), name: z.string(), tier: z.enum(TIERS), retention_days: z.number().int(), environments: z.array(z.string()), created_at: z.string() }),
  'Tenant',
);
export const CreatedTenant = openapi(Tenant.extend({ admin_token: CreatedApiKey }), 'CreatedTenant');
export const TenantList = openapi(z.object({ items: z.array(Tenant), next_cursor: z.string().nullable() }), 'TenantList');

export const AuditEntry = openapi(
  z.object({
    id: z.number().int(),
    at: z.string(),
    request_id: z.string(),
    token_id: z.string().nullable(),
    token_prefix: z.string().nullable(),
    principal: z.string().nullable().describe('The person the token acts for'),
    tenant_id: z.string().nullable(),
    method: z.string(),
    route: z.string(),
    path: z.string(),
    status: z.number().int(),
    duration_ms: z.number().int(),
    client_ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    auth_failure: z
      .enum(['missing', 'not-bearer', 'malformed', 'unknown', 'revoked', 'expired', 'throttled'])
      .nullable()
      .describe('Why the request could not be authenticated; null when it was'),
  }),
  'AuditEntry',
);
export const AuditList = openapi(z.object({ items: z.array(AuditEntry), next_cursor: z.string().nullable() }), 'AuditList');
export const AuditQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(100),
    cursor: z.string().max(512).optional(),
    status: z.coerce.number().int().min(100).max(599).optional(),
    token_id: z.uuid().optional(),
  })
  .strict();

export const CostModel = openapi(
  z
    .object({
      currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as USD'),
      price_per_gb_scanned: z.number().min(0),
      triage_minutes_per_alert: z.number().min(0),
      cost_per_analyst_hour: z.number().min(0),
    })
    .strict(),
  'CostModel',
);

/** How often scheduled detection runs: a Temporal Schedule interval, from a second to a day. */
const detectionInterval = isoDurationField('PT5M', { min: DURATION.SECOND, max: DURATION.DAY });

export const TargetBody = openapi(
  z
    .object({
      name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lowercase letters, digits, _ and -'),
      kind: z.enum(['local', 'splunk', 'elastic', 'sentinel']),
      environment: z.string().min(1).max(63),
      connection: z
        .record(z.string().max(100), z.union([z.string().max(32_768), z.number(), z.boolean()]))
        .default({})
        .describe(
          'The kind\'s settings: addresses, credentials (sealed at rest, shown as "********"; send that back to keep one), index/workspace, `ca_bundle` (PEM). See the README\'s section on each SIEM',
        ),
      detection_interval: detectionInterval.default('PT5M'),
      cost_model: CostModel,
    })
    .strict(),
  'TargetRequest',
);

export const Target = openapi(
  z.object({
    name: z.string(),
    kind: z.enum(['local', 'splunk', 'elastic', 'sentinel']),
    environment: z.string(),
    connection: z.record(z.string(), z.unknown()).describe('Credentials are shown as "********"'),
    detection_interval: z.string(),
    cost_model: CostModel,
    built_in: z.boolean(),
    placeholders: z.record(z.string(), z.array(z.string())).describe("The target's own placeholder values (GET …/placeholders shows the resolved ones)"),
    settings_version: z.number().int().describe('The version of its rule-shaping settings (placeholder values, field mapping)'),
    created_at: z.string(),
    updated_at: z.string(),
  }),
  'Target',
);
export const TargetList = openapi(z.object({ items: z.array(Target) }), 'TargetList');

/** `|expand` placeholder values: a name (without `%`) to one or more values. */
const PlaceholderMap = z
  .record(z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'letters, digits, _, . and -'), z.array(z.string().min(1).max(1024)).min(1).max(1000))
  .refine((m) => Object.keys(m).length <= 200, 'at most 200 placeholders')
  .describe("Placeholder name (as in `%name%`, without the %) → its values; a rule's `|expand` value becomes the OR of the value with each");

export const PlaceholdersBody = openapi(z.object({ placeholders: PlaceholderMap }).strict(), 'PlaceholdersRequest');

export const TargetPlaceholders = openapi(
  z.object({
    target: z.string(),
    environment: z.string(),
    version: z.number().int().describe("The target's settings version (placeholder values, mapping), recorded on each deployment"),
    placeholders: z.record(z.string(), z.array(z.string())).describe("The target's own values"),
    environment_defaults: z.record(z.string(), z.array(z.string())).describe("The environment's defaults"),
    resolved: z.record(z.string(), z.array(z.string())).describe("What rules are compiled with: the defaults overlaid with the target's own"),
  }),
  'TargetPlaceholders',
);

export const SettingsChangePending = openapi(
  z.object({
    status: z.literal('pending_approval'),
    target: z.string(),
    approval_id: z.string(),
    proposed_version: z.number().int(),
    affected: z
      .array(z.object({ deployment_id: z.string(), rule_id: z.string(), version: z.number().int(), title: z.string(), reason: z.string() }))
      .describe('The live rules the change alters; the approval replays each with the settings in force and the proposed ones'),
    links: z.object({ approval: z.string() }),
  }),
  'SettingsChangePending',
);

export const EnvironmentPlaceholders = openapi(
  z.object({ environment: z.string(), version: z.number().int(), placeholders: z.record(z.string(), z.array(z.string())) }),
  'EnvironmentPlaceholders',
);
export const NameParams = z.object({ name: z.string().min(1).max(63) }).strict();

const NOTIFY_EVENTS = WEBHOOK_EVENTS.filter((e) => e !== 'webhook.test');

export const PutWebhookBody = openapi(
  z
    .object({
      url: z.url({ protocol: /^https?$/ }).max(2048),
      secret: z.string().min(16).max(256).optional().describe('HMAC key for X-Detflow-Signature; required the first time, kept when omitted later'),
      events: z
        .array(z.enum(NOTIFY_EVENTS))
        .min(1)
        .default([...NOTIFY_EVENTS]),
      enabled: z.boolean().default(true),
    })
    .strict(),
  'PutWebhook',
);

export const Webhook = openapi(
  z.object({
    url: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    secret_set: z.boolean().describe('The secret itself is never returned'),
    updated_at: z.string(),
  }),
  'Webhook',
);

const DeliveryAttempt = z.object({
  attempt: z.number().int(),
  at: z.string(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
});
const Delivery = openapi(
  z.object({
    id: z.string(),
    event: z.string(),
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.array(DeliveryAttempt),
    /** Why it was given up (or why the last attempt failed); null once delivered. */
    last_error: z.string().nullable(),
    created_at: z.string(),
    delivered_at: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()),
  }),
  'WebhookDelivery',
);
export const DeliveryList = openapi(z.object({ items: z.array(Delivery), next_cursor: z.string().nullable() }), 'WebhookDeliveryList');
export const DeliveryQuery = PageQuery.extend({ status: z.enum(['pending', 'delivered', 'failed']).optional(), event: z.enum(WEBHOOK_EVENTS).optional() }).strict();
