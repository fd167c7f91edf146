import { applyPipeline, ELASTIC_ECS, matchLogsource, PIPELINES, SENTINEL, SPLUNK_CIM } from '../../sigma/pipelines';
import { toEsql, toKql } from '../../sigma/backends';
import { parseRule } from '../../sigma/parse';
import { rule, ruleText } from './support/rules';

describe('pipelines as data', () => {
  it('lists the bundled pipelines by name', () => {
    expect(Object.keys(PIPELINES).sort()).toEqual(['elastic-ecs', 'sentinel', 'sentinel-asim', 'splunk-cim', 'splunk-sysmon']);
  });

  it('picks the most specific logsource mapping', () => {
    const ls = { category: 'process_creation', product: 'windows', custom: {}, pos: { line: 1, column: 1 } };
    expect(matchLogsource(ls, SENTINEL)?.target).toBe('DeviceProcessEvents');
    expect(matchLogsource({ ...ls, category: 'image_load' }, SENTINEL)?.target).toBe('DeviceImageLoadEvents');
    expect(matchLogsource({ product: 'windows', service: 'security', custom: {}, pos: ls.pos }, SPLUNK_CIM)?.target).toBe('source="WinEventLog:Security"');
  });

  it('renames fields, including fieldref targets', () => {
    const r = rule('    s:\n        Image|endswith: x\n        CommandLine|fieldref: ParentCommandLine\n    condition: s');
    const { rule: mapped, target } = applyPipeline(r, ELASTIC_ECS);
    expect(target).toBe('logs-windows.sysmon_operational-*');
    expect(toEsql(mapped)).toBe('FROM logs-* | WHERE TO_LOWER(process.executable) LIKE "*x" AND TO_LOWER(process.command_line) == TO_LOWER(process.parent.command_line)');
  });

  it('uses per-table field names for Sentinel and rejects unmapped fields there', () => {
    const { rule: mapped, target } = applyPipeline(rule("    s:\n        ParentImage|endswith: '\\\\explorer.exe'\n    condition: s"), SENTINEL);
    expect(toKql(mapped, { table: target })).toBe('DeviceProcessEvents | where InitiatingProcessFolderPath endswith @"\\explorer.exe"');
    expect(() => applyPipeline(rule('    s:\n        Nope: 1\n    condition: s'), SENTINEL)).toThrow(expect.objectContaining({ code: 'backend-unsupported' }));
  });

  it('rejects a logsource with no target when the pipeline has no default', () => {
    const r = parseRule(
      ruleText('    s:\n        a: 1\n    condition: s').replace('    category: process_creation\n    product: windows', '    product: macos\n    category: process_creation'),
    );
    expect(() => applyPipeline(r, SENTINEL)).toThrow(/no target for logsource macos\/process_creation/);
  });
});
