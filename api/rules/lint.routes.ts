import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { lintRule } from '../../domain/rules/lint';
import { LintBody, LintResponse } from './schemas';

export function lintRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/rules/lint',
      operationId: 'lintRule',
      summary: 'Lint a rule for a target: findings, capability flags, portability, compiled query',
      tag: 'rules',
      permission: 'rules:read',
      scope: { kind: 'targets', in: 'body', field: 'target' },
      body: LintBody,
      responses: {
        200: { description: 'The lint result, also when the rule has errors (see valid and findings)', schema: LintResponse },
        404: { description: 'No such target in this tenant', schema: ProblemSchema },
      },
      handler: async ({ body, auth }) => ({ status: 200, body: await lintRule(deps.database, auth, body.rule, body.target) }),
    }),
  ];
}
