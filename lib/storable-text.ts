/**
 * PostgreSQL `text` and `jsonb` cannot hold U+0000, and `jsonb` refuses unpaired UTF-16 surrogates
 * (`\ud800`); node-postgres would turn either into a failed query. Input holding them is refused
 * where it arrives, with a pointer to the offending value.
 */

export type UnstorableText = { pointer: string; reason: 'contains U+0000' | 'contains an unpaired UTF-16 surrogate' };

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function problemOf(text: string): UnstorableText['reason'] | undefined {
  if (text.includes('\u0000')) return 'contains U+0000';
  if (UNPAIRED_SURROGATE.test(text)) return 'contains an unpaired UTF-16 surrogate';
  return undefined;
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The first key or value in `value` (depth first, in order) for which `test` gives a reason, with
 * its JSON pointer under `root`. Walks with an explicit stack, so however deep the input nests, it
 * cannot overflow.
 */
export function findInJson<R>(value: unknown, test: (v: unknown) => R | undefined, root = ''): { pointer: string; reason: R } | undefined {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [v, pointer] = stack.pop()!;
    const reason = test(v);
    if (reason !== undefined) return { pointer, reason };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${pointer}/${i}`]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]!;
        const keyReason = test(k);
        if (keyReason !== undefined) return { pointer: `${pointer}/${escapePointer(k)}`, reason: keyReason };
        stack.push([child, `${pointer}/${escapePointer(k)}`]);
      }
    }
  }
  return undefined;
}

/** The first string (key or value) in `value` that PostgreSQL cannot store, as a JSON pointer under `root`. */
export function findUnstorableText(value: unknown, root = ''): UnstorableText | undefined {
  return findInJson(value, (v) => (typeof v === 'string' ? problemOf(v) : undefined), root);
}

/** Text PostgreSQL can store: each U+0000 and each unpaired surrogate becomes U+FFFD. */
export function storableText(text: string): string {
  return text.replace(/\u0000/g, '\ufffd').replace(new RegExp(UNPAIRED_SURROGATE.source, 'g'), '\ufffd');
}

/**
 * A copy of a JSON value PostgreSQL can store (see storableText), or the value itself when it
 * already can. For values that reached storage before input was checked for such text.
 */
export function storableJson<T>(value: T): T {
  if (!findUnstorableText(value)) return value;
  const copy = (v: unknown): unknown => {
    if (typeof v === 'string') return storableText(v);
    if (Array.isArray(v)) return v.map(copy);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, child]) => [storableText(k), copy(child)]));
    return v;
  };
  return copy(value) as T;
}
