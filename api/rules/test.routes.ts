import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { UuidParams } from '../settings/schemas';
import { getRuleTestRun, testRule } from '../../domain/rules/rule-test-runs';
import { ruleTestView } from './rule-test.view';
import { RuleTestResult, TestBody } from './schemas';

/** Rule tests: fixtures run on the target and in-process, with coverage and quality analysis; every run recorded. */
export function ruleTestRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/rules/test',
      operationId: 'testRule',
      summary: 'Run positive and negative fixtures against a stored rule on a target',
      tag: 'rules',
      permission: 'rules:read',
      scope: { kind: 'targets', in: 'body', field: 'target' },
      body: TestBody,
      responses: {
        200: { description: 'Pass/fail per test, coverage, quality (recorded; readable by id)', schema: RuleTestResult },
        404: { description: 'No such rule, version or target in this tenant', schema: ProblemSchema },
      },
      handler: async ({ body, auth }) => {
        const run = await testRule(deps, auth, { ruleId: body.rule_id, targetName: body.target, fixtures: body.fixtures, version: body.version });
        return { status: 200, headers: { Location: `/api/v1/rules/tests/${run.id}` }, body: ruleTestView(run) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/tests/{id}',
      operationId: 'getRuleTest',
      summary: 'A recorded rule test run',
      tag: 'rules',
      permission: 'rules:read',
      scope: { kind: 'object', object: 'rule-test', param: 'id' },
      params: UuidParams,
      responses: { 200: { description: 'The run', schema: RuleTestResult }, 404: { description: 'No such run in this tenant', schema: ProblemSchema } },
      handler: async ({ params, auth }) => ({ status: 200, body: ruleTestView(await getRuleTestRun(deps.database.db, auth.tenantId, params.id)) }),
    }),
  ];
}
