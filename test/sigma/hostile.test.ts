import { lintText, parseSigma } from '../../sigma';

const HEAD = 'title: x\nid: 5a7f5b4c-1a2b-4c3d-8e9f-0a1b2c3d4e5f\nlogsource:\n  product: windows\n';

describe('hostile input is reported, never thrown', () => {
  it('reports thousands of nested YAML blocks as too deep', () => {
    const text = 'title: x\ndetection:\n' + Array.from({ length: 3000 }, (_, i) => ' '.repeat(i + 1) + 'a:').join('\n') + ' 1\n';
    const result = lintText(text);
    expect(result.findings.map((f) => f.code)).toContain('yaml-too-deep');
    expect(result.counts.error).toBeGreaterThan(0);
  });

  it('reports a condition nested past the limit with its position', () => {
    const text = HEAD + 'detection:\n  sel:\n    a: 1\n  condition: ' + '('.repeat(500) + 'sel' + ')'.repeat(500) + '\n';
    const error = parseSigma(text).errors.find((e) => e.code === 'condition-too-deep');
    expect(error).toBeDefined();
    expect(error!.line).toBe(8);
  });

  it('reports a chain of thousands of nots', () => {
    const text = HEAD + 'detection:\n  sel:\n    a: 1\n  condition: ' + 'not '.repeat(20000) + 'sel\n';
    expect(parseSigma(text).errors.map((e) => e.code)).toContain('condition-too-deep');
  });

  it('still accepts reasonable nesting', () => {
    const text = HEAD + 'detection:\n  sel:\n    a: 1\n  condition: ' + '('.repeat(20) + 'not sel' + ')'.repeat(20) + '\n';
    expect(parseSigma(text).errors).toEqual([]);
  });
});
