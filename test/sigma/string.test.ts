import { ANY, ONE, formatSigmaString, parseSigmaString, partsToRegexSource } from '../../sigma/string';

describe('Sigma string wildcards and escaping', () => {
  it('splits * and ? into wildcards', () => {
    expect(parseSigmaString('a*b?c')).toEqual(['a', ANY, 'b', ONE, 'c']);
  });

  it('treats \\*, \\? and \\\\ as literal characters', () => {
    expect(parseSigmaString('a\\*b\\?c\\\\d')).toEqual(['a*b?c\\d']);
  });

  it('keeps a backslash in front of ordinary characters (Windows paths need no escaping)', () => {
    expect(parseSigmaString('C:\\Windows\\cmd.exe')).toEqual(['C:\\Windows\\cmd.exe']);
  });

  it('keeps a trailing lone backslash literal', () => {
    expect(parseSigmaString('abc\\')).toEqual(['abc\\']);
  });

  it('reads \\\\* as a literal backslash followed by a wildcard', () => {
    expect(parseSigmaString('a\\\\*')).toEqual(['a\\', ANY]);
  });

  it('reads \\\\\\* as a literal backslash followed by a literal star', () => {
    expect(parseSigmaString('a\\\\\\*')).toEqual(['a\\*']);
  });

  it('round-trips through formatSigmaString', () => {
    for (const s of ['a*b', 'x\\*y', '\\\\*', 'plain', '?x?']) {
      expect(parseSigmaString(formatSigmaString(parseSigmaString(s)))).toEqual(parseSigmaString(s));
    }
  });

  it('builds an anchored regex with escaped literal text', () => {
    expect(partsToRegexSource(parseSigmaString('a.b*c?'))).toBe('^a\\.b.*c.$');
  });
});
