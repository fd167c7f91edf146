import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, tstz } from './columns';
import { tenants } from './tenants';

/** The rule registry: rules, their immutable versions, and rule test runs. */

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
  (t) => [primaryKey({ columns: [t.tenantId, t.ruleId, t.version] }), uniqueIndex('rule_versions_content').on(t.tenantId, t.ruleId, t.contentSha256)],
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
