import { compileRule } from '../../sigma/evaluate';
import { fieldValue } from '../../sigma/field-access';
import { parseRule } from '../../sigma/parse';
import { matcher, ruleText } from './support/rules';

describe('evaluator: field matching', () => {
  it('compares whole values case-insensitively by default', () => {
    const m = matcher("    sel:\n        Image: 'C:\\Windows\\System32\\cmd.exe'\n    condition: sel");
    expect(m({ Image: 'c:\\windows\\system32\\CMD.EXE' })).toBe(true);
    expect(m({ Image: 'c:\\windows\\system32\\cmd.exe2' })).toBe(false);
  });

  it('applies * and ? wildcards only where written', () => {
    const m = matcher("    sel:\n        F: 'a?c*'\n    condition: sel");
    expect(m({ F: 'abcdef' })).toBe(true);
    expect(m({ F: 'acdef' })).toBe(false);
  });

  it('treats escaped wildcards literally', () => {
    const m = matcher("    sel:\n        F: 'a\\*b'\n    condition: sel");
    expect(m({ F: 'a*b' })).toBe(true);
    expect(m({ F: 'axb' })).toBe(false);
  });

  it('ORs value lists and ANDs map entries', () => {
    const m = matcher('    sel:\n        A: [x, y]\n        B: z\n    condition: sel');
    expect(m({ A: 'Y', B: 'z' })).toBe(true);
    expect(m({ A: 'x', B: 'q' })).toBe(false);
  });

  it('ORs lists of maps', () => {
    const m = matcher('    sel:\n        - A: 1\n        - B: 2\n    condition: sel');
    expect(m({ B: 2 })).toBe(true);
    expect(m({ A: 2 })).toBe(false);
  });

  it('compares numbers leniently with numeric strings', () => {
    const m = matcher('    sel:\n        EventID: 4688\n    condition: sel');
    expect(m({ EventID: 4688 })).toBe(true);
    expect(m({ EventID: '4688' })).toBe(true);
    expect(m({ EventID: 4689 })).toBe(false);
    expect(matcher("    sel:\n        EventID: '4688'\n    condition: sel")({ EventID: 4688 })).toBe(true);
  });

  it('matches booleans against booleans and their text', () => {
    const m = matcher('    sel:\n        Flag: true\n    condition: sel');
    expect(m({ Flag: true })).toBe(true);
    expect(m({ Flag: 'True' })).toBe(true);
    expect(m({ Flag: false })).toBe(false);
  });

  it('null means absent or null; empty string means empty', () => {
    const m = matcher('    sel:\n        F: null\n    condition: sel');
    expect(m({})).toBe(true);
    expect(m({ F: null })).toBe(true);
    expect(m({ F: '' })).toBe(false);
    const e = matcher("    sel:\n        F: ''\n    condition: sel");
    expect(e({ F: '' })).toBe(true);
    expect(e({})).toBe(false);
  });

  it('matches any element of an array-valued field', () => {
    const m = matcher("    sel:\n        Tags|contains: 'evil'\n    condition: sel");
    expect(m({ Tags: ['good', 'very evil'] })).toBe(true);
    expect(m({ Tags: ['good'] })).toBe(false);
  });

  it('looks up dotted names in nested objects, flat keys first', () => {
    const m = matcher("    sel:\n        process.command_line|contains: 'whoami'\n    condition: sel");
    expect(m({ process: { command_line: 'cmd /c whoami' } })).toBe(true);
    expect(m({ 'process.command_line': 'whoami' })).toBe(true);
    expect(fieldValue({ a: { b: { c: 1 } } }, 'a.b.c')).toBe(1);
  });

  it('applies a field mapping', () => {
    const m = matcher("    sel:\n        Image|endswith: '\\cmd.exe'\n    condition: sel", { fieldMapping: { Image: ['NewProcessName', 'Image'] } });
    expect(m({ NewProcessName: 'C:\\cmd.exe' })).toBe(true);
    expect(m({ Image: 'C:\\cmd.exe' })).toBe(true);
  });

  it('a missing field fails a positive test and satisfies its negation', () => {
    const m = matcher('    sel:\n        A: x\n    filter:\n        B: y\n    condition: sel and not filter');
    expect(m({ A: 'x' })).toBe(true);
    expect(m({ A: 'x', B: 'y' })).toBe(false);
  });
});

