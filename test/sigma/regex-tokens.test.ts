import { regexTokens } from '../../sigma/regex-tokens';

const read = (pattern: string, literalBracketAfterCaret = true): string[] =>
  regexTokens(pattern, { literalBracketAfterCaret }).map((t) => (t.kind === 'escape' ? `\\${t.escaped}${t.inClass ? '@class' : ''}` : t.char));

describe('regexTokens', () => {
  it('reads escapes as pairs and classes as opaque, keeping their escapes', () => {
    expect(read('a\\d+[x\\]y]?')).toEqual(['a', '\\d', '+', '\\]@class', '?']);
    expect(read('x\\')).toEqual(['x', '\\']);
  });

  it('takes a ] right after [ as a member of the class', () => {
    expect(read('[]a](b)')).toEqual(['(', 'b', ')']);
  });

  it('reads [^]...] as PCRE does, or ends the class at [^] when told to', () => {
    expect(read('[^]a]b')).toEqual(['b']);
    expect(read('[^]a]b', false)).toEqual(['a', ']', 'b']);
  });

  it('gives each token its offset in the pattern', () => {
    expect(regexTokens('\\1(a)', { literalBracketAfterCaret: true }).map((t) => t.at)).toEqual([0, 2, 3, 4]);
  });
});
