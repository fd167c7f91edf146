import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import {
  ALERT_STATUSES,
  APPROVAL_STATUSES,
  DEPLOYMENT_STATUSES,
  DISPOSITIONS,
  RUN_STATUSES,
  type NoiseBudgetPolicy,
} from '../domain/contracts';

// Until every importer reads the statuses from the contracts module.
export {
  ALERT_STATUSES,
  APPROVAL_STATUSES,
  DEPLOYMENT_STATUSES,
  DISPOSITIONS,
  FINAL_DEPLOYMENT_STATUSES,
  LIVE_DEPLOYMENT_STATUSES,
  ON_EXCEED_POLICIES,
  RUN_STATUSES,
  type DeploymentStatus,
  type NoiseBudgetPolicy,
  type RunStatus,
} from '../domain/contracts';

/**
 * The records people query. Temporal holds the state of every run; these tables hold what the API
 * reads back: who may do what (tenants, tokens), what exists (rules, targets) and what happened
 * (deployments, approvals, audit).
 */

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const tenants = pgTable('tenants', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  tier: text('tier', { enum: ['free', 'professional', 'enterprise', 'unlimited'] }).notNull(),
  /** Days the local event store keeps this tenant's events; older ones are deleted daily. */
  retentionDays: integer('retention_days').notNull().default(90),
  createdAt: createdAt(),
});

export const environments = pgTable(
  'environments',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.name] })],
);

export const targets = pgTable(
  'targets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    kind: text('kind', { enum: ['local', 'splunk', 'elastic', 'sentinel'] }).notNull(),
    environment: text('environment').notNull(),
    /** Connection settings; secrets inside are encrypted with DETFLOW_SECRET_KEY. */
    connection: jsonb('connection').$type<Record<string, unknown>>().notNull().default({}),
    detectionInterval: text('detection_interval').notNull().default('PT5M'),
    costModel: jsonb('cost_model').$type<TargetCostModel>().notNull(),
    builtIn: boolean('built_in').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('targets_tenant_name').on(t.tenantId, t.name)],
);

export type TargetCostModel = {
  currency: string;
  price_per_gb_scanned: number;
  triage_minutes_per_alert: number;
  cost_per_analyst_hour: number;
};

export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** First characters of the token, safe to show in lists and audit rows. */
    displayPrefix: text('display_prefix').notNull(),
    /** SHA-256 of the whole token, hex. The token itself is never stored. */
    hash: text('hash').notNull(),
    /** Environment names, or null for every environment of the tenant. */
    environments: jsonb('environments').$type<string[] | null>(),
    permissions: jsonb('permissions').$type<string[]>().notNull(),
    createdBy: uuid('created_by'),
    createdAt: createdAt(),
    expiresAt: tstz('expires_at'),
    revokedAt: tstz('revoked_at'),
  },
  (t) => [uniqueIndex('api_tokens_hash').on(t.hash), index('api_tokens_tenant').on(t.tenantId)],
);

export const rules = pgTable(
  'rules',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    title: text('title').notNull(),
    latestVersion: integer('latest_version').notNull(),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.ruleId] })],
);

export const ruleVersions = pgTable(
  'rule_versions',
  {
    tenantId: text('tenant_id').notNull(),
    ruleId: text('rule_id').notNull(),
    version: integer('version').notNull(),
    content: text('content').notNull(),
    contentSha256: text('content_sha256').notNull(),
    title: text('title').notNull(),
    level: text('level'),
    status: text('status'),
    tags: jsonb('tags').$type<string[]>().notNull().default([]),
    logsource: jsonb('logsource').$type<Record<string, string>>().notNull().default({}),
    createdBy: uuid('created_by'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.ruleId, t.version] }),
    uniqueIndex('rule_versions_content').on(t.tenantId, t.ruleId, t.contentSha256),
  ],
);


/** The last demotion of a deployment and, once a person promoted it back, who did and when. */
export type Demotion = {
  demoted_at: string;
  reason: string;
  alerts: number;
  budget: number;
  promoted_at?: string;
  promoted_by?: string;
  comment?: string | null;
};

export const deployments = pgTable(
  'deployments',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    version: integer('version').notNull(),
    targetId: uuid('target_id')
      .notNull()
      .references(() => targets.id),
    status: text('status', { enum: DEPLOYMENT_STATUSES }).notNull(),
    approvalRequired: boolean('approval_required').notNull(),
    noiseBudget: jsonb('noise_budget').$type<NoiseBudgetPolicy | null>(),
    workflowId: text('workflow_id').notNull(),
    runId: text('run_id'),
    demotion: jsonb('demotion').$type<Demotion>(),
    requestedBy: uuid('requested_by'),
    error: text('error'),
    /** Local targets: the event-store cursor up to which scheduled detection has evaluated. */
    detectionCursor: bigint('detection_cursor', { mode: 'number' }),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
    activatedAt: tstz('activated_at'),
    endedAt: tstz('ended_at'),
  },
  (t) => [
    uniqueIndex('deployments_workflow').on(t.workflowId),
    index('deployments_rule_target').on(t.tenantId, t.ruleId, t.targetId),
  ],
);

