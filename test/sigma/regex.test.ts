import { analyseRegex, isCatastrophic, toJsRegExp } from '../../sigma/regex';

const flagged = (p: string): boolean => isCatastrophic(analyseRegex(p));

describe('regex safety analysis', () => {
  it.each(['(a+)+', '(a*)*b', '(\\w+\\s?)*$', '(x+x+)+y', '(a|a)*', '(.|\\s)*x', '(?:ab|a)+c', '([\\w.]+\\.)+x', '(.+,)+'])('flags %s', (p) => {
    expect(flagged(p)).toBe(true);
  });

  it.each(['a+b+', '^[a-z]+\\.exe$', '(ab|cd)+', '(?:foo|bar)\\d{1,3}', 'a{2,5}', '\\\\(a+)', '[(]+a+', '(a+)?', '(\\d+)(\\w+)', '(\\d+\\.)+\\d+', '(\\w+-)*x', '([a-z]+/)+'])(
    'accepts %s',
    (p) => {
      expect(flagged(p)).toBe(false);
    },
  );

  it('reports lookarounds and backreferences (not portable to RE2)', () => {
    expect(analyseRegex('a(?=b)').map((i) => i.code)).toContain('lookaround');
    expect(analyseRegex('(?<!x)a').map((i) => i.code)).toContain('lookaround');
    expect(analyseRegex('(a)\\1').map((i) => i.code)).toContain('backreference');
  });

  it('turns a leading (?i) into the JS i flag', () => {
    expect(toJsRegExp('(?i)abc', { ignoreCase: false, multiline: false, dotAll: false }).test('ABC')).toBe(true);
  });
});
