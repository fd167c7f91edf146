import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { ApiDeps } from '../context';
import { ruleVersions, rules } from '../../db/schema';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { ProblemSchema, notFound } from '../http/problem';
import { IdParams } from '../settings/schemas';
import { storeRuleVersion } from './rule-store';

export const StoreRuleBody = openapi(
  z.object({ rule: z.string().min(1).describe('The Sigma rule, as YAML') }).strict(),
  'StoreRuleRequest',
);

export const RuleVersion = openapi(
  z.object({
    rule_id: z.string(),
    version: z.number().int(),
    title: z.string(),
    content_sha256: z.string(),
    created: z.boolean().describe('false when this exact text was already stored as this version'),
    created_at: z.string(),
  }),
  'RuleVersion',
);

export const Rule = openapi(
  z.object({
    rule_id: z.string(),
    title: z.string(),
    latest_version: z.number().int(),
    level: z.string().nullable(),
    status: z.string().nullable(),
    tags: z.array(z.string()),
    logsource: z.record(z.string(), z.string()),
    content: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
  'Rule',
);

export function ruleRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  // Prepared once: reading a rule is the most frequent call of CI pipelines and dashboards.
  const latestVersionOf = db
    .select({ r: rules, v: ruleVersions })
    .from(rules)
    .innerJoin(
      ruleVersions,
      and(eq(ruleVersions.tenantId, rules.tenantId), eq(ruleVersions.ruleId, rules.ruleId), eq(ruleVersions.version, rules.latestVersion)),
    )
    .where(and(eq(rules.tenantId, sql.placeholder('tenantId')), eq(rules.ruleId, sql.placeholder('ruleId'))))
    .prepare('detflow_latest_rule_version');
  return [
    defineRoute({
      method: 'post',
      path: '/rules',
      operationId: 'storeRule',
      summary: "Store a Sigma rule as a new immutable version under its own id",
      tag: 'rules',
      permission: 'rules:write',
      body: StoreRuleBody,
      responses: {
        201: { description: 'A new version was stored', schema: RuleVersion },
        200: { description: 'The same text was already stored; its version', schema: RuleVersion },
      },
      handler: async ({ body, auth }) => {
        const stored = await storeRuleVersion(db, auth.tenantId, body.rule, auth.tokenId);
        return {
          status: stored.created ? 201 : 200,
          headers: { Location: `/api/v1/rules/${stored.ruleId}` },
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
      path: '/rules/{id}',
      operationId: 'getRule',
      summary: 'A rule and its latest version',
      tag: 'rules',
      permission: 'rules:read',
      params: IdParams,
      responses: {
        200: { description: 'The rule', schema: Rule },
        404: { description: 'No such rule in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => {
        const [row] = await latestVersionOf.execute({ tenantId: auth.tenantId, ruleId: params.id.toLowerCase() });
        if (!row) throw notFound(`No rule ${params.id} in this tenant`);
        return {
          status: 200,
          body: {
            rule_id: row.r.ruleId,
            title: row.r.title,
            latest_version: row.r.latestVersion,
            level: row.v.level,
            status: row.v.status,
            tags: row.v.tags,
            logsource: row.v.logsource,
            content: row.v.content,
            created_at: row.r.createdAt.toISOString(),
            updated_at: row.r.updatedAt.toISOString(),
          },
        };
      },
    }),
  ];
}
