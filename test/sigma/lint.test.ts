import { readFileSync } from 'fs';
import { lintAcrossFiles, lintText, VALIDATORS } from '../../sigma/lint';
import { corpusFiles, corpusRelative } from './support/corpus';
import { ruleText } from './support/rules';

const codes = (text: string, source?: string): string[] => lintText(text, source !== undefined ? { source } : {}).findings.map((f) => f.code);
const full = (detection: string, extra = '') =>
  ruleText(
    detection,
    `author: Test\ndate: 2024-01-01\ndescription: A description long enough for the linter\ntags:\n    - attack.execution\n    - attack.t1059.001\n${extra}`,
  );

describe('lint: clean rule', () => {
  it('reports nothing for a well-formed rule', () => {
    expect(lintText(full("    selection:\n        Image|endswith: '\\\\whoami.exe'\n    condition: selection")).findings).toEqual([]);
  });
  it('registers validators in one list', () => {
    expect(VALIDATORS.length).toBeGreaterThan(20);
  });
});

describe('lint: errors from parsing', () => {
  it.each([
    ['yaml-syntax', 'title: [x\n'],
    ['yaml-duplicate-key', full('    sel:\n        a: 1\n        a: 2\n    condition: sel')],
    ['modifier-unknown', full('    sel:\n        a|contians: 1\n    condition: sel')],
    ['condition-syntax', full('    sel:\n        a: 1\n    condition: sel and')],
    ['condition-undefined-identifier', full('    sel:\n        a: 1\n    condition: other')],
    ['attribute-missing', 'title: x\ndetection:\n    sel:\n        a: 1\n    condition: sel\n'],
    ['attribute-invalid', full('    sel:\n        a: 1\n    condition: sel').replace(/^id: .*$/m, 'id: 1234')],
    ['regex-invalid', full("    sel:\n        a|re: '(unclosed'\n    condition: sel")],
  ])('%s is an error finding with a position', (code, text) => {
    const f = lintText(text).findings.find((x) => x.code === code);
    expect(f).toMatchObject({ severity: 'error' });
    expect(f!.line).toBeGreaterThan(0);
  });
});

