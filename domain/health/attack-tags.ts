/**
 * The ATT&CK techniques a rule names in its tags. Sigma spells them `attack.t1059` and
 * `attack.t1059.001` (case-insensitive); ATT&CK spells them `T1059` and `T1059.001`. A
 * sub-technique is counted as itself: it does not also cover its parent technique.
 */
const TECHNIQUE_TAG = /^attack\.(t\d{4}(?:\.\d{3})?)$/i;

export function techniquesOfTags(tags: readonly string[]): string[] {
  const found = new Set<string>();
  for (const tag of tags) {
    const m = TECHNIQUE_TAG.exec(tag.trim());
    if (m) found.add(m[1]!.toUpperCase());
  }
  return [...found].sort();
}
