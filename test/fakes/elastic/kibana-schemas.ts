/**
 * Request schemas of Kibana's detection engine rules API (API version 2023-10-31), written as zod
 * schemas from Elastic's OpenAPI source in elastic/kibana (reference only; nothing copied):
 *
 * - x-pack/solutions/security/plugins/security_solution/common/api/detection_engine/model/rule_schema/rule_schemas.schema.yaml
 *   (BaseRequiredFields, BaseOptionalFields, BaseDefaultableFields, SharedCreateProps,
 *   SharedUpdateProps, SharedPatchProps, EsqlRule*Props, QueryRule*Props)
 * - …/model/rule_schema/common_attributes.schema.yaml (RuleName, RuleDescription minLength 1;
 *   RiskScore integer 0–100; Severity enum low|medium|high|critical; RuleVersion integer ≥ 1;
 *   MaxSignals integer ≥ 1; Threat, ThreatTactic, ThreatTechnique, ThreatSubtechnique with their
 *   required id/name/reference; RuleTagArray; KqlQueryLanguage kuery|lucene)
 * - …/rule_management/crud/{create,update,patch,read,delete}_rule/*_route.schema.yaml and
 *   …/rule_management/find_rules/find_rules_route.schema.yaml (query parameters, FindRulesSortField)
 *
 * Only the `esql` and `query` rule types are modelled (the other types are refused as this fake's
 * limit, by name). Kibana drops body keys its schemas do not name; this fake refuses them instead,
 * naming them, so that a request departing from the documented API is seen in tests.
 */
import { z } from 'zod';

const RuleName = z.string().min(1);
const RuleDescription = z.string().min(1);
const RiskScore = z.number().int().min(0).max(100);
const Severity = z.enum(['low', 'medium', 'high', 'critical']);
const ThreatSubtechnique = z.strictObject({ id: z.string(), name: z.string(), reference: z.string() });
const ThreatTechnique = z.strictObject({ id: z.string(), name: z.string(), reference: z.string(), subtechnique: z.array(ThreatSubtechnique).optional() });
const ThreatTactic = z.strictObject({ id: z.string(), name: z.string(), reference: z.string() });
const Threat = z.strictObject({ framework: z.string(), tactic: ThreatTactic, technique: z.array(ThreatTechnique).optional() });
const RiskScoreMapping = z.array(z.strictObject({ field: z.string(), operator: z.literal('equals'), value: z.string(), risk_score: RiskScore.optional() }));
const SeverityMapping = z.array(z.strictObject({ field: z.string(), operator: z.literal('equals'), severity: Severity, value: z.string() }));
const RequiredFieldInput = z.strictObject({ name: z.string().min(1), type: z.string().min(1) });
const RelatedIntegration = z.strictObject({ package: z.string().min(1), version: z.string().min(1), integration: z.string().min(1).optional() });
const AlertSuppression = z.object({ group_by: z.array(z.string()).min(1).max(3) }).passthrough();

const baseRequired = { name: RuleName, description: RuleDescription, risk_score: RiskScore, severity: Severity };
const baseOptional = {
  rule_name_override: z.string().optional(),
  timestamp_override: z.string().optional(),
  timestamp_override_fallback_disabled: z.boolean().optional(),
  timeline_id: z.string().optional(),
  timeline_title: z.string().optional(),
  outcome: z.enum(['exactMatch', 'aliasMatch', 'conflict']).optional(),
  alias_target_id: z.string().optional(),
  alias_purpose: z.enum(['savedObjectConversion', 'savedObjectImport']).optional(),
  license: z.string().optional(),
  note: z.string().optional(),
  building_block_type: z.string().optional(),
  output_index: z.string().optional(),
  namespace: z.string().optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
  investigation_fields: z.object({ field_names: z.array(z.string()).min(1) }).optional(),
  throttle: z.string().optional(),
  response_actions: z.array(z.unknown()).optional(),
};
const baseDefaultable = {
  version: z.number().int().min(1).optional(),
  tags: z.array(z.string()).optional(),
  enabled: z.boolean().optional(),
  risk_score_mapping: RiskScoreMapping.optional(),
  severity_mapping: SeverityMapping.optional(),
  interval: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  actions: z.array(z.unknown()).optional(),
  exceptions_list: z.array(z.unknown()).optional(),
  author: z.array(z.string()).optional(),
  false_positives: z.array(z.string()).optional(),
  references: z.array(z.string()).optional(),
  max_signals: z.number().int().min(1).optional(),
  threat: z.array(Threat).optional(),
  setup: z.string().optional(),
  related_integrations: z.array(RelatedIntegration).optional(),
  required_fields: z.array(RequiredFieldInput).optional(),
};