export type Deployment = typeof deployments.$inferSelect;


export const approvals = pgTable(
  'approvals',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    version: integer('version').notNull(),
    targets: jsonb('targets').$type<string[]>().notNull(),
    /** One deployment per target, all decided by this approval. */
    deploymentIds: jsonb('deployment_ids').$type<string[]>().notNull(),
    noiseBudget: jsonb('noise_budget').$type<NoiseBudgetPolicy | null>(),
    status: text('status', { enum: APPROVAL_STATUSES }).notNull(),
    description: text('description'),
    link: text('link'),
    impact: jsonb('impact').$type<Record<string, unknown>>(),
    requestedBy: uuid('requested_by'),
    decidedBy: uuid('decided_by'),
    decision: text('decision'),
    comment: text('comment'),
    workflowId: text('workflow_id').notNull(),
    createdAt: createdAt(),
    decidedAt: tstz('decided_at'),
    expiresAt: tstz('expires_at'),
  },
  (t) => [index('approvals_tenant_status').on(t.tenantId, t.status)],
);

export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: tstz('at').notNull().defaultNow(),
    requestId: text('request_id').notNull(),
    tokenId: uuid('token_id'),
    /** What the client presented when no token could be identified (never the secret part). */
    tokenPrefix: text('token_prefix'),
    tenantId: text('tenant_id'),
    method: text('method').notNull(),
    route: text('route').notNull(),
    path: text('path').notNull(),
    status: integer('status').notNull(),
    durationMs: integer('duration_ms').notNull(),
    clientIp: text('client_ip'),
    userAgent: text('user_agent'),
  },
  (t) => [index('audit_tenant_at').on(t.tenantId, t.at)],
);

/**
 * Requests per bucket per UTC day. A bucket is `tenant:<id>` for authenticated requests and
 * `anon:<client address>` for requests that could not be attributed to a tenant.
 */
export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    bucket: text('bucket').notNull(),
    day: text('day').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.day] })],
);

export const webhookSettings = pgTable('webhook_settings', {
  tenantId: text('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  /** HMAC secret, encrypted with DETFLOW_SECRET_KEY. */
  secret: text('secret').notNull(),
  events: jsonb('events').$type<string[]>().notNull(),
  enabled: boolean('enabled').notNull().default(true),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});

/** Keeps the answer of a POST that started work, so a retried request gets the same resource. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    tenantId: text('tenant_id').notNull(),
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    /** SHA-256 of the request body: the same key with a different request is a conflict. */
    requestHash: text('request_hash').notNull(),
    resourceId: text('resource_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.scope, t.key] })],
);

export const WEBHOOK_EVENTS = [
  'approval.requested',
  'approval.decided',
  'deployment.succeeded',
  'deployment.failed',
  'rollback.completed',
  'deployment.demoted',
  'deployment.promoted',
  'replay.completed',
  'shadow.completed',
  'noise_budget.exceeded',
  'webhook.test',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** One notification to one tenant's webhook; retried until delivered or given up. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    event: text('event').notNull(),
    /** What caused it (e.g. a workflow id and step), so a retried activity never creates a second delivery. */
    sourceKey: text('source_key').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    url: text('url').notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    deliveredAt: tstz('delivered_at'),
  },
  (t) => [uniqueIndex('webhook_deliveries_source').on(t.tenantId, t.sourceKey), index('webhook_deliveries_tenant').on(t.tenantId, t.createdAt)],
);

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    at: tstz('at').notNull().defaultNow(),
    statusCode: integer('status_code'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
  },
  (t) => [index('webhook_attempts_delivery').on(t.deliveryId)],
);


/** Alerts raised by scheduled detection; one per matched event per deployment, never twice. */
export const alerts = pgTable(
  'alerts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    deploymentId: uuid('deployment_id')
      .notNull()
      .references(() => deployments.id),
    ruleId: text('rule_id').notNull(),
    version: integer('version').notNull(),
    targetId: uuid('target_id').notNull(),
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull(),
    eventId: text('event_id').notNull(),
    eventTime: tstz('event_time').notNull(),
    event: jsonb('event').$type<Record<string, unknown>>().notNull(),
    /** `suppressed`: raised beyond the deployment's noise budget for its UTC day, counted but not worked. */
    status: text('status', { enum: ALERT_STATUSES }).notNull(),
    disposition: text('disposition', { enum: DISPOSITIONS }),
    assignee: text('assignee'),
    team: text('team'),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
    acknowledgedAt: tstz('acknowledged_at'),
    closedAt: tstz('closed_at'),
  },
  (t) => [
    uniqueIndex('alerts_deployment_event').on(t.deploymentId, t.eventSeq),
    index('alerts_tenant_created').on(t.tenantId, t.createdAt),
    index('alerts_tenant_rule').on(t.tenantId, t.ruleId),
  ],
);

