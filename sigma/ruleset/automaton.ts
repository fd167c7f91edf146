/**
 * Aho–Corasick over UTF-16 code units, compiled to a dense transition table on a compressed
 * alphabet (each code unit that occurs in some pattern gets a column, every other one shares
 * column 0, from which only the root is reachable). One pass over a text reports every pattern
 * occurrence: `contains` patterns anywhere, `prefix` ones only ending at their own length,
 * `suffix` ones only ending at the end of the text.
 */

export type PatternKind = 'prefix' | 'suffix' | 'contains';

export interface Pattern {
  readonly text: string;
  readonly kind: PatternKind;
}

const CONTAINS = 0;
const PREFIX = 1;
const SUFFIX = 2;

export class Automaton {
  private readonly ascii = new Uint16Array(128);
  private readonly other = new Map<number, number>();
  private readonly width: number;
  private readonly delta: Int32Array;
  /** Per state: ids of the patterns ending there (its own and its fail chain's), or null. */
  private readonly outputs: (Int32Array | null)[];
  private readonly kinds: Uint8Array;
  private readonly lengths: Int32Array;

  constructor(patterns: readonly Pattern[]) {
    let columns = 1;
    for (const p of patterns) {
      for (let i = 0; i < p.text.length; i++) {
        const c = p.text.charCodeAt(i);
        if (c < 128) {
          if (this.ascii[c] === 0) this.ascii[c] = columns++;
        } else if (!this.other.has(c)) this.other.set(c, columns++);
      }
    }
    this.width = columns;
    this.kinds = Uint8Array.from(patterns, (p) => (p.kind === 'prefix' ? PREFIX : p.kind === 'suffix' ? SUFFIX : CONTAINS));
    this.lengths = Int32Array.from(patterns, (p) => p.text.length);

    // Trie.
    const children: Map<number, number>[] = [new Map()];
    const own: number[][] = [[]];
    patterns.forEach((p, id) => {
      let s = 0;
      for (let i = 0; i < p.text.length; i++) {
        const col = this.column(p.text.charCodeAt(i));
        let next = children[s]!.get(col);
        if (next === undefined) {
          next = children.length;
          children.push(new Map());
          own.push([]);
          children[s]!.set(col, next);
        }
        s = next;
      }
      own[s]!.push(id);
    });

    // Breadth-first: fail links, then the full transition table and the merged outputs.
    const states = children.length;
    const delta = new Int32Array(states * columns);
    const fail = new Int32Array(states);
    const merged: number[][] = own.map((o) => [...o]);
    const queue: number[] = [];
    for (const [col, next] of children[0]!) {
      delta[col] = next;
      queue.push(next);
    }
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      const f = fail[s]!;
      merged[s]!.push(...merged[f]!);
      for (let col = 0; col < columns; col++) {
        const next = children[s]!.get(col);
        if (next === undefined) delta[s * columns + col] = delta[f * columns + col]!;
        else {
          delta[s * columns + col] = next;
          fail[next] = delta[f * columns + col]!;
          queue.push(next);
        }
      }
    }
    this.delta = delta;
    this.outputs = merged.map((m) => (m.length === 0 ? null : Int32Array.from(m)));
  }

  private column(code: number): number {
    return code < 128 ? this.ascii[code]! : (this.other.get(code) ?? 0);
  }

  /** Calls `found` with the id of every pattern occurring in `text` (an id may be reported twice). */
  scan(text: string, found: (id: number) => void): void {
    const { ascii, other, width, delta, outputs, kinds, lengths } = this;
    const n = text.length;
    let s = 0;
    for (let i = 0; i < n; i++) {
      const code = text.charCodeAt(i);
      s = delta[s * width + (code < 128 ? ascii[code]! : (other.get(code) ?? 0))]!;
      const out = outputs[s];
      if (out === null || out === undefined) continue;
      for (let k = 0; k < out.length; k++) {
        const id = out[k]!;
        const kind = kinds[id];
        if (kind === CONTAINS || (kind === PREFIX ? i + 1 === lengths[id] : i === n - 1)) found(id);
      }
    }
  }
}