describe('evaluator: keywords', () => {
  it('searches every string field as a case-insensitive substring', () => {
    const m = matcher("    keywords:\n        - 'rm -rf'\n        - 'shred'\n    condition: keywords");
    expect(m({ message: 'sudo RM -RF /' })).toBe(true);
    expect(m({ nested: { deep: 'shred x' } })).toBe(true);
    expect(m({ message: 'ls' })).toBe(false);
  });

  it("requires every keyword with '|all', possibly in different fields", () => {
    const m = matcher("    keywords:\n        '|all':\n            - 'alpha'\n            - 'beta'\n    condition: keywords");
    expect(m({ a: 'alpha', b: 'beta' })).toBe(true);
    expect(m({ a: 'alpha' })).toBe(false);
  });

  it('can be limited to keywordFields', () => {
    const det = "    keywords:\n        - 'evil'\n    condition: keywords";
    const m = compileRule(parseRule(ruleText(det)), { keywordFields: ['msg'] }).match;
    expect(m({ msg: 'evil' })).toBe(true);
    expect(m({ other: 'evil' })).toBe(false);
  });
});

describe('evaluator: conditions', () => {
  const det = ['    sel_a:', '        A: 1', '    sel_b:', '        B: 1', '    filter_x:', '        X: 1', '    _hidden:', '        H: 1'].join('\n');
  const m = (cond: string) => matcher(`${det}\n    condition: ${cond}`);

  it('1 of / all of patterns', () => {
    expect(m('1 of sel_*')({ B: 1 })).toBe(true);
    expect(m('all of sel_*')({ B: 1 })).toBe(false);
    expect(m('all of sel_*')({ A: 1, B: 1 })).toBe(true);
  });

  it('1 of them / all of them skip _-identifiers', () => {
    expect(m('1 of them')({ H: 1 })).toBe(false);
    expect(m('all of them')({ A: 1, B: 1, X: 1 })).toBe(true);
    expect(m('1 of _*')({ H: 1 })).toBe(true);
  });

  it('precedence not > and > or', () => {
    const c = m('sel_a or sel_b and not filter_x');
    expect(c({ A: 1, X: 1 })).toBe(true);
    expect(c({ B: 1, X: 1 })).toBe(false);
    expect(m('(sel_a or sel_b) and not filter_x')({ A: 1, X: 1 })).toBe(false);
  });

  it('ORs a list of conditions', () => {
    const c = matcher(`${det}\n    condition:\n        - sel_a\n        - sel_b`);
    expect(c({ B: 1 })).toBe(true);
    expect(c({ X: 1 })).toBe(false);
  });

  it('reports which identifiers matched', () => {
    const compiled = compileRule(parseRule(ruleText(`${det}\n    condition: 1 of them`)));
    expect(compiled.matchedIdentifiers({ A: 1, X: 1 })).toEqual(['sel_a', 'filter_x']);
  });
});

describe('evaluator: regex guard', () => {
  it('rejects catastrophic-backtracking regexes at compile time', () => {
    expect(() => matcher("    sel:\n        F|re: '(a+)+$'\n    condition: sel")).toThrow(expect.objectContaining({ code: 'regex-unsafe' }));
    expect(() => matcher("    sel:\n        F|re: '(a|a)*b'\n    condition: sel")).toThrow(expect.objectContaining({ code: 'regex-unsafe' }));
  });

  it('can opt in to unsafe regexes, still bounding input length', () => {
    const m = matcher("    sel:\n        F|re: '(a+)+$'\n    condition: sel", { allowUnsafeRegex: true, maxRegexInput: 64 });
    const start = Date.now();
    expect(m({ F: `${'a'.repeat(5000)}!` })).toBe(true);
    expect(Date.now() - start).toBeLessThan(1000);
  });

  it('only searches the first maxRegexInput characters', () => {
    const m = matcher("    sel:\n        F|re: 'needle'\n    condition: sel", { maxRegexInput: 10 });
    expect(m({ F: 'needle' })).toBe(true);
    expect(m({ F: `${'x'.repeat(20)}needle` })).toBe(false);
  });

  it('refuses to compile a rule that has parse errors', () => {
    const rule = parseRule(ruleText('    sel:\n        a: 1\n    condition: sel'));
    const broken = { ...rule, errors: [new Error('x') as never] };
    expect(() => compileRule(broken)).toThrow();
  });
});