describe('lint: validators', () => {
  const det = (d: string) => codes(full(d));
  it('dangling_detection: unreferenced selection', () => {
    expect(det('    sel:\n        a: 1\n    unused:\n        b: 1\n    condition: sel')).toContain('dangling_detection');
  });
  it('all_of_them_condition and them_condition_with_single_detection', () => {
    expect(det('    sel:\n        a: 1\n    sel2:\n        b: 1\n    condition: all of them')).toContain('all_of_them_condition');
    expect(det('    sel:\n        a: 1\n    condition: 1 of them')).toContain('them_condition_with_single_detection');
  });
  it('invalid_modifier_combinations', () => {
    expect(det("    sel:\n        a|all: ['x', 'y']\n    condition: sel")).toContain('invalid_modifier_combinations');
    expect(det("    sel:\n        a|base64offset: 'x'\n    condition: sel")).toContain('invalid_modifier_combinations');
    expect(det("    sel:\n        a|contains|contains: 'x'\n    condition: sel")).toContain('invalid_modifier_combinations');
    expect(det("    sel:\n        a|contains|all: 'x'\n    condition: sel")).toContain('sigmahq_invalid_all_modifier');
  });
  it('regexes: catastrophic backtracking is an error, lookarounds a warning', () => {
    const text = full("    sel:\n        a|re: '(a+)+$'\n    condition: sel");
    expect(lintText(text).findings.find((f) => f.code === 'regex_catastrophic_backtracking')).toMatchObject({ severity: 'error', line: 9 });
    expect(det("    sel:\n        a|re: 'x(?=y)'\n    condition: sel")).toContain('sigmahq_unsupported_regex_group_construct');
  });
  it('value checks: double wildcard, quoted number, control character, escaped wildcard, plain wildcards', () => {
    expect(det("    sel:\n        a: 'x**y'\n    condition: sel")).toContain('double_wildcard');
    expect(det("    sel:\n        a: '4688'\n    condition: sel")).toContain('number_as_string');
    expect(det('    sel:\n        a: "x\\ty"\n    condition: sel')).toContain('control_character');
    expect(det("    sel:\n        a: 'x\\*y'\n    condition: sel")).toContain('escaped_wildcard');
    expect(det("    sel:\n        a: '*cmd.exe'\n    condition: sel")).toContain('wildcards_instead_of_modifiers');
    expect(det("    sel:\n        a: ['x', 'X']\n    condition: sel")).toContain('sigmahq_field_duplicate_value');
  });
  it('metadata: missing fields, date order, misspelled attributes', () => {
    const bare = ruleText('    sel:\n        a: 1\n    condition: sel')
      .replace(/^id: .*\n/m, '')
      .replace('status: test\n', '');
    expect(codes(bare)).toEqual(expect.arrayContaining(['identifier_existence', 'sigmahq_status_existence', 'sigmahq_author_existence', 'sigmahq_date_existence']));
    expect(codes(full('    sel:\n        a: 1\n    condition: sel', 'modified: 2023-01-01\n'))).toContain('sigmahq_modified_date_order');
    expect(codes(full('    sel:\n        a: 1\n    condition: sel', 'realted: x\n'))).toContain('custom_attributes');
    expect(codes(full('    sel:\n        a: 1\n    condition: sel', 'date_x: 1\n'))).not.toContain('custom_attributes');
  });
  it('SigmaHQ field checks: EventID with a category, localised user names, hash format', () => {
    expect(det('    sel:\n        EventID: 1\n    condition: sel')).toContain('sigmahq_category_event_id');
    expect(det("    sel:\n        User: 'NT AUTHORITY\\SYSTEM'\n    condition: sel")).toContain('sigmahq_field_user');
    expect(det("    sel:\n        Hashes|contains: 'MD5=ABC'\n    condition: sel")).not.toContain('sigmahq_invalid_hash_kv');
    expect(det("    sel:\n        Hashes|contains: 'ABCDEF'\n    condition: sel")).toContain('sigmahq_invalid_hash_kv');
  });
  it('reference links: branch links and ATT&CK links', () => {
    const text = full(
      '    sel:\n        a: 1\n    condition: sel',
      'references:\n    - https://github.com/a/b/blob/main/x.ps1\n    - https://attack.mitre.org/techniques/T1059/\n',
    );
    expect(codes(text)).toEqual(expect.arrayContaining(['sigmahq_github_link', 'sigmahq_mitre_link']));
  });
  it('logsource: unknown keys and specific-instead-of-generic', () => {
    expect(codes(full('    sel:\n        a: 1\n    condition: sel').replace('    product: windows', '    product: windows\n    colour: red'))).toContain(
      'fieldname_logsource',
    );
    const sysmon = full('    sel:\n        EventID: 1\n    condition: sel').replace(
      '    category: process_creation\n    product: windows',
      '    product: windows\n    service: sysmon',
    );
    expect(codes(sysmon)).toContain('specific_instead_of_generic_logsource');
  });
  it('filename checks use the source name', () => {
    const text = full('    sel:\n        a: 1\n    condition: sel');
    expect(codes(text, 'rules/x.yml')).toContain('filename_length');
    expect(codes(text, 'rules/Proc_Creation_Bad.yml')).toContain('sigmahq_filename_convention');
  });
});

describe('lint: tags (offline ATT&CK data)', () => {
  const tagged = (...tags: string[]) =>
    codes(
      ruleText(
        '    sel:\n        a: 1\n    condition: sel',
        `author: A\ndate: 2024-01-01\ndescription: Long enough description\ntags:\n${tags.map((t) => `    - ${t}`).join('\n')}\n`,
      ),
    );
  it('accepts current tactics including attack.stealth and defense-impairment', () => {
    expect(tagged('attack.stealth', 'attack.defense-impairment', 'attack.t1059', 'attack.g0016', 'attack.s0002')).toEqual([]);
  });
  it('flags unknown techniques and tactics', () => {
    expect(tagged('attack.execution', 'attack.t9999')).toContain('attacktag');
    expect(tagged('attack.privilege_escalation')).toContain('attacktag');
  });
  it('flags tag format, namespace and namespace values', () => {
    expect(tagged('Attack.Execution')).toContain('tag_format');
    expect(tagged('foo.bar')).toContain('namespace_tag');
    expect(tagged('cve.2021-x')).toContain('cvetag');
    expect(tagged('tlp.purple')).toContain('tlptag');
    expect(tagged('detection.hunting')).toContain('detectiontag');
    expect(tagged('attack.execution', 'attack.execution')).toContain('duplicate_tag');
  });
  it('points tag findings at the offending list entry', () => {
    const text = full('    sel:\n        a: 1\n    condition: sel').replace('    - attack.t1059.001', '    - attack.t1059.001\n    - attack.t9999');
    const f = lintText(text).findings.find((x) => x.code === 'attacktag');
    expect(f).toMatchObject({ line: 18, column: 7 });
  });
  it('flags techniques without tactics', () => {
    expect(tagged('attack.t1059')).toContain('sigmahq_tags_techniques_without_tactics');
  });
  it('reads the techniques of the bundled matrix (ATT&CK 19): new ones pass, withdrawn ones are flagged', () => {
    // T1685 and its sub-techniques are new in v19 (before: "newer than the bundled ATT&CK 18.1").
    expect(tagged('attack.defense-impairment', 'attack.t1685', 'attack.t1685.001', 'attack.t1686.003')).toEqual([]);
    const withdrawn = lintText(
      ruleText(
        '    sel:\n        a: 1\n    condition: sel',
        'author: A\ndate: 2024-01-01\ndescription: Long enough description\ntags:\n    - attack.stealth\n    - attack.t1562.001\n',
      ),
    );
    expect(withdrawn.findings.filter((f) => f.code === 'attacktag').map((f) => [f.severity, f.message])).toEqual([
      ['warning', 'ATT&CK technique T1562.001 is revoked or deprecated'],
    ]);
  });
  it('tells that attack.defense-evasion is the tactic v19 split, and takes it as a tactic', () => {
    const findings = lintText(
      ruleText(
        '    sel:\n        a: 1\n    condition: sel',
        'author: A\ndate: 2024-01-01\ndescription: Long enough description\ntags:\n    - attack.defense-evasion\n    - attack.t1036\n',
      ),
    ).findings;
    expect(findings.filter((f) => f.code.startsWith('attack') || f.code.startsWith('sigmahq_tags')).map((f) => [f.code, f.severity, f.message])).toEqual([
      ['attacktag', 'info', "'attack.defense-evasion' is a tactic of ATT&CK 18.1 and earlier; ATT&CK 19 split it into attack.stealth and attack.defense-impairment"],
    ]);
  });
});

