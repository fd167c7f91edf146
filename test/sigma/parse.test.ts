import { parseRule, parseSigma } from '../../sigma/parse';
import { SigmaError } from '../../sigma/errors';
import type { SigmaCorrelation, SigmaFilter, SigmaRule } from '../../sigma/model';
import { ruleText } from './support/rules';

const codes = (text: string): string[] => parseSigma(text).errors.map((e) => e.code);

describe('parseSigma: documents and metadata', () => {
  it('builds a typed rule with positions', () => {
    const rule = parseRule(ruleText("    selection:\n        Image|endswith: '\\cmd.exe'\n    condition: selection"));
    expect(rule).toMatchObject({ kind: 'rule', title: 'Test rule', status: 'test', level: 'medium', logsource: { category: 'process_creation', product: 'windows' } });
    const ident = rule.detection.identifiers.get('selection')!;
    expect(ident.pos).toEqual({ line: 8, column: 5 });
    expect(ident.node.kind).toBe('and');
    expect(rule.positions.title).toEqual({ line: 1, column: 1 });
    expect(rule.detection.conditions[0]!.pos).toEqual({ line: 10, column: 16 });
  });

  it('reads several --- documents: correlation plus base rules', () => {
    const text = [
      'title: Many failures',
      'correlation:',
      '    type: event_count',
      '    rules: [failed]',
      '    group-by: [User]',
      '    timespan: 10m',
      '    condition:',
      '        gte: 3',
      '---',
      ruleText('    selection:\n        EventID: 4625\n    condition: selection').replace('title: Test rule', 'title: Failed\nname: failed'),
    ].join('\n');
    const c = parseSigma(text);
    expect(c.errors).toEqual([]);
    expect(c.documents.map((d) => d.kind)).toEqual(['correlation', 'rule']);
    const corr = c.documents[0] as SigmaCorrelation;
    expect(corr).toMatchObject({ type: 'event_count', rules: ['failed'], groupBy: ['User'], timespanMs: 600_000, condition: { op: 'gte', count: 3 } });
    expect((c.documents[1] as SigmaRule).name).toBe('failed');
  });

  it('rejects duplicate keys with their position', () => {
    const text = ruleText('    selection:\n        Image: a\n        Image: b\n    condition: selection');
    const c = parseSigma(text);
    expect(c.errors[0]).toMatchObject({ code: 'yaml-duplicate-key', line: 10 });
  });

  it('reports YAML syntax errors', () => {
    expect(codes('title: [unclosed\nfoo: bar')).toContain('yaml-syntax');
  });

  it('requires title, logsource and detection', () => {
    expect(codes('id: 9f0c8a52-3c0f-4a0e-9d7e-1b8c2f5a6d01\n')).toEqual(['attribute-missing', 'attribute-missing', 'attribute-missing']);
  });

  it('validates id, status, level, dates and tags (MUST rules)', () => {
    const base = ruleText('    sel:\n        a: 1\n    condition: sel');
    expect(codes(base.replace(/^id: .*$/m, 'id: not-a-uuid'))).toEqual(['attribute-invalid']);
    expect(codes(base.replace('status: test', 'status: great'))).toEqual(['attribute-invalid']);
    expect(codes(base.replace('level: medium', 'level: severe'))).toEqual(['attribute-invalid']);
    expect(codes(`${base}\ndate: 2024-13-01`)).toEqual(['attribute-invalid']);
    expect(codes(`${base}\ntags:\n    - nodot`)).toEqual(['attribute-invalid']);
  });

  it('accepts pySigma date forms and normalises them', () => {
    const r = parseRule(`${ruleText('    sel:\n        a: 1\n    condition: sel')}\ndate: 2022/1/5\nmodified: 2023-04-14`);
    expect([r.date, r.modified]).toEqual(['2022-01-05', '2023-04-14']);
  });

  it('accepts status case-insensitively', () => {
    expect(parseRule(ruleText('    sel:\n        a: 1\n    condition: sel').replace('status: test', 'status: Stable')).status).toBe('stable');
  });

  it('keeps unknown attributes as custom attributes', () => {
    const r = parseRule(`${ruleText('    sel:\n        a: 1\n    condition: sel')}\nregression_tests_path: x/info.yml`);
    expect(r.custom).toEqual({ regression_tests_path: 'x/info.yml' });
  });

  it('needs one of category/product/service in logsource', () => {
    expect(codes(ruleText('    sel:\n        a: 1\n    condition: sel').replace(/    category: .*\n    product: .*\n/, '    definition: x\n'))).toEqual(['logsource-invalid']);
  });

  it('rejects a detection without condition or identifiers', () => {
    expect(codes(ruleText('    sel:\n        a: 1'))).toEqual(['condition-missing']);
    expect(codes(ruleText('    condition: sel'))).toContain('detection-invalid');
  });

  it('reports undefined identifiers at the right column', () => {
    const e = parseSigma(ruleText("    sel:\n        a: 1\n    condition: 'sel and other'")).errors[0]!;
    expect(e).toMatchObject({ code: 'condition-undefined-identifier', line: 10, column: 25 });
  });

  it('rejects null inside a value list', () => {
    expect(codes(ruleText('    sel:\n        a:\n            - x\n            - null\n    condition: sel'))).toEqual(['detection-value-invalid']);
  });

  it('parseRule throws the first error as a SigmaError', () => {
    expect(() => parseRule('title: x')).toThrow(SigmaError);
  });
});

