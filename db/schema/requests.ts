import { bigserial, index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tstz } from './columns';

/** What requests leave behind: the audit log, rate-limit counters and idempotency keys. */

export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: tstz('at').notNull().defaultNow(),
    requestId: text('request_id').notNull(),
    tokenId: uuid('token_id'),
    /** What the client presented when no token could be identified (never the secret part). */
    tokenPrefix: text('token_prefix'),
    /** The principal of the token, when one was identified. */
    principal: text('principal'),
    tenantId: text('tenant_id'),
    method: text('method').notNull(),
    route: text('route').notNull(),
    path: text('path').notNull(),
    status: integer('status').notNull(),
    durationMs: integer('duration_ms').notNull(),
    clientIp: text('client_ip'),
    userAgent: text('user_agent'),
    /** Why the request could not be authenticated (missing, not-bearer, malformed, unknown, revoked, expired, throttled); the answer does not say. */
    authFailure: text('auth_failure'),
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
