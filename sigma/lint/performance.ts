import type { DetectionItem } from '../model';
import { startsWithAny } from '../string';
import { documentItems, flatValues } from '../walk';
import { finding, type LintFinding, type Validator } from './types';

/** Fields that are long and present on nearly every event of their source: substring scans there are costly. */
export const HIGH_VOLUME_FIELDS = new Set(
  ['CommandLine', 'ParentCommandLine', 'ScriptBlockText', 'Payload', 'Message', 'Details', 'ContextInfo', 'Data', 'cs-uri-query', 'c-uri', 'Query'].map((f) =>
    f.toLowerCase(),
  ),
);
export const LARGE_VALUE_LIST = 50;

function leadingWildcard(item: DetectionItem): boolean {
  return flatValues(item.values).some((v) => v.kind === 'string' && startsWithAny(v.parts) && v.parts.length > 1);
}

export const performanceValidators: Validator[] = [
  {
    name: 'performance',
    run: ({ document: d }) => {
      const out: LintFinding[] = [];
      const items = documentItems(d);
      const positiveFieldItems = items.filter(({ item }) => item.field !== null && !item.negated).length;
      for (const { item } of items) {
        if (item.field === null) {
          out.push(
            finding(
              'perf_keyword_search',
              positiveFieldItems === 0 ? 'warning' : 'info',
              positiveFieldItems === 0 ? 'unbounded keyword search: every field of every event is scanned' : 'keyword search scans every field of matching events',
              item.pos,
              d.source,
            ),
          );
          continue;
        }
        if (leadingWildcard(item)) {
          const hv = HIGH_VOLUME_FIELDS.has(item.field.toLowerCase());
          if (hv && item.modifiers.includes('contains')) {
            out.push(finding('perf_contains_high_volume_field', 'info', `'contains' on high-volume field ${item.field}`, item.pos, d.source));
          } else if (!item.modifiers.includes('contains') && !item.modifiers.includes('endswith')) {
            out.push(finding('perf_leading_wildcard', 'info', `leading wildcard on ${item.field} prevents index use`, item.pos, d.source));
          }
        }
        if (flatValues(item.values).length > LARGE_VALUE_LIST) {
          out.push(finding('perf_large_value_list', 'warning', `${item.field} has ${flatValues(item.values).length} values (> ${LARGE_VALUE_LIST})`, item.pos, d.source));
        }
        if (item.values.some((v) => v.kind === 'regex') && HIGH_VOLUME_FIELDS.has(item.field.toLowerCase())) {
          out.push(finding('perf_regex_high_volume_field', 'info', `regex on high-volume field ${item.field}`, item.pos, d.source));
        }
      }
      return out;
    },
  },
];
