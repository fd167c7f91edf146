import { and, asc, desc, eq, gt, lt, sql } from 'drizzle-orm';
import { ruleTextDiff } from '../../sigma';
import type { ApiDeps } from '../context';
import { ruleVersions, rules } from '../../db/schema';
import { defineRoute } from '../http/route';
import { decodeCursor, encodeCursor, PageQuery } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { notFound } from '../../domain/errors';
import { storeRuleVersion } from '../../domain/rules/rule-store';
import { LatestRuleReader } from '../../domain/rules/latest-rule-reader';
import { checkRuleSize, limitsOf } from '../../domain/tenants/resource-limits';
import {
  DiffQuery,
  ListRulesQuery,
  Rule,
  RuleDiff,
  RuleIdParams,
  RuleList,
  RuleVersionDetail,
  RuleVersionList,
  RuleVersionParams,
  StoreRuleBody,
  StoredRuleVersion,
} from './schemas';

type RuleRow = typeof rules.$inferSelect;
type VersionRow = typeof ruleVersions.$inferSelect;

function ruleSummary(r: RuleRow, v: VersionRow) {
  return {
    rule_id: r.ruleId,
    title: r.title,
    latest_version: r.latestVersion,
    level: v.level,
    status: v.status,
    tags: v.tags,
    logsource: v.logsource,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

function versionInfo(v: VersionRow) {
  return {
    rule_id: v.ruleId,
    version: v.version,
    title: v.title,
    content_sha256: v.contentSha256,
    level: v.level,
    status: v.status,
    created_by: v.createdBy,
    created_at: v.createdAt.toISOString(),
  };
}

const latestJoin = and(eq(ruleVersions.tenantId, rules.tenantId), eq(ruleVersions.ruleId, rules.ruleId), eq(ruleVersions.version, rules.latestVersion));

/** The rule registry: immutable versions keyed by the Sigma rule's own id, per tenant. */
export function ruleRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const latestRules = new LatestRuleReader(deps.database);

  async function versionOf(tenantId: string, ruleId: string, version: number) {
    const [row] = await db
      .select()
      .from(ruleVersions)
      .where(and(eq(ruleVersions.tenantId, tenantId), eq(ruleVersions.ruleId, ruleId), eq(ruleVersions.version, version)));
    return row;
  }

  async function ruleExists(tenantId: string, ruleId: string) {
    const [row] = await db.select({ latest: rules.latestVersion }).from(rules).where(and(eq(rules.tenantId, tenantId), eq(rules.ruleId, ruleId)));
    if (!row) throw notFound(`No rule ${ruleId} in this tenant`);
    return row.latest;
  }

  return [
    defineRoute({
      method: 'post',
      path: '/rules',
      operationId: 'storeRule',
      summary: 'Store a Sigma rule as a new immutable version under its own id',
      tag: 'rules',
      permission: 'rules:write',
      body: StoreRuleBody,
      responses: {
        201: { description: 'A new version was stored', schema: StoredRuleVersion },
        200: { description: 'The same text was already stored; its version', schema: StoredRuleVersion },
      },
      handler: async ({ body, auth }) => {
        checkRuleSize(auth, body.rule);
        const stored = await storeRuleVersion(db, auth.tenantId, body.rule, auth.tokenId, limitsOf(auth).rules);
        return {
          status: stored.created ? 201 : 200,
          headers: { Location: `/api/v1/rules/${stored.ruleId}/versions/${stored.version}` },
          body: {
            rule_id: stored.ruleId,
            version: stored.version,
            title: stored.title,
            content_sha256: stored.contentSha256,
            created: stored.created,
            created_at: stored.createdAt.toISOString(),
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules',
      operationId: 'listRules',
      summary: 'List rules (latest versions), filtered by tag, level, status and logsource',
      tag: 'rules',
      permission: 'rules:read',
      query: ListRulesQuery,
      responses: { 200: { description: 'A page of rules, ordered by rule id', schema: RuleList } },
      handler: async ({ query, auth }) => {
        const after = decodeCursor<string>(query.cursor, 'string');
        const rows = await db
          .select({ r: rules, v: ruleVersions })
          .from(rules)
          .innerJoin(ruleVersions, latestJoin)
          .where(
            and(
              eq(rules.tenantId, auth.tenantId),
              after !== undefined ? gt(rules.ruleId, after) : undefined,
              query.tag !== undefined ? sql`${ruleVersions.tags} @> ${JSON.stringify([query.tag])}::jsonb` : undefined,
              query.level !== undefined ? eq(ruleVersions.level, query.level) : undefined,
              query.status !== undefined ? eq(ruleVersions.status, query.status) : undefined,
              query.product !== undefined ? sql`${ruleVersions.logsource} ->> 'product' = ${query.product}` : undefined,
              query.category !== undefined ? sql`${ruleVersions.logsource} ->> 'category' = ${query.category}` : undefined,
              query.service !== undefined ? sql`${ruleVersions.logsource} ->> 'service' = ${query.service}` : undefined,
            ),
          )
          .orderBy(asc(rules.ruleId))
          .limit(query.limit + 1);
        const page = rows.slice(0, query.limit);
        return {
          status: 200,
          body: { items: page.map(({ r, v }) => ruleSummary(r, v)), next_cursor: rows.length > query.limit ? encodeCursor(page.at(-1)!.r.ruleId) : null },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/{id}',
      operationId: 'getRule',
      summary: 'A rule and its latest version',
      tag: 'rules',
      permission: 'rules:read',
      params: RuleIdParams,
      responses: {
        200: { description: 'The rule', schema: Rule },
        404: { description: 'No such rule in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const row = await latestRules.read(auth.tenantId, params.id.toLowerCase());
        if (!row) throw notFound(`No rule ${params.id} in this tenant`);
        const iso = (v: Date | string) => new Date(v).toISOString();
        return {
          status: 200,
          body: {
            rule_id: row.rule_id,
            title: row.title,
            latest_version: row.latest_version,
            level: row.level,
            status: row.status,
            tags: row.tags,
            logsource: row.logsource,
            created_at: iso(row.created_at),
            updated_at: iso(row.updated_at),
            content: row.content,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/{id}/versions',
      operationId: 'listRuleVersions',
      summary: "A rule's versions, newest first",
      tag: 'rules',
      permission: 'rules:read',
      params: RuleIdParams,
      query: PageQuery.strict(),
      responses: {
        200: { description: 'A page of versions', schema: RuleVersionList },
        404: { description: 'No such rule in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth }) => {
        const ruleId = params.id.toLowerCase();
        await ruleExists(auth.tenantId, ruleId);
        const before = decodeCursor<number>(query.cursor, 'number');
        const rows = await db
          .select()
          .from(ruleVersions)
          .where(and(eq(ruleVersions.tenantId, auth.tenantId), eq(ruleVersions.ruleId, ruleId), before !== undefined ? lt(ruleVersions.version, before) : undefined))
          .orderBy(desc(ruleVersions.version))
          .limit(query.limit + 1);
        const page = rows.slice(0, query.limit);
        return { status: 200, body: { items: page.map(versionInfo), next_cursor: rows.length > query.limit ? encodeCursor(page.at(-1)!.version) : null } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/{id}/versions/{version}',
      operationId: 'getRuleVersion',
      summary: 'One version of a rule, with its text',
      tag: 'rules',
      permission: 'rules:read',
      params: RuleVersionParams,
      responses: {
        200: { description: 'The version', schema: RuleVersionDetail },
        404: { description: 'No such rule or version in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const ruleId = params.id.toLowerCase();
        const v = await versionOf(auth.tenantId, ruleId, params.version);
        if (!v) throw notFound(`No version ${params.version} of rule ${ruleId} in this tenant`);
        return { status: 200, body: { ...versionInfo(v), content: v.content } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/{id}/diff',
      operationId: 'diffRuleVersions',
      summary: 'A unified diff between two versions of a rule',
      tag: 'rules',
      permission: 'rules:read',
      params: RuleIdParams,
      query: DiffQuery,
      responses: {
        200: { description: 'The diff', schema: RuleDiff },
        404: { description: 'No such rule or version in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth }) => {
        const ruleId = params.id.toLowerCase();
        const latest = await ruleExists(auth.tenantId, ruleId);
        const to = query.to ?? latest;
        const [a, b] = await Promise.all([versionOf(auth.tenantId, ruleId, query.from), versionOf(auth.tenantId, ruleId, to)]);
        if (!a) throw notFound(`No version ${query.from} of rule ${ruleId}`);
        if (!b) throw notFound(`No version ${to} of rule ${ruleId}`);
        return { status: 200, body: { rule_id: ruleId, from: a.version, to: b.version, diff: ruleTextDiff(ruleId, a, b), changed: a.contentSha256 !== b.contentSha256 } };
      },
    }),
  ];
}
