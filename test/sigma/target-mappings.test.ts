import { parseRule } from '../../sigma';
import { compileForTarget, lintForTarget } from '../../sigma/lint/for-target';
import { parseFieldMap, TARGET_MAPPINGS, targetMapping } from '../../sigma/pipelines';

const processRule = (fields: string) => `title: Mapped
id: 3c1d0000-0000-4000-8000-000000000001
logsource:
  category: process_creation
  product: windows
detection:
  selection:
${fields}
  condition: selection
`;
const IMAGE_AND_HASH = processRule("    Image|endswith: '\\\\evil.exe'\n    Imphash: 'abc'");

describe('target mappings', () => {
  it('offers the pySigma-equivalent data models per kind, the first the default', () => {
    expect(Object.keys(TARGET_MAPPINGS.splunk)).toEqual(['splunk-cim', 'splunk-sysmon']);
    expect(Object.keys(TARGET_MAPPINGS.elastic)).toEqual(['elastic-ecs']);
    expect(Object.keys(TARGET_MAPPINGS.sentinel)).toEqual(['sentinel-defender', 'sentinel-asim']);
    expect(targetMapping('splunk').name).toBe('splunk-cim');
    expect(() => targetMapping('splunk', 'sentinel-asim')).toThrow(/no mapping sentinel-asim/);
  });

  it('reads field overrides as Sigma=target pairs, refusing what is not one', () => {
    expect(parseFieldMap(' CommandLine=process_command_line, Image=proc.exe ,')).toEqual({ CommandLine: 'process_command_line', Image: 'proc.exe' });
    for (const bad of ['CommandLine', 'a=b=c', '=x', 'Image=a,Image=b', 'Image=has space']) expect(() => parseFieldMap(bad)).toThrow();
  });

  it('versions a mapping by its content: the same settings the same version, an override a new one', () => {
    const cim = targetMapping('splunk', 'splunk-cim');
    expect(targetMapping('splunk').version).toBe(cim.version);
    expect(cim.version).toMatch(/^[0-9a-f]{12}$/);
    const overridden = targetMapping('splunk', 'splunk-cim', { Imphash: 'process_imphash' });
    expect(overridden.name).toBe('splunk-cim+overrides');
    expect(overridden.version).not.toBe(cim.version);
    expect(targetMapping('splunk', 'splunk-cim', { Imphash: 'process_imphash' }).version).toBe(overridden.version);
  });

  it('compiles with the chosen data model: CIM names, raw Sysmon names, ASIM tables', () => {
    const rule = parseRule(processRule("    Image|endswith: '\\\\evil.exe'\n    CommandLine|contains: 'x'"));
    expect(compileForTarget(rule, 'splunk', targetMapping('splunk', 'splunk-cim').pipeline)).toContain('process_path=');
    const raw = compileForTarget(rule, 'splunk', targetMapping('splunk', 'splunk-sysmon').pipeline);
    expect(raw).toContain('source="XmlWinEventLog:Microsoft-Windows-Sysmon/Operational"');
    expect(raw).toContain('Image=');
    const asim = compileForTarget(rule, 'sentinel', targetMapping('sentinel', 'sentinel-asim').pipeline);
    expect(asim.startsWith('imProcessCreate | where')).toBe(true);
    expect(asim).toContain('TargetProcessName');
    expect(asim).toContain('TargetProcessCommandLine');
  });

  it('lints what the target’s mapping cannot place as errors for that target, and what an override places as fine', () => {
    const cim = lintForTarget(IMAGE_AND_HASH, { name: 'splunk-prod', kind: 'splunk', pipeline: targetMapping('splunk', 'splunk-cim').pipeline });
    expect(cim.findings.filter((f) => f.code === 'target_field_unmapped').map((f) => [f.severity, f.line])).toEqual([['error', 9]]);
    expect(cim.valid).toBe(false);
    const placed = lintForTarget(IMAGE_AND_HASH, {
      name: 'splunk-prod',
      kind: 'splunk',
      pipeline: targetMapping('splunk', 'splunk-cim', { Imphash: 'process_imphash' }).pipeline,
    });
    expect(placed.findings.filter((f) => f.code.startsWith('target_'))).toEqual([]);
    expect(placed.query).toContain('process_imphash=');
    // Raw Sysmon events carry Sigma's own names: every field is placed.
    const raw = lintForTarget(IMAGE_AND_HASH, { name: 'splunk-raw', kind: 'splunk', pipeline: targetMapping('splunk', 'splunk-sysmon').pipeline });
    expect(raw.findings.filter((f) => f.code.startsWith('target_'))).toEqual([]);
    // A logsource the mapping has no source for.
    const linux = lintForTarget(IMAGE_AND_HASH.replace('product: windows', 'product: linux'), { name: 'splunk-prod', kind: 'splunk' });
    expect(linux.findings.map((f) => f.code)).toContain('target_logsource_unmapped');
  });
});
