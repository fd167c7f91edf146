import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { decodeCursor, encodeCursor, PageQuery } from '../http/pagination';
import { ProblemSchema } from '../http/problem';
import { LatestRuleReader } from '../../domain/rules/latest-rule-reader';
import { diffVersions, getRule, getVersion, latestVersionOf, listRules, listVersions, storeRule } from '../../domain/rules/registry';
import { diffView, ruleSummaryView, ruleView, storedVersionView, versionDetailView, versionInfoView } from './rules.view';
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

/** The rule registry: immutable versions keyed by the Sigma rule's own id, per tenant. */
export function ruleRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  const latestRules = new LatestRuleReader(deps.database);

  return [
    defineRoute({
      method: 'post',
      path: '/rules',
      operationId: 'storeRule',
      summary: 'Store a Sigma rule as a new immutable version under its own id',
      tag: 'rules',
      permission: 'rules:write',
      scope: { kind: 'tenant' },
      body: StoreRuleBody,
      responses: {
        201: { description: 'A new version was stored', schema: StoredRuleVersion },
        200: { description: 'The same text was already stored; its version', schema: StoredRuleVersion },
      },
      handler: async ({ body, auth }) => {
        const stored = await storeRule(db, auth, body.rule);
        return {
          status: stored.created ? 201 : 200,
          headers: { Location: `/api/v1/rules/${stored.ruleId}/versions/${stored.version}` },
          body: storedVersionView(stored),
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
      scope: { kind: 'tenant' },
      query: ListRulesQuery,
      responses: { 200: { description: 'A page of rules, ordered by rule id', schema: RuleList } },
      handler: async ({ query, auth }) => {
        const { cursor, limit, ...filter } = query;
        const page = await listRules(db, auth.tenantId, filter, { limit, after: decodeCursor<string>(cursor, 'string') });
        return {
          status: 200,
          body: { items: page.items.map(({ rule, latest }) => ruleSummaryView(rule, latest)), next_cursor: page.next !== undefined ? encodeCursor(page.next) : null },
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
      scope: { kind: 'tenant' },
      params: RuleIdParams,
      responses: {
        200: { description: 'The rule', schema: Rule },
        404: { description: 'No such rule in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => ({ status: 200, body: ruleView(await getRule(latestRules, auth.tenantId, params.id)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/rules/{id}/versions',
      operationId: 'listRuleVersions',
      summary: "A rule's versions, newest first",
      tag: 'rules',
      permission: 'rules:read',
      scope: { kind: 'tenant' },
      params: RuleIdParams,
      query: PageQuery.strict(),
      responses: {
        200: { description: 'A page of versions', schema: RuleVersionList },
        404: { description: 'No such rule in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth }) => {
        // An unknown rule is a 404 before a malformed cursor is a 400.
        await latestVersionOf(db, auth.tenantId, params.id);
        const page = await listVersions(db, auth.tenantId, params.id, { limit: query.limit, before: decodeCursor<number>(query.cursor, 'number') });
        return { status: 200, body: { items: page.items.map(versionInfoView), next_cursor: page.next !== undefined ? encodeCursor(page.next) : null } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/{id}/versions/{version}',
      operationId: 'getRuleVersion',
      summary: 'One version of a rule, with its text',
      tag: 'rules',
      permission: 'rules:read',
      scope: { kind: 'tenant' },
      params: RuleVersionParams,
      responses: {
        200: { description: 'The version', schema: RuleVersionDetail },
        404: { description: 'No such rule or version in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, auth }) => ({ status: 200, body: versionDetailView(await getVersion(db, auth.tenantId, params.id, params.version)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/rules/{id}/diff',
      operationId: 'diffRuleVersions',
      summary: 'A unified diff between two versions of a rule',
      tag: 'rules',
      permission: 'rules:read',
      scope: { kind: 'tenant' },
      params: RuleIdParams,
      query: DiffQuery,
      responses: {
        200: { description: 'The diff', schema: RuleDiff },
        404: { description: 'No such rule or version in this tenant', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth }) => ({ status: 200, body: diffView(await diffVersions(db, auth.tenantId, params.id, query.from, query.to)) }),
    }),
  ];
}
