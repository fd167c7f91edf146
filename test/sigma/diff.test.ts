import { createTwoFilesPatch } from 'diff';
import { ruleTextDiff, wholeReplacement } from '../../sigma/diff';

const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `    - '${prefix}${i}'`).join('\n') + '\n';

describe('ruleTextDiff', () => {
  it('gives the smallest unified diff between close versions', () => {
    const v1 = `title: a\ndetection:\n${lines('x', 20)}`;
    const v2 = v1.replace("'x7'", "'y7'");
    const diff = ruleTextDiff('r', { version: 1, content: v1 }, { version: 2, content: v2 });
    expect(diff).toBe(createTwoFilesPatch('r@v1', 'r@v2', v1, v2, undefined, undefined, { context: 3 }));
    expect(diff.split('\n').filter((l) => /^[-+][^-+]/.test(l))).toEqual(["-    - 'x7'", "+    - 'y7'"]);
  });

  it('shows versions too different to align as one replaced by the other, in linear time', () => {
    const v1 = lines('old', 15_000);
    const v2 = lines('new', 15_000);
    const diff = ruleTextDiff('r', { version: 1, content: v1 }, { version: 2, content: v2 }).split('\n');
    expect(diff.slice(1, 4)).toEqual(['--- r@v1', '+++ r@v2', '@@ -1,15000 +1,15000 @@']);
    expect(diff.filter((l) => l.startsWith('-    ')).length).toBe(15_000);
    expect(diff.filter((l) => l.startsWith('+    ')).length).toBe(15_000);
    // The fallback has the format of a computed diff: where the computed one replaces everything too, they agree.
    for (const [a, b] of [
      ['a\nb', 'c'],
      ['a\nb\n', 'c\n'],
      ['', 'c\n'],
      ['a\n', ''],
    ]) {
      expect(wholeReplacement('r@v1', 'r@v2', a!, b!)).toBe(createTwoFilesPatch('r@v1', 'r@v2', a!, b!, undefined, undefined, { context: 3 }));
    }
  });

  it('diffs a new rule against nothing', () => {
    expect(ruleTextDiff('r', null, { version: 1, content: 'a\n' })).toBe(createTwoFilesPatch('/dev/null', 'r@v1', '', 'a\n', undefined, undefined, { context: 3 }));
  });
});
