/**
 * Sigma rule engine: parse (YAML → typed model with positions), evaluate locally, correlate, lint,
 * and convert to SIEM queries. Pure library: no API, Temporal or database dependency.
 */
export { SigmaError, isSigmaError, type SigmaErrorCode, type SourcePosition } from './errors';
export type * from './model';
export { parseSigma, parseRule, normaliseDate, type ParseOptions } from './parse';
export { parseCondition, formatCondition, referencedNames, resolveSelector, tokenizeCondition, type ConditionParseOptions } from './condition';
export { MODIFIERS, getModifier, applyModifiers, type ModifierDefinition, type ModifiedItem } from './modifiers';
export { parseSigmaString, formatSigmaString, hasWildcards, ANY, ONE } from './string';
export { analyseRegex, isCatastrophic, toJsRegExp, type RegexIssue } from './regex';
export { compileRule, compileCondition, type CompileOptions, type CompiledRule, type EventMatcher, type SigmaEvent } from './evaluate';
export {
  compileRuleset,
  logsourceApplies,
  lowerCasedLogsource,
  matchEveryRule,
  type CompiledRuleset,
  type EventLogsource,
  type RejectedRule,
  type RulesetStats,
} from './ruleset';
export { fieldValue } from './field-access';
/** @deprecated the same function as `fieldValue`, under its former name. */
export { fieldValue as getFieldValue } from './field-access';
export { createCorrelationEngine, type CorrelationAlert, type CorrelationEngine, type CorrelationOptions } from './correlation';
export { capabilitiesOf, type Capabilities } from './capabilities';
export { lintText, lintDocument, lintAcrossFiles, VALIDATORS, type LintFinding, type LintOptions, type LintResult, type LintSeverity, type Validator } from './lint';
export {
  ATTACK_VERSION,
  ATTACK_TACTICS,
  ATTACK_LEGACY_TACTICS,
  ATTACK_MATRIX,
  attackIndex,
  type AttackMatrix,
  type AttackTactic,
  type AttackTechnique,
  type AttackWithdrawn,
} from './data/attack-matrix';
export {
  convertRule,
  portability,
  TARGETS,
  SqlBackend,
  SplunkBackend,
  EsqlBackend,
  LuceneBackend,
  KqlBackend,
  toDuckDbSql,
  toSplunk,
  toEsql,
  toLucene,
  toKql,
  defaultFieldExpression,
  type BackendName,
  type TargetOptions,
  type TargetKind,
  type Portability,
  type TargetPortability,
  type SqlOptions,
  type SplunkOptions,
  type EsqlOptions,
  type LuceneOptions,
  type KqlOptions,
} from './backends';
export {
  applyPipeline,
  matchLogsource,
  PIPELINES,
  ELASTIC_ECS,
  SPLUNK_CIM,
  SPLUNK_SYSMON,
  SENTINEL,
  SENTINEL_ASIM,
  TARGET_MAPPINGS,
  defaultMapping,
  parseFieldMap,
  targetMapping,
  type Pipeline,
  type LogsourceMapping,
  type TargetMapping,
} from './pipelines';
export { parseYaml, type YamlStream } from './yamltree';
export { applyFilters, filterApplies } from './filters';
export { documentItems, itemsOf, conditionNodes } from './walk';
export * from './testing';
export { ruleTextDiff } from './diff';
export { placeholdersUsed, withPlaceholderValues, type PlaceholderValues } from './placeholders';
