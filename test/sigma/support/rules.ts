import { compileRule, type CompileOptions, type SigmaEvent } from '../../../sigma/evaluate';
import { parseRule } from '../../../sigma/parse';
import type { SigmaRule } from '../../../sigma/model';

/** Wraps a detection block (YAML, indented by 4) into a minimal valid rule. */
export function ruleText(detection: string, extra = ''): string {
  return [
    'title: Test rule',
    'id: 9f0c8a52-3c0f-4a0e-9d7e-1b8c2f5a6d01',
    'status: test',
    'logsource:',
    '    category: process_creation',
    '    product: windows',
    'detection:',
    detection.replace(/^\n/, '').replace(/\s+$/, ''),
    'level: medium',
    extra,
  ].join('\n');
}

export function rule(detection: string): SigmaRule {
  return parseRule(ruleText(detection));
}

export function matcher(detection: string, options?: CompileOptions): (event: SigmaEvent) => boolean {
  return compileRule(rule(detection), options).match;
}