/** Every scheduled detection run: what it scanned, matched, raised and suppressed, or why it failed. */
export const detectionRuns = pgTable(
  'detection_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id').notNull(),
    deploymentId: uuid('deployment_id')
      .notNull()
      .references(() => deployments.id),
    ruleId: text('rule_id').notNull(),
    startedAt: tstz('started_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    eventsScanned: bigint('events_scanned', { mode: 'number' }).notNull(),
    matches: integer('matches').notNull(),
    alertsRaised: integer('alerts_raised').notNull(),
    alertsSuppressed: integer('alerts_suppressed').notNull(),
    /** `alert`, or `shadow` while the deployment is demoted: matches counted, no alert raised. */
    mode: text('mode', { enum: ['alert', 'shadow'] }).notNull().default('alert'),
    cursorFrom: bigint('cursor_from', { mode: 'number' }).notNull(),
    cursorTo: bigint('cursor_to', { mode: 'number' }).notNull(),
    error: text('error'),
    /**
     * The Temporal activity execution that made this run (workflow id, run id, activity id), and
     * what it returned: an attempt retried after this one committed returns the same outcome
     * instead of finding nothing new, so the run's noise-budget crossing is never lost.
     */
    activityKey: text('activity_key'),
    outcome: jsonb('outcome').$type<Record<string, unknown>>(),
  },
  (t) => [
    index('detection_runs_deployment').on(t.deploymentId, t.startedAt),
    index('detection_runs_tenant_rule').on(t.tenantId, t.ruleId, t.startedAt),
    uniqueIndex('detection_runs_activity_key').on(t.activityKey),
  ],
);

/** Every rule test run (POST /rules/test), readable by id afterwards. */
export const ruleTestRuns = pgTable(
  'rule_test_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    version: integer('version').notNull(),
    targetId: uuid('target_id').notNull(),
    passed: boolean('passed').notNull(),
    total: integer('total').notNull(),
    failed: integer('failed').notNull(),
    result: jsonb('result').$type<Record<string, unknown>>().notNull(),
    createdBy: uuid('created_by'),
    createdAt: createdAt(),
  },
  (t) => [index('rule_test_runs_rule').on(t.tenantId, t.ruleId, t.createdAt)],
);


/**
 * Replays (POST /rules/replay): a rule over a past window of a target's data. The rule text is kept
 * as it was replayed, so an inline rule and a stored version read back the same way. `result` is
 * written once, when the run ends (completed, or cancelled with the figures of what was processed).
 */
export const replays = pgTable(
  'replays',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    /** null for an inline rule (sent in the request, not stored). */
    version: integer('version'),
    ruleContent: text('rule_content').notNull(),
    targetId: uuid('target_id').notNull(),
    windowFrom: tstz('window_from').notNull(),
    windowTo: tstz('window_to').notNull(),
    noiseBudget: jsonb('noise_budget').$type<NoiseBudgetPolicy>(),
    chunkEvents: integer('chunk_events').notNull(),
    status: text('status', { enum: RUN_STATUSES }).notNull(),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: text('error'),
    workflowId: text('workflow_id').notNull(),
    runId: text('run_id'),
    requestedBy: uuid('requested_by'),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
    endedAt: tstz('ended_at'),
  },
  (t) => [index('replays_tenant_status').on(t.tenantId, t.status)],
);

/** Shadow evaluations (POST /rules/shadow): a rule over live data for a while; never raises an alert. */
export const shadowRuns = pgTable(
  'shadow_runs',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    ruleId: text('rule_id').notNull(),
    version: integer('version'),
    ruleContent: text('rule_content').notNull(),
    targetId: uuid('target_id').notNull(),
    duration: text('duration').notNull(),
    interval: text('interval').notNull(),
    status: text('status', { enum: RUN_STATUSES }).notNull(),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: text('error'),
    workflowId: text('workflow_id').notNull(),
    runId: text('run_id'),
    requestedBy: uuid('requested_by'),
    createdAt: createdAt(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
    endedAt: tstz('ended_at'),
  },
  (t) => [index('shadow_runs_tenant_status').on(t.tenantId, t.status)],
);
