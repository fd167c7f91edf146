import { createTwoFilesPatch } from 'diff';

/** A unified diff between two versions of a rule's text, labelled `<rule>@v<n>` like files. */
export function ruleTextDiff(ruleId: string, from: { version: number; content: string } | null, to: { version: number; content: string }): string {
  return createTwoFilesPatch(from ? `${ruleId}@v${from.version}` : '/dev/null', `${ruleId}@v${to.version}`, from?.content ?? '', to.content, undefined, undefined, { context: 3 });
}
