import { SigmaError } from '../errors';
import type { DetectionItem, DetectionNode, Logsource, SearchIdentifier, SigmaRule, SigmaValue } from '../model';
import type { LogsourceMapping, Pipeline } from './types';

export type { LogsourceMapping, Pipeline } from './types';
export { ELASTIC_ECS, PIPELINES, SENTINEL, SENTINEL_ASIM, SPLUNK_CIM, SPLUNK_SYSMON } from './data';
export { defaultMapping, parseFieldMap, TARGET_MAPPINGS, targetMapping, type TargetMapping } from './target-mappings';

/** The most specific logsource mapping whose every given key equals the rule's. */
export function matchLogsource(logsource: Logsource, pipeline: Pipeline): LogsourceMapping | undefined {
  let best: LogsourceMapping | undefined;
  let bestScore = -1;
  for (const m of pipeline.logsources) {
    const keys = (['category', 'product', 'service'] as const).filter((k) => m[k] !== undefined);
    if (!keys.every((k) => logsource[k] === m[k])) continue;
    if (keys.length > bestScore) {
      best = m;
      bestScore = keys.length;
    }
  }
  return best;
}

export interface PipelineResult {
  readonly rule: SigmaRule;
  /** Index/table/prefix for the rule's logsource. */
  readonly target: string;
}

/**
 * Renames every field (including fieldref targets) and resolves the logsource target. Throws
 * `backend-unsupported` when the logsource has no mapping and the pipeline has no default, or when
 * a field has no mapping where the pipeline requires one.
 */
export function applyPipeline(rule: SigmaRule, pipeline: Pipeline): PipelineResult {
  const mapping = matchLogsource(rule.logsource, pipeline);
  const target = mapping?.target ?? pipeline.defaultTarget;
  if (target === undefined) {
    const ls = [rule.logsource.product, rule.logsource.category, rule.logsource.service].filter(Boolean).join('/');
    throw new SigmaError('backend-unsupported', `${pipeline.name}: no target for logsource ${ls}`, rule.logsource.pos, rule.source);
  }
  const unmapped = mapping?.unmapped ?? pipeline.unmapped;
  const rename = (field: string, item: DetectionItem): string => {
    const mapped = mapping?.fields?.[field] ?? pipeline.fields[field];
    if (mapped !== undefined) return mapped;
    if (unmapped === 'error') throw new SigmaError('backend-unsupported', `${pipeline.name}: field '${field}' has no mapping for ${target}`, item.pos, rule.source);
    return field;
  };
  const mapValue = (v: SigmaValue, item: DetectionItem): SigmaValue => {
    if (v.kind === 'fieldref') return { ...v, field: rename(v.field, item) };
    if (v.kind === 'expansion') return { kind: 'expansion', values: v.values.map((x) => mapValue(x, item)) };
    return v;
  };
  const mapNode = (node: DetectionNode): DetectionNode => {
    if (node.kind === 'item') {
      const item = node.item;
      return { kind: 'item', item: { ...item, field: item.field === null ? null : rename(item.field, item), values: item.values.map((v) => mapValue(v, item)) } };
    }
    return { ...node, children: node.children.map(mapNode) };
  };
  const identifiers = new Map<string, SearchIdentifier>();
  for (const [name, ident] of rule.detection.identifiers) identifiers.set(name, { ...ident, node: mapNode(ident.node) });
  return { rule: { ...rule, detection: { ...rule.detection, identifiers } }, target };
}
