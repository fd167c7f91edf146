import { z } from 'zod';
import { openapi } from '../http/zod-openapi';

export const StoreRuleBody = openapi(z.object({ rule: z.string().min(1).describe('The Sigma rule, as YAML') }).strict(), 'StoreRuleRequest');

export const StoredRuleVersion = openapi(
  z.object({
    rule_id: z.string(),
    version: z.number().int(),
    title: z.string(),
    content_sha256: z.string(),
    created: z.boolean().describe('false when this exact text was already stored as this version'),
    created_at: z.string(),
  }),
  'StoredRuleVersion',
);

const RuleSummaryShape = {
  rule_id: z.string(),
  title: z.string(),
  latest_version: z.number().int(),
  level: z.string().nullable(),
  status: z.string().nullable(),
  tags: z.array(z.string()),
  logsource: z.record(z.string(), z.string()),
  created_at: z.string(),
  updated_at: z.string(),
};

export const RuleSummary = openapi(z.object(RuleSummaryShape), 'RuleSummary');
export const Rule = openapi(z.object({ ...RuleSummaryShape, content: z.string() }), 'Rule');
export const RuleList = openapi(z.object({ items: z.array(RuleSummary), next_cursor: z.string().nullable() }), 'RuleList');

export const ListRulesQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().max(512).optional(),
    tag: z.string().min(1).max(200).optional().describe('Rules carrying this tag, e.g. attack.t1059.001'),
    level: z.enum(['informational', 'low', 'medium', 'high', 'critical']).optional(),
    status: z.enum(['stable', 'test', 'experimental', 'deprecated', 'unsupported']).optional(),
    product: z.string().min(1).max(100).optional().describe('logsource.product'),
    category: z.string().min(1).max(100).optional().describe('logsource.category'),
    service: z.string().min(1).max(100).optional().describe('logsource.service'),
  })
  .strict();

export const RuleVersionInfo = openapi(
  z.object({
    rule_id: z.string(),
    version: z.number().int(),
    title: z.string(),
    content_sha256: z.string(),
    level: z.string().nullable(),
    status: z.string().nullable(),
    created_by: z.string().nullable(),
    created_at: z.string(),
  }),
  'RuleVersionInfo',
);
export const RuleVersionList = openapi(z.object({ items: z.array(RuleVersionInfo), next_cursor: z.string().nullable() }), 'RuleVersionList');
export const RuleVersionDetail = openapi(RuleVersionInfo.extend({ content: z.string() }), 'RuleVersionDetail');

export const RuleIdParams = z.object({ id: z.string().min(1).max(200) }).strict();
export const RuleVersionParams = z.object({ id: z.string().min(1).max(200), version: z.coerce.number().int().min(1).max(2_147_483_647) }).strict();

export const DiffQuery = z
  .object({
    from: z.coerce.number().int().min(1).max(2_147_483_647).describe('The older version'),
    to: z.coerce.number().int().min(1).max(2_147_483_647).optional().describe('The newer version; the latest when absent'),
  })
  .strict();

export const RuleDiff = openapi(
  z.object({
    rule_id: z.string(),
    from: z.number().int(),
    to: z.number().int(),
    diff: z.string().describe('A unified diff from one version to the other'),
    changed: z.boolean(),
  }),
  'RuleDiff',
);

export const LintBody = openapi(
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
export const LintResponse = openapi(
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

export const TestBody = openapi(
  z
    .object({
      rule_id: z.string().min(1).max(200),
      target: z.string().min(1).max(63),
      fixtures: z.array(z.string()).min(1).describe('Each a JSON document: {"name", "expect": "match"|"no_match", "event": {…}} or with "events": […] for correlation rules'),
      version: z.number().int().min(1).max(2_147_483_647).optional().describe('The rule version to test; the latest when absent'),
    })
    .strict(),
  'RuleTestRequest',
);

const Section = z.object({ total: z.number().int(), covered: z.number().int(), percent: z.number(), items: z.array(z.record(z.string(), z.unknown())) });
export const RuleTestResult = openapi(
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
