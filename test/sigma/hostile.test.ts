import { compileRule, lintText, parseRule, parseSigma } from '../../sigma';

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
  // Shapes the static check does not flag; V8's linear-time fallback (sigma/regex-engine.ts) keeps
  // each one from stalling the process. Without it, the first takes minutes.
  it.each([
    ['(\\x61|a)+$', 'a'.repeat(40) + '!', 'aaa'],
    ['a*a*a*a*a*a*b', 'a'.repeat(5000), 'aab'],
  ])('evaluates %s over hostile input without stalling', (pattern, hostile, matching) => {
    const rule = parseRule(`${HEAD}detection:\n  sel:\n    CommandLine|re: '${pattern}'\n  condition: sel\n`);
    const compiled = compileRule(rule);
    expect(compiled.match({ CommandLine: hostile })).toBe(false);
    expect(compiled.match({ CommandLine: matching })).toBe(true);
  });

  it('refuses a group repeated a fixed number of times around an unbounded quantifier, as it does an unbounded repeat', () => {
    const lint = (pattern: string) => lintText(`${HEAD}detection:\n  sel:\n    CommandLine|re: '${pattern}'\n  condition: sel\n`);
    const errors = (patterns: string[]) => patterns.map((p) => [p, lint(p).findings.filter((f) => f.code === 'regex_catastrophic_backtracking').length]);
    expect(errors(['(a+){10}$', '(a+){3,}$', '(?:\\w+\\s*){5,8}x'])).toEqual([
      ['(a+){10}$', 1],
      ['(a+){3,}$', 1],
      ['(?:\\w+\\s*){5,8}x', 1],
    ]);
    // Small or separated repeats stay allowed.
    expect(errors(['(a+){2}$', '(\\d+\\.){3}\\d+', '(ab){10}'])).toEqual([
      ['(a+){2}$', 0],
      ['(\\d+\\.){3}\\d+', 0],
      ['(ab){10}', 0],
    ]);
  });
  it('reads YAML aliases as the anchored value, as YAML loaders do, and refuses an alias bomb', () => {
    const rule = parseRule(`${HEAD}detection:\n  sel:\n    Image|endswith: &img '\\evil.exe'\n    ParentImage|endswith: *img\n  condition: sel\n`);
    const compiled = compileRule(rule);
    expect(compiled.match({ Image: 'C:\\x\\evil.exe', ParentImage: 'C:\\y\\evil.exe' })).toBe(true);
    expect(compiled.match({ Image: 'C:\\x\\evil.exe', ParentImage: null })).toBe(false);
    const levels = Array.from({ length: 9 }, (_, i) => {
      const name = String.fromCharCode(98 + i);
      const prev = String.fromCharCode(97 + i);
      return `${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`;
    });
    const bomb = `${HEAD}a: &a ["x","x","x","x","x","x","x","x","x"]\n${levels.join('\n')}\ndetection:\n  sel:\n    Image: x\n  condition: sel\n`;
    const errors = parseSigma(bomb).errors;
    expect(errors.map((e) => e.message)).toContainEqual(expect.stringMatching(/aliases expand this document to more than 100,000 nodes/));
  });
});
