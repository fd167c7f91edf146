import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { ApiDeps } from '../context';
import { ruleTestRuns, ruleVersions, rules, targets } from '../../db/schema';
import { parseFixtures } from '../../sigma';
import { adapterFor, UnsupportedTargetKind } from '../../siem/adapters';
import { EventStoreQueryError } from '../../siem/local/duckdb';
import { checkValue } from '../../siem/local/sources';
import { findUnstorableText } from '../../lib/storable-text';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { ProblemSchema } from '../http/problem';
import { invalidRequest, notFound, resourceLimit } from '../../domain/errors';
import { limitsOf } from '../../domain/tenants/resource-limits';
import { UuidParams } from '../settings/schemas';
import { documentsOf, runRuleTests } from '../../domain/rules/rule-tests';

const TestBody = openapi(
  z
    .object({
      rule_id: z.string().min(1).max(200),
      target: z.string().min(1).max(63),
      fixtures: z
        .array(z.string())
        .min(1)
        .describe('Each a JSON document: {"name", "expect": "match"|"no_match", "event": {…}} or with "events": […] for correlation rules'),
      version: z.number().int().min(1).max(2_147_483_647).optional().describe('The rule version to test; the latest when absent'),
    })
    .strict(),
  'RuleTestRequest',
);

const Section = z.object({ total: z.number().int(), covered: z.number().int(), percent: z.number(), items: z.array(z.record(z.string(), z.unknown())) });
const RuleTestResult = openapi(
  z.object({
    id: z.string(),
    rule_id: z.string(),
    version: z.number().int(),
    target: z.string(),
    passed: z.boolean(),
    summary: z.object({ total: z.number().int(), passed: z.number().int(), failed: z.number().int() }),
    tests: z.array(
      z.object({
        name: z.string(),
        expect: z.enum(['match', 'no_match']),
        passed: z.boolean(),
        reason: z.string(),
        matched_on_target: z.boolean().nullable(),
        matched_in_evaluator: z.boolean(),
      }),
    ),
    coverage: z.object({ selections: Section, values: Section, branches: Section, overall_percent: z.number() }),
    quality: z.array(z.object({ code: z.string(), severity: z.enum(['warning', 'info']), message: z.string() }).passthrough()),
    evaluated_on: z.string(),
    created_at: z.string(),
  }),
  'RuleTestResult',
);

/** Rule tests: fixtures run on the target and in-process, with coverage and quality analysis; every run recorded. */
export function ruleTestRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'post',
      path: '/rules/test',
      operationId: 'testRule',
      summary: 'Run positive and negative fixtures against a stored rule on a target',
      tag: 'rules',
      permission: 'rules:read',
      body: TestBody,
      responses: {
        200: { description: 'Pass/fail per test, coverage, quality (recorded; readable by id)', schema: RuleTestResult },
        404: { description: 'No such rule, version or target in this tenant', schema: ProblemSchema },
      },
      handler: async ({ body, auth }) => {
        const maxFixtures = limitsOf(auth).fixturesPerTest;
        if (body.fixtures.length > maxFixtures) throw resourceLimit(`${body.fixtures.length} fixtures; the ${auth.tier} tier allows ${maxFixtures} per test`);
        const ruleId = body.rule_id.toLowerCase();
        const [rule] = await db.select().from(rules).where(and(eq(rules.tenantId, auth.tenantId), eq(rules.ruleId, ruleId)));
        if (!rule) throw notFound(`No rule ${body.rule_id} in this tenant`);
        const version = body.version ?? rule.latestVersion;
        const [stored] = await db
          .select()
          .from(ruleVersions)
          .where(and(eq(ruleVersions.tenantId, auth.tenantId), eq(ruleVersions.ruleId, ruleId), eq(ruleVersions.version, version)));
        if (!stored) throw notFound(`Rule ${ruleId} has no version ${version}`);
        const [target] = await db.select().from(targets).where(and(eq(targets.tenantId, auth.tenantId), eq(targets.name, body.target)));
        if (!target) throw notFound(`No target ${body.target} in this tenant`);
        let adapter;
        try {
          adapter = adapterFor(deps.siem, target.kind);
        } catch (err) {
          if (err instanceof UnsupportedTargetKind) throw invalidRequest(err.message, [{ pointer: '/body/target', message: 'tests run on local targets for now' }]);
          throw err;
        }
        const { main } = documentsOf(stored.content, ruleId);
        const parsed = parseFixtures(body.fixtures, { ruleKind: main.kind === 'correlation' ? 'correlation' : 'rule' });
        if ('errors' in parsed) {
          throw invalidRequest(`${parsed.errors.length} fixture(s) are not valid test documents`, parsed.errors.map((e) => ({ pointer: `/body/fixtures/${e.index}`, message: e.message })));
        }
        const unstorable = findUnstorableText(parsed.fixtures, '/body/fixtures');
        if (unstorable) throw invalidRequest('A fixture holds text the service cannot store', [{ pointer: unstorable.pointer, message: unstorable.reason }]);
        // Each event as the store will take it (a number beyond a double's range, say, is refused).
        const refused = parsed.fixtures.flatMap((f, i) => f.events.flatMap((e, j) => {
          const c = checkValue(e);
          return c.ok ? [] : [{ pointer: `/body/fixtures/${i}/events/${j}`, message: c.error }];
        }));
        if (refused.length > 0) throw invalidRequest(`${refused.length} fixture event(s) cannot be stored as events`, refused);
        let report;
        try {
          report = await runRuleTests({ text: stored.content, ruleId, version, fixtures: parsed.fixtures, adapter, targetName: target.name });
        } catch (err) {
          // The target's engine refused the compiled rule (a construct its regex dialect lacks, say):
          // the rule's problem, not the service's.
          if (err instanceof EventStoreQueryError) {
            throw invalidRequest(`The ${target.kind} target cannot run this rule: ${err.message}`, [{ pointer: '/body/rule_id', message: 'does not run on the target' }]);
          }
          throw err;
        }
        const result = { rule_id: ruleId, version, target: target.name, ...report };
        const [run] = await db
          .insert(ruleTestRuns)
          .values({ tenantId: auth.tenantId, ruleId, version, targetId: target.id, passed: report.passed, total: report.summary.total, failed: report.summary.failed, result, createdBy: auth.tokenId })
          .returning({ id: ruleTestRuns.id, createdAt: ruleTestRuns.createdAt });
        return { status: 200, headers: { Location: `/api/v1/rules/tests/${run!.id}` }, body: { id: run!.id, ...result, created_at: run!.createdAt.toISOString() } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/tests/{id}',
      operationId: 'getRuleTest',
      summary: 'A recorded rule test run',
      tag: 'rules',
      permission: 'rules:read',
      params: UuidParams,
      responses: { 200: { description: 'The run', schema: RuleTestResult }, 404: { description: 'No such run in this tenant', schema: ProblemSchema } },
      handler: async ({ params, auth }) => {
        const [run] = await db.select().from(ruleTestRuns).where(and(eq(ruleTestRuns.id, params.id), eq(ruleTestRuns.tenantId, auth.tenantId)));
        if (!run) throw notFound(`No rule test run ${params.id} in this tenant`);
        return { status: 200, body: { id: run.id, ...run.result, created_at: run.createdAt.toISOString() } };
      },
    }),
  ];
}