describe('parseSigma: detection shapes', () => {
  it('map entries are AND-ed items, lists of maps are OR-ed', () => {
    const r = parseRule(ruleText('    sel:\n        - a: 1\n          b: 2\n        - c: 3\n    condition: sel'));
    const node = r.detection.identifiers.get('sel')!.node;
    expect(node.kind).toBe('or');
    expect(node.kind === 'or' && node.children.map((c) => c.kind)).toEqual(['and', 'and']);
  });

  it('a list of scalars is a keyword item', () => {
    const r = parseRule(ruleText("    keywords:\n        - 'evil'\n        - 'bad'\n    condition: keywords"));
    const node = r.detection.identifiers.get('keywords')!.node;
    expect(node).toMatchObject({ kind: 'item', item: { field: null, linking: 'or' } });
  });

  it("'|all' with no field is an AND keyword item", () => {
    const r = parseRule(ruleText("    keywords:\n        '|all':\n            - 'a'\n            - 'b'\n    condition: keywords"));
    const node = r.detection.identifiers.get('keywords')!.node;
    expect(node).toMatchObject({ kind: 'and', children: [{ kind: 'item', item: { field: null, linking: 'and' } }] });
  });

  it('keeps numbers, booleans, null and empty strings typed', () => {
    const r = parseRule(ruleText("    sel:\n        a: 4688\n        b: true\n        c: null\n        d: ''\n        e: []\n    condition: sel"));
    const node = r.detection.identifiers.get('sel')!.node;
    const kinds = node.kind === 'and' ? node.children.map((c) => (c.kind === 'item' ? c.item.values[0]?.kind : '')) : [];
    expect(kinds).toEqual(['number', 'boolean', 'null', 'string', 'null']);
  });

  it('records whether a raw value was quoted', () => {
    const r = parseRule(ruleText("    sel:\n        a: '4688'\n    condition: sel"));
    const node = r.detection.identifiers.get('sel')!.node;
    const first = node.kind === 'and' ? node.children[0] : undefined;
    expect(first?.kind === 'item' ? first.item.raw[0] : undefined).toMatchObject({ value: '4688', quoted: true });
  });

  it('accepts a list of conditions', () => {
    const r = parseRule(ruleText('    a:\n        x: 1\n    b:\n        y: 2\n    condition:\n        - a\n        - b'));
    expect(r.detection.conditions).toHaveLength(2);
  });
});

describe('parseSigma: correlations and filters', () => {
  const corr = (body: string): SigmaCorrelation => parseSigma(`title: C\ncorrelation:\n${body}`).documents[0] as SigmaCorrelation;
  const corrCodes = (body: string): string[] => codes(`title: C\ncorrelation:\n${body}`);

  it('defaults temporal conditions to gte: number of rules', () => {
    expect(corr('    type: temporal\n    rules: [a, b, c]\n    timespan: 5m').condition).toEqual({ op: 'gte', count: 3 });
  });

  it('accepts value_count with a field', () => {
    expect(corr('    type: value_count\n    rules: a\n    group-by: User\n    timespan: 1d\n    condition:\n        field: Host\n        gt: 2')).toMatchObject({
      rules: ['a'],
      groupBy: ['User'],
      timespanMs: 86_400_000,
      condition: { op: 'gt', count: 2, field: 'Host' },
    });
  });

  it('rejects two operators, missing field, bad timespan and unknown type', () => {
    expect(corrCodes('    type: event_count\n    rules: [a]\n    timespan: 5m\n    condition: {gt: 1, lt: 5}')).toEqual(['correlation-invalid']);
    expect(corrCodes('    type: value_count\n    rules: [a]\n    timespan: 5m\n    condition: {gt: 1}')).toEqual(['correlation-invalid']);
    expect(corrCodes('    type: event_count\n    rules: [a]\n    timespan: 5 minutes\n    condition: {gt: 1}')).toEqual(['correlation-invalid']);
    expect(corrCodes('    type: sometimes\n    rules: [a]\n    timespan: 5m\n    condition: {gt: 1}')).toEqual(['correlation-invalid']);
  });

  it('parses a boolean condition expression for temporal types', () => {
    const c = corr("    type: temporal\n    rules: [a, b, c]\n    timespan: 5m\n    condition: 'a and (b or not c)'");
    expect(c.conditionExpression?.ast.kind).toBe('and');
  });

  it('derives the rule list from a condition expression when rules are omitted', () => {
    const c = corr("    type: temporal\n    timespan: 5m\n    condition: 'recon_a and (recon_b or not recon_c)'");
    expect(c.rules).toEqual(['recon_a', 'recon_b', 'recon_c']);
    expect(c.errors).toEqual([]);
  });

  it('parses aliases', () => {
    const c = corr(
      '    type: temporal\n    rules: [a, b]\n    group-by: [ip]\n    timespan: 5m\n    aliases:\n        ip:\n            a: SourceIp\n            b: DestinationIp',
    );
    expect(c.aliases).toEqual({ ip: { a: 'SourceIp', b: 'DestinationIp' } });
  });

  it('parses a filter document', () => {
    const f = parseSigma(
      "title: F\nlogsource:\n    product: windows\nfilter:\n    rules:\n        - rule_a\n    selection:\n        User|startswith: 'adm_'\n    condition: not selection",
    ).documents[0] as SigmaFilter;
    expect(f).toMatchObject({ kind: 'filter', rules: ['rule_a'], errors: [] });
    expect([...f.detection.identifiers.keys()]).toEqual(['selection']);
  });
});
