import { createTwoFilesPatch } from 'diff';

/**
 * Past this many differing lines the diff stops looking for the smallest edit (Myers' algorithm is
 * quadratic in it, and runs on the event loop): two rules that different are shown as one replaced
 * by the other, which is what such a change is.
 */
const MAX_EDIT_LENGTH = 500;

/** A unified diff between two versions of a rule's text, labelled `<rule>@v<n>` like files. */
export function ruleTextDiff(ruleId: string, from: { version: number; content: string } | null, to: { version: number; content: string }): string {
  const oldName = from ? `${ruleId}@v${from.version}` : '/dev/null';
  const newName = `${ruleId}@v${to.version}`;
  const oldText = from?.content ?? '';
  return (
    createTwoFilesPatch(oldName, newName, oldText, to.content, undefined, undefined, { context: 3, maxEditLength: MAX_EDIT_LENGTH }) ??
    wholeReplacement(oldName, newName, oldText, to.content)
  );
}

/** The unified diff that removes every line of one text and adds every line of the other. */
export function wholeReplacement(oldName: string, newName: string, oldText: string, newText: string): string {
  const side = (text: string, sign: '-' | '+') => {
    if (text === '') return { count: 0, lines: [] as string[] };
    const lines = text.split('\n');
    const noFinalNewline = lines.at(-1) !== '';
    if (!noFinalNewline) lines.pop();
    const out = lines.map((l) => sign + l);
    if (noFinalNewline) out.push('\\ No newline at end of file');
    return { count: lines.length, lines: out };
  };
  const removed = side(oldText, '-');
  const added = side(newText, '+');
  const range = (count: number) => `${count === 0 ? 0 : 1},${count}`;
  return ['='.repeat(67), `--- ${oldName}`, `+++ ${newName}`, `@@ -${range(removed.count)} +${range(added.count)} @@`, ...removed.lines, ...added.lines, ''].join('\n');
}