const esqlFields = { type: z.literal('esql'), language: z.literal('esql'), query: z.string(), alert_suppression: AlertSuppression.optional() };
const queryFields = {
  type: z.literal('query'),
  index: z.array(z.string()).optional(),
  data_view_id: z.string().optional(),
  filters: z.array(z.unknown()).optional(),
  saved_id: z.string().optional(),
  alert_suppression: AlertSuppression.optional(),
  query: z.string().optional(),
  language: z.enum(['kuery', 'lucene']).optional(),
};
const UUID = z.string().uuid();

/** POST /api/detection_engine/rules (RuleCreateProps). */
export const RuleCreateProps = z.discriminatedUnion('type', [
  z.strictObject({ ...baseRequired, ...baseOptional, ...baseDefaultable, rule_id: z.string().optional(), ...esqlFields }),
  z.strictObject({ ...baseRequired, ...baseOptional, ...baseDefaultable, rule_id: z.string().optional(), ...queryFields }),
]);

/** PUT /api/detection_engine/rules (RuleUpdateProps): the whole rule, named by `id` or `rule_id`. */
export const RuleUpdateProps = z.discriminatedUnion('type', [
  z.strictObject({ ...baseRequired, ...baseOptional, ...baseDefaultable, id: UUID.optional(), rule_id: z.string().optional(), ...esqlFields }),
  z.strictObject({ ...baseRequired, ...baseOptional, ...baseDefaultable, id: UUID.optional(), rule_id: z.string().optional(), ...queryFields }),
]);

const partialOf = <T extends Record<string, z.ZodType>>(shape: T) =>
  Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as { [K in keyof T]: z.ZodOptional<T[K]> };

/** PATCH /api/detection_engine/rules (RulePatchProps): any fields, named by `id` or `rule_id`. */
export const RulePatchProps = z.strictObject({
  ...partialOf(baseRequired),
  ...baseOptional,
  ...baseDefaultable,
  id: UUID.optional(),
  rule_id: z.string().optional(),
  type: z.enum(['esql', 'query']).optional(),
  language: z.enum(['esql', 'kuery', 'lucene']).optional(),
  query: z.string().optional(),
  index: z.array(z.string()).optional(),
  data_view_id: z.string().optional(),
  filters: z.array(z.unknown()).optional(),
  saved_id: z.string().optional(),
  alert_suppression: AlertSuppression.optional(),
});

/** Query of GET and DELETE /api/detection_engine/rules: the rule by `id` or `rule_id`. */
export const RuleLookupQuery = z.strictObject({ id: UUID.optional(), rule_id: z.string().optional() });

/** Query of GET /api/detection_engine/rules/_find. */
export const FindRulesQuery = z.strictObject({
  fields: z.union([z.string(), z.array(z.string())]).optional(),
  filter: z.string().optional(),
  sort_field: z
    .enum([
      'created_at',
      'createdAt',
      'enabled',
      'execution_summary.last_execution.date',
      'execution_summary.last_execution.metrics.execution_gap_duration_s',
      'execution_summary.last_execution.metrics.total_indexing_duration_ms',
      'execution_summary.last_execution.metrics.total_search_duration_ms',
      'execution_summary.last_execution.status',
      'name',
      'risk_score',
      'riskScore',
      'severity',
      'updated_at',
      'updatedAt',
    ])
    .optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
  page: z.coerce.number().int().min(1).optional(),
  per_page: z.coerce.number().int().min(0).optional(),
});

/** zod issues as Kibana's request validation words them: `[request body]: <path>: <message>`. */
export function describeIssues(where: string, error: z.ZodError): string {
  return `[${where}]: ${error.issues
    .map((i) => {
      const path = i.path.join('.');
      const keys = i.code === 'unrecognized_keys' ? ` (${i.keys.join(', ')})` : '';
      return `${path ? `${path}: ` : ''}${i.message}${keys}`;
    })
    .join(', ')}`;
}
