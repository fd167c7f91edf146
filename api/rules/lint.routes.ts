import { z } from 'zod';
import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { ProblemSchema } from '../http/problem';
import { notFound } from '../../domain/errors';
import { checkRuleSize } from '../../domain/tenants/resource-limits';
import { lintForTarget } from '../../sigma/lint/for-target';
import type { TargetKind } from '../../sigma';

const LintBody = openapi(
  z
    .object({
      rule: z.string().min(1).describe('The rule text (Sigma YAML; several documents allowed)'),
      target: z.string().min(1).max(200).describe('Name of a target of this tenant, e.g. local'),
    })
    .strict(),
  'LintRequest',
);

const Finding = openapi(
  z.object({
    code: z.string(),
    severity: z.enum(['error', 'warning', 'info']),
    message: z.string(),
    line: z.number().int(),
    column: z.number().int(),
  }),
  'LintFinding',
);
const TargetPortability = z.object({ expressible: z.boolean(), reasons: z.array(z.string()) });
const LintResponse = openapi(
  z.object({
    valid: z.boolean().describe('true when there is no error finding'),
    findings: z.array(Finding),
    counts: z.object({ error: z.number().int(), warning: z.number().int(), info: z.number().int() }),
    capabilities: z.record(z.string(), z.boolean()).describe('Which Sigma features the rule uses'),
    portability_score: z.number().min(0).max(1).describe('Share of target kinds that can express the rule exactly'),
    portability: z.object({ local: TargetPortability, splunk: TargetPortability, elastic: TargetPortability, sentinel: TargetPortability }),
    target: z.object({ name: z.string(), kind: z.enum(['local', 'splunk', 'elastic', 'sentinel']) }),
    query: z.string().nullable().describe("The compiled query for the target (the first rule's)"),
    queries: z.array(z.object({ id: z.string().nullable(), title: z.string(), query: z.string().nullable() })),
  }),
  'LintResult',
);

export function lintRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/rules/lint',
      operationId: 'lintRule',
      summary: 'Lint a rule for a target: findings, capability flags, portability, compiled query',
      tag: 'rules',
      permission: 'rules:read',
      body: LintBody,
      responses: {
        200: { description: 'The lint result, also when the rule has errors (see valid and findings)', schema: LintResponse },
        404: { description: 'No such target in this tenant', schema: ProblemSchema },
      },
      handler: async ({ body, auth }) => {
        checkRuleSize(auth, body.rule);
        // Lint is called for every rule of every CI run: one prepared statement, no query builder.
        const [target] = await deps.database.queryPrepared<{ name: string; kind: TargetKind }>(
          'detflow_lint_target',
          'select name, kind from targets where tenant_id = $1 and name = $2',
          [auth.tenantId, body.target],
        );
        if (!target) throw notFound(`No target ${body.target} in this tenant`);
        return { status: 200, body: lintForTarget(body.rule, target) };
      },
    }),
  ];
}