describe('lint: performance hazards', () => {
  const det = (d: string) => lintText(full(d)).findings;
  it('unbounded keyword search is a warning', () => {
    expect(det("    keywords:\n        - 'evil'\n    condition: keywords").find((f) => f.code === 'perf_keyword_search')?.severity).toBe('warning');
  });
  it('contains on a high-volume field, leading wildcards, huge lists', () => {
    expect(det("    sel:\n        CommandLine|contains: 'x'\n    condition: sel").map((f) => f.code)).toContain('perf_contains_high_volume_field');
    expect(det("    sel:\n        Image|startswith: '*x\\\\y'\n    condition: sel").map((f) => f.code)).toContain('perf_leading_wildcard');
    const many = Array.from({ length: 60 }, (_, i) => `            - 'v${i}'`).join('\n');
    expect(det(`    sel:\n        Image:\n${many}\n    condition: sel`).map((f) => f.code)).toContain('perf_large_value_list');
  });
});

describe('lint: capabilities and correlations', () => {
  it('reports which features a rule uses', () => {
    const r = lintText(full("    sel:\n        a|re: 'x'\n        b|cidr: '10.0.0.0/8'\n    keywords:\n        - 'k'\n    condition: sel and not keywords"));
    expect(r.documents[0]!.capabilities).toMatchObject({ regex: true, cidr: true, keywords: true, not: true, base64: false });
  });
  it('warns on a correlation without group-by and on duplicate ids in one file', () => {
    const r = lintText(
      'title: C\nid: 9f0c8a52-3c0f-4a0e-9d7e-1b8c2f5a6d01\ncorrelation:\n    type: temporal\n    rules: [a]\n    timespan: 5m\n---\n' +
        full('    sel:\n        a: 1\n    condition: sel'),
    );
    expect(r.findings.map((f) => f.code)).toEqual(
      expect.arrayContaining(['sigmahq_correlation_group_by_existence', 'sigmahq_correlation_rules_minimum', 'identifier_uniqueness']),
    );
  });
});

describe('lint: SigmaHQ corpus', () => {
  const files = corpusFiles();
  const results = files.map((f) => ({ source: corpusRelative(f), text: readFileSync(f, 'utf8') }));

  it('has no error findings outside unsupported/', () => {
    const linted = results.map(({ source, text }) => ({ source, result: lintText(text, { source }) }));
    const withErrors = linted.filter((r) => r.result.counts.error > 0).map((r) => r.source);
    expect(withErrors.every((s) => s.startsWith('unsupported/'))).toBe(true);
    expect((linted.length - withErrors.length) / linted.length).toBeGreaterThanOrEqual(0.98);
    // The spec's schema fixtures reuse ids on purpose (rule_1 / rule_ecs); real rules must not.
    const duplicates = lintAcrossFiles(linted).filter((f) => f.code === 'identifier_uniqueness');
    expect(duplicates.filter((f) => !f.source?.startsWith('spec-examples/'))).toEqual([]);
  });
});
